//! Execl Throughput (`execl`, unixbench.md §4.3).
//!
//! After the start barrier the worker execs `patchbench-execl` (src/bin/patchbench-execl.rs),
//! which replaces itself with a fresh copy of itself again and again. Each image does what an
//! image of UnixBench's `execl.c` does: `atoi` ×3 and `sscanf("%lu")` on its arguments, one
//! added to the count, `sprintf` ×2 to format the count and the start back, `time()`, and a
//! five-argument `execl` of itself (state travels in argv). The program is `no_std` and links
//! only libc, lazily bound, with an 8 KiB bss, like UnixBench's, so one exec costs what an exec
//! of that small C program costs: the same dynamic loading, lazy symbol resolution and
//! first-use faults in libc's scanf and printf code.
//!
//! Differences from UnixBench, kept on purpose:
//! - the deadline is checked on CLOCK_MONOTONIC in nanoseconds (the duration travels in
//!   milliseconds, the start in nanoseconds) instead of whole seconds of `time()`, so a run
//!   lasts its duration rather than 1 s less to its duration, and sub-second durations work;
//!   `time()` is still called once per image, and the extra `clock_gettime` is a vDSO call
//!   (tens of nanoseconds against the ~0.3-1 ms an exec costs);
//! - the program is smaller: 8.4 KB, 16 dynamic imports, 19 relocations, against 24 KB, ~40
//!   and ~50 for UnixBench's, which includes ~600 lines of code it never calls (`big.c`):
//!   those pages are never touched and, lazily bound, its extra imports cost one relocation
//!   each at load. Measured with the C reference of benches/c/ (execl.c built as UnixBench
//!   builds it): 58.2 page faults per exec with its ballast (24 KB), 58.3 without it (18 KB),
//!   58.1 here; the previous patchbench-execl (hand-parsed arguments, three of them, BIND_NOW)
//!   took 49.1, the first-use faults of scanf/printf and lazy binding it skipped.
//!
//! Unit: lps (execs per second of wall time, from the release to the last image's report).
//! Baseline 43.0 lps.

use super::companion;
use std::path::Path;
use std::time::Duration;

/// `patchbench-execl`, next to the running worker.
pub fn program() -> std::io::Result<std::path::PathBuf> {
    companion::program("patchbench-execl")
}

/// Replaces this process with `patchbench-execl 0 DURATION_MS 0 START_NS` (count 0, started
/// now); returns only on failure.
pub fn start(program: &Path, start_ns: u64, duration: Duration) -> std::io::Error {
    let ms = (duration.as_millis() as u64).max(1);
    companion::exec(
        program,
        &["0".into(), ms.to_string(), "0".into(), start_ns.to_string()],
    )
}
