//! num_fcns.c's shared tables of input values (aim7-jobs.md §1d), which AIM fills once in the
//! parent at registration and every task inherits; the driver builds them before forking the
//! same way ([`prepare`]), so the tasks share the pages as AIM's do.
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

/// The tables.
pub struct Tables {
    pub vals: [f64; 500],
    pub vals10: Vec<f64>,
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
    let mut vals = [0.0f64; 500];
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
    let vals10 = (0..10_000)
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
    Tables { vals, vals10 }
}

/// Builds the tables (once); the driver calls this before forking.
pub fn prepare() -> &'static Tables {
    TABLES.get_or_init(build)
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
