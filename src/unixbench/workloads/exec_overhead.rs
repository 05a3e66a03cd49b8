//! Exec System Call Overhead (`sysexec`: UnixBench's `syscall 10 exec`, unixbench.md §4.11 and
//! §5), category Non-Index Benchmarks, baseline 25 lps (in `index.base` "for convenience").
//!
//! Loop: `fork()`; the child `execl("/bin/true", "/bin/true", NULL)` (and `exit(1)` if that
//! fails); the parent `waitpid`s for it (UnixBench does not look at the status). One loop = one
//! fork + exec of `/bin/true` + its exit + the wait. The loop runs in `patchbench-spawn`'s exec
//! mode (src/bin/patchbench-spawn.rs), for the reason `process_creation` gives: the cost of a
//! fork depends on the forking program, and UnixBench forks from its small libc-only `syscall`.
//! Unlike UnixBench, a child whose exec failed makes the test fail (it would otherwise count
//! failed execs); `/bin/true` missing skips the test before the run.
//!
//! Unit: lps over the copy's wall time. Baseline 25.

use super::companion;

/// Replaces this process with `patchbench-spawn SECONDS exec`, which takes over the worker's
/// protocol (READY, the gate, the result lines); returns only on failure.
pub fn start(seconds: f64) -> std::io::Error {
    match companion::program("patchbench-spawn") {
        Ok(p) => companion::exec(&p, &[format!("{seconds}"), "exec".to_string()]),
        Err(e) => e,
    }
}
