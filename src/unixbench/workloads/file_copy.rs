//! The file tests: UnixBench's `fstime -c|-r|-w` (unixbench.md §4.4–4.6 and §5). Copy:
//! `fstime`, `fsbuffer`, `fsdisk` (index tests); write only: `fstime-w`, `fsbuffer-w`,
//! `fsdisk-w`; read only: `fstime-r`, `fsbuffer-r`, `fsdisk-r` (category System, no baseline).
//!
//! In the private working directory, per copy `dummy0-<pid>` and `dummy1-<pid>`. Up to three
//! phases, each after `sync` and settle pauses: write the `maxblocks` KiB file over and over in
//! `bufsize` writes (the deadline is checked only after a whole file, so the phase overruns);
//! read it back in `bufsize` reads, rewinding at EOF; then copy it into the second file buffer
//! by buffer, rewinding both at EOF. The last phase is the score: `-w` writes for the duration;
//! `-r` writes for 2 s (to make the file), then reads for the duration; `-c` writes and reads
//! 2 s each, then copies for the duration. Bytes are counted in 256-byte units, a short
//! transfer rounded to the nearest unit; the rate is `counts / (seconds × 4)` truncated to
//! whole KiB/s, divided by the phase's own time (the divisor UnixBench uses: fstime's `TIME`).
//!
//! The 2 s phases are shortened to the test duration when it is shorter. The pauses
//! (`sync; sleep 2; sync; sleep 2` before the write and the read phase, `sync; sleep 2; sync;
//! sleep 1` before the copy) are always made, as UnixBench's program always makes them: they
//! let dirty pages drain between phases, which changes what the scored phase measures. So
//! `--quick` and `--no-settle` skip only the runner's pause before each pass; a copy test still
//! takes 11 s of pauses plus its three phases (`-w` 4 s, `-r` 8 s). The worker reports the
//! pauses it made (`PAUSES|2,2,2,2,2,1`, seconds).
//!
//! The copy buffer is a static 8 KiB array, 32-byte aligned at page offset 0x1e0, as in
//! UnixBench's gcc build of fstime (`char buf[8192]` in .bss; fstime.c's own comment reports
//! reads 50% slower with a malloc'ed buffer), not a heap allocation.
//! Unit: KBps. Baselines: 3960 (1024/2000), 1655 (256/500), 5800 (4096/8000).

use super::timer::{arm, os_error, stopped};
use std::cell::UnsafeCell;
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

/// fstime's `MAX_BUFSIZE`.
const MAX_BUFSIZE: usize = 8192;
/// Where the buffer starts within its page (UnixBench's build on x86-64 Linux, gcc 12).
const BUF_PAGE_OFFSET: usize = 0x1e0;

/// A page-aligned block whose `buf` sits at [`BUF_PAGE_OFFSET`] (a multiple of 32).
#[repr(C, align(4096))]
struct PageAligned {
    _pad: [u8; BUF_PAGE_OFFSET],
    buf: [u8; MAX_BUFSIZE],
}

/// The static copy buffer (in .bss, like fstime's).
struct StaticBuffer(UnsafeCell<PageAligned>);

// SAFETY: the worker is single-threaded and `run` is the only user, one call at a time.
unsafe impl Sync for StaticBuffer {}

static BUFFER: StaticBuffer = StaticBuffer(UnsafeCell::new(PageAligned {
    _pad: [0; BUF_PAGE_OFFSET],
    buf: [0; MAX_BUFSIZE],
}));

/// 256-byte accounting unit of fstime.
const COUNTSIZE: usize = 256;

/// Which of fstime's tests: `-w`, `-r` or `-c`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Write,
    Read,
    Copy,
}

/// Buffer size and file size (in 1 KiB blocks) of one variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub bufsize: usize,
    pub maxblocks: usize,
}

/// One timed phase: its rate and when it ran.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Phase {
    pub kbps: u64,
    /// Seconds the phase took (fstime's `TIME`).
    pub seconds: f64,
    /// Its start and end on CLOCK_MONOTONIC, in nanoseconds.
    pub window: (u64, u64),
}

/// What a file test measured: the scored (last) phase and the pauses.
#[derive(Debug, Clone, PartialEq)]
pub struct FileResult {
    /// The phase whose rate is the score.
    pub scored: Phase,
    /// The phases before it (`-r`: the write; `-c`: the write and the read).
    pub before: Vec<Phase>,
    /// The pauses made, in seconds, in order.
    pub pauses: Vec<u64>,
}

/// Counts for a transfer of `n` bytes, rounded to the nearest 256-byte unit.
pub fn counts_for(n: usize) -> u64 {
    ((n + COUNTSIZE / 2) / COUNTSIZE) as u64
}

