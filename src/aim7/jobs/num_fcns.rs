//! num_fcns.c's shared tables of input values (aim7-jobs.md §1d), which AIM fills once in the
//! parent at registration and every task inherits. The tasks here are exec'd programs, so they
//! inherit nothing: the driver builds the tables once and writes them to a file in the suite
//! directory ([`write_file`]), and each task maps that file read-only before it parks
//! ([`attach`]), so the tasks share the pages (page cache) as AIM's share the parent's.
//! Without [`attach`] (unit tests), [`prepare`] builds them in the process.
//!
//! - *tiny*: the smallest positive double, found by halving 1.0 until the next half is 0.
//! - `vals[500]`: 0, 1, tiny, then each entry half the absolute difference of the two before
//!   (0.5, 0.25, ...); read in turn by `next_value()` through a position that persists across
//!   jobs and tests ([`Cursor`]).
//! - `vals10[10000]`: every 100th entry is tiny, the others `rand()/RAND_MAX × 20 − 10` from
//!   the C library's `rand()` unseeded (seed 1), as AIM's; read in turn as ARG, with POS = ARG +
//!   10.0001 and NEG = ARG − 10.0001.
//!
//! The tests keep their results alive through AIM's `compiler_fake_out` globals; here each
//! result goes through [`keep`] (`black_box`), which the optimiser must assume is observed.

use super::TaskCtx;
use std::sync::OnceLock;

/// Entries of `vals` and `vals10`.
const VALS: usize = 500;
const VALS10: usize = 10_000;
/// Bytes of the tables file: `vals` then `vals10`, native-endian f64s.
const FILE_BYTES: usize = (VALS + VALS10) * 8;

/// The tables.
pub struct Tables {
    pub vals: &'static [f64],
    pub vals10: &'static [f64],
}

static TABLES: OnceLock<Tables> = OnceLock::new();

/// The smallest positive double.
pub fn tiny() -> f64 {
    let mut t = 1.0f64;
    while t / 2.0 > 0.0 {
        t /= 2.0;
    }
    t
}

fn build() -> Tables {
    let tiny = tiny();
    let mut vals = vec![0.0f64; VALS];
    vals[1] = 1.0;
    vals[2] = tiny;
    let mut i = 3;
    while i < vals.len() {
        let v = (vals[i - 1] - vals[i - 2]).abs() / 2.0;
        if v == 0.0 {
            vals[i] = 1.0;
            if i + 1 < vals.len() {
                vals[i + 1] = tiny;
            }
            i += 2;
        } else {
            vals[i] = v;
            i += 1;
        }
    }
    // SAFETY: srand/rand are called here only, in the single-threaded driver before forking.
    unsafe { libc::srand(1) };
    let vals10: Vec<f64> = (0..VALS10)
        .map(|i| {
            if i % 100 == 0 {
                tiny
            } else {
                // SAFETY: as above.
                let r = unsafe { libc::rand() };
                f64::from(r) / f64::from(libc::RAND_MAX) * 20.0 - 10.0
            }
        })
        .collect();
    Tables {
        vals: vals.leak(),
        vals10: vals10.leak(),
    }
}

/// The tables: those [`attach`] mapped, else built here (once).
pub fn prepare() -> &'static Tables {
    TABLES.get_or_init(build)
}

/// Builds the tables and writes them to `path` for the tasks to [`attach`].
pub fn write_file(path: &std::path::Path) -> std::io::Result<()> {
    let t = prepare();
    let bytes: Vec<u8> = t
        .vals
        .iter()
        .chain(t.vals10)
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    std::fs::write(path, bytes)
}

/// In a task: maps the tables file the driver wrote (read-only, shared) and uses it as the
/// tables. The mapping stays for the task's life.
pub fn attach(path: &std::ffi::CStr) -> std::io::Result<()> {
    // SAFETY: path is NUL-terminated; the descriptor is closed once mapped.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: mapping FILE_BYTES of an open file read-only.
    let map = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            FILE_BYTES,
            libc::PROT_READ,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    let err = std::io::Error::last_os_error();
    // SAFETY: closing the descriptor opened above.
    unsafe { libc::close(fd) };
    if map == libc::MAP_FAILED {
        return Err(err);
    }
    // SAFETY: the mapping is page-aligned, FILE_BYTES long, never unmapped, and the file (in
    // the driver's private suite directory) is not written again while tasks run.
    let all = unsafe { std::slice::from_raw_parts(map.cast::<f64>(), VALS + VALS10) };
    let (vals, vals10) = all.split_at(VALS);
    TABLES
        .set(Tables { vals, vals10 })
        .map_err(|_| std::io::Error::other("the tables were already built"))
}

/// A task's read positions (AIM's `count` and `count10`), kept across jobs and tests.
#[derive(Debug, Default, Clone, Copy)]
pub struct Cursor {
    vals_at: usize,
    vals10_at: usize,
}

/// AIM's `next_value()`: the next entry of `vals`.
pub fn next_value(ctx: &mut TaskCtx) -> f64 {
    let t = prepare();
    let v = t.vals[ctx.num.vals_at % t.vals.len()];
    ctx.num.vals_at += 1;
    v
}

/// AIM's ARG: the next entry of `vals10`.
pub fn arg(ctx: &mut TaskCtx) -> f64 {
    let t = prepare();
    let v = t.vals10[ctx.num.vals10_at % t.vals10.len()];
    ctx.num.vals10_at += 1;
    v
}

/// AIM's POS: ARG + 10.0001 (always positive).
pub fn pos(ctx: &mut TaskCtx) -> f64 {
    arg(ctx) + 10.0001
}

/// AIM's NEG: ARG − 10.0001 (always negative).
pub fn neg(ctx: &mut TaskCtx) -> f64 {
    arg(ctx) - 10.0001
}

/// Stores a result where the compiler must keep it (AIM's `compiler_fake_out` globals).
pub fn keep(v: f64) {
    std::hint::black_box(v);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_have_aims_shape() {
        let t = prepare();
        assert_eq!(tiny(), f64::from_bits(1));
        assert_eq!(t.vals[..6], [0.0, 1.0, tiny(), 0.5, 0.25, 0.125]);
        assert!(t.vals.iter().all(|v| (0.0..=1.0).contains(v)));
        assert!(t.vals[499] > 0.0);
        assert_eq!(t.vals10.len(), 10_000);
        assert_eq!(t.vals10[0], tiny());
        assert_eq!(t.vals10[9900], tiny());
        assert!(t.vals10.iter().all(|v| (-10.0..=10.0).contains(v)));
        assert!(t.vals10[1] != t.vals10[2]);
    }

    #[test]
    fn the_file_holds_both_tables_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        write_file(&path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), FILE_BYTES);
        let at = |i: usize| f64::from_ne_bytes(bytes[i * 8..i * 8 + 8].try_into().unwrap());
        let t = prepare();
        assert_eq!(at(3), t.vals[3]);
        assert_eq!(at(VALS + 1), t.vals10[1]);
    }

    #[test]
    fn positions_persist_and_wrap() {
        let mut ctx = TaskCtx::new(0, Vec::new(), 1, 1);
        let first: Vec<f64> = (0..3).map(|_| next_value(&mut ctx)).collect();
        assert_eq!(first, [0.0, 1.0, tiny()]);
        for _ in 3..500 {
            next_value(&mut ctx);
        }
        assert_eq!(next_value(&mut ctx), 0.0);
        assert_eq!(arg(&mut ctx), tiny());
        assert!(pos(&mut ctx) > 0.0 && neg(&mut ctx) < 0.0);
    }
}