/// KiB/s from 256-byte counts, truncated as fstime does.
pub fn kbps(counts: u64, seconds: f64) -> u64 {
    if seconds <= 0.0 {
        return 0;
    }
    (counts as f64 / (seconds * 4.0)) as u64
}

/// One second of pause; the library's own unit tests (and only they) skip the sleeping.
const PAUSE_UNIT: Duration = if cfg!(test) {
    Duration::ZERO
} else {
    Duration::from_secs(1)
};

/// `sync; sleep first; sync; sleep second`, recording the pauses.
fn settle(first: u32, second: u32, pauses: &mut Vec<u64>) {
    for secs in [first, second] {
        // SAFETY: sync has no preconditions.
        unsafe { libc::sync() };
        std::thread::sleep(PAUSE_UNIT * secs);
        pauses.push(secs.into());
    }
}

fn rewind(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: lseek on our own descriptor.
    if unsafe { libc::lseek(fd, 0, libc::SEEK_SET) } < 0 {
        return Err(os_error("lseek"));
    }
    Ok(())
}

/// Times a phase that returns its counts.
fn timed(run: impl FnOnce() -> std::io::Result<u64>) -> std::io::Result<Phase> {
    let t0 = crate::clock::monotonic_ns();
    let start = Instant::now();
    let counts = run()?;
    let seconds = start.elapsed().as_secs_f64();
    Ok(Phase {
        kbps: kbps(counts, seconds),
        seconds,
        window: (t0, crate::clock::monotonic_ns()),
    })
}

fn write_phase(fd: RawFd, buf: &[u8], g: Geometry, t: Duration) -> std::io::Result<Phase> {
    let writes = g.maxblocks * 1024 / g.bufsize;
    let per_buf = counts_for(g.bufsize);
    let mut counts = 0;
    rewind(fd)?;
    arm(t)?;
    timed(|| {
        while !stopped() {
            for _ in 0..writes {
                // SAFETY: buf holds bufsize bytes.
                let n = unsafe { libc::write(fd, buf.as_ptr().cast(), g.bufsize) };
                if n != g.bufsize as isize {
                    return Err(os_error("write"));
                }
                counts += per_buf;
            }
            rewind(fd)?;
        }
        Ok(counts)
    })
}

fn read_phase(fd: RawFd, buf: &mut [u8], g: Geometry, t: Duration) -> std::io::Result<Phase> {
    let per_buf = counts_for(g.bufsize);
    let mut counts = 0;
    rewind(fd)?;
    arm(t)?;
    timed(|| {
        while !stopped() {
            // SAFETY: buf has room for bufsize bytes.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), g.bufsize) };
            if n < 0 {
                return Err(os_error("read"));
            }
            if (n as usize) < g.bufsize {
                counts += counts_for(n as usize);
                rewind(fd)?;
            } else {
                counts += per_buf;
            }
        }
        Ok(counts)
    })
}

fn copy_phase(
    src: RawFd,
    dst: RawFd,
    buf: &mut [u8],
    g: Geometry,
    t: Duration,
) -> std::io::Result<Phase> {
    let mut counts = 0;
    rewind(src)?;
    arm(t)?;
    timed(|| {
        while !stopped() {
            // SAFETY: buf has room for bufsize bytes.
            let n = unsafe { libc::read(src, buf.as_mut_ptr().cast(), g.bufsize) };
            if n < 0 {
                return Err(os_error("read"));
            }
            if n == 0 {
                rewind(src)?;
                rewind(dst)?;
                continue;
            }
            // SAFETY: n bytes of buf were just filled.
            let w = unsafe { libc::write(dst, buf.as_ptr().cast(), n as usize) };
            if w != n {
                return Err(os_error("write"));
            }
            counts += counts_for(n as usize);
        }
        Ok(counts)
    })
}

fn open_rw(name: &std::path::Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(name)
        .map_err(|e| std::io::Error::new(e.kind(), format!("create {}: {e}", name.display())))
}

/// Runs the test's phases with its files in `dir` (fstime's `-d`); `duration` is the scored
/// phase's length.
pub fn run(
    dir: &std::path::Path,
    g: Geometry,
    mode: Mode,
    duration: Duration,
) -> std::io::Result<FileResult> {
    if g.bufsize > MAX_BUFSIZE {
        return Err(std::io::Error::other(format!(
            "buffer size {} is over fstime's {MAX_BUFSIZE}",
            g.bufsize
        )));
    }
    let pid = std::process::id();
    let (name0, name1) = (
        dir.join(format!("dummy0-{pid}")),
        dir.join(format!("dummy1-{pid}")),
    );
    let result = (|| {
        let f = open_rw(&name0)?;
        let g2 = open_rw(&name1)?;
        // SAFETY: the only reference to the static buffer while `run` runs (see StaticBuffer).
        let whole = unsafe { &mut (*BUFFER.0.get()).buf };
        let buf = &mut whole[..g.bufsize];
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (i & 0xff) as u8;
        }
        let pre = duration.min(Duration::from_secs(2));
        let mut pauses = Vec::with_capacity(6);
        let mut before = Vec::new();
        settle(2, 2, &mut pauses);
        if mode == Mode::Write {
            let scored = write_phase(f.as_raw_fd(), buf, g, duration)?;
            return Ok(FileResult {
                scored,
                before,
                pauses,
            });
        }
        before.push(write_phase(f.as_raw_fd(), buf, g, pre)?);
        settle(2, 2, &mut pauses);
        if mode == Mode::Read {
            let scored = read_phase(f.as_raw_fd(), buf, g, duration)?;
            return Ok(FileResult {
                scored,
                before,
                pauses,
            });
        }
        before.push(read_phase(f.as_raw_fd(), buf, g, pre)?);
        settle(2, 1, &mut pauses);
        let scored = copy_phase(f.as_raw_fd(), g2.as_raw_fd(), buf, g, duration)?;
        Ok(FileResult {
            scored,
            before,
            pauses,
        })
    })();
    let _ = std::fs::remove_file(&name0);
    let _ = std::fs::remove_file(&name1);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounting_matches_fstime() {
        assert_eq!(counts_for(1024), 4);
        assert_eq!(counts_for(256), 1);
        assert_eq!(counts_for(127), 0);
        assert_eq!(counts_for(128), 1);
        assert_eq!(counts_for(4096), 16);
        // 4000 counts of 256 B = 1,024,000 B = 1000 KiB in 2 s = 500 KiB/s.
        assert_eq!(kbps(4000, 2.0), 500);
        // Truncation, not rounding.
        assert_eq!(kbps(4001, 2.0), 500);
        assert_eq!(kbps(10, 0.0), 0);
    }

    /// The three modes, without the pauses' sleeping (see `PAUSE_UNIT`): which phases run, in
    /// what order, which one is scored, and that the files are gone afterwards.
    #[test]
    fn each_mode_scores_its_last_phase() {
        let dir = tempfile::tempdir().unwrap();
        let g = Geometry {
            bufsize: 256,
            maxblocks: 16,
        };
        let d = Duration::from_millis(60);
        let w = run(dir.path(), g, Mode::Write, d).unwrap();
        assert_eq!((w.before.len(), w.pauses.clone()), (0, vec![2, 2]));
        let r = run(dir.path(), g, Mode::Read, d).unwrap();
        assert_eq!((r.before.len(), r.pauses.clone()), (1, vec![2, 2, 2, 2]));
        let c = run(dir.path(), g, Mode::Copy, d).unwrap();
        assert_eq!(
            (c.before.len(), c.pauses.clone()),
            (2, vec![2, 2, 2, 2, 2, 1])
        );
        for res in [&w, &r, &c] {
            let p = res.scored;
            assert!(p.kbps > 0 && p.seconds >= 0.05, "{p:?}");
            assert!(p.window.1 > p.window.0);
            // The scored phase comes after every other one.
            assert!(res.before.iter().all(|b| b.window.1 <= p.window.0));
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn the_buffer_sits_where_unixbenchs_does() {
        // SAFETY: only the address is read, nothing is written.
        let addr = unsafe { (*BUFFER.0.get()).buf.as_ptr() } as usize;
        assert_eq!(addr % 4096, BUF_PAGE_OFFSET);
        assert_eq!(addr % 32, 0);
    }

    #[test]
    fn geometries_are_unixbench_sizes() {
        use crate::unixbench::workloads::Params;
        let of = |id: &str| match crate::unixbench::catalog::find(id).unwrap().params {
            Params::FileCopy(g, mode) => (g.bufsize, g.maxblocks * 1024, mode),
            other => panic!("{id}: {other:?}"),
        };
        for (prefix, bufsize, bytes) in [
            ("fstime", 1024, 2_048_000),
            ("fsbuffer", 256, 512_000),
            ("fsdisk", 4096, 8_192_000),
        ] {
            assert_eq!(of(prefix), (bufsize, bytes, Mode::Copy));
            assert_eq!(of(&format!("{prefix}-w")), (bufsize, bytes, Mode::Write));
            assert_eq!(of(&format!("{prefix}-r")), (bufsize, bytes, Mode::Read));
        }
    }
}
