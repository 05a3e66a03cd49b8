//! Process Creation (`spawn`, unixbench.md §4.9).
//!
//! Loop: `fork()`; the child exits at once with `_exit(0)`; the parent `waitpid`s it and
//! checks the status. One loop = one fork+exit+wait cycle. The worker forking is the lean
//! `patchbench-worker` process, so the cost is that of duplicating a small process.
//! Unit: lps over the copy's wall time. Baseline 126 lps.

use super::timer::{os_error, stopped};

/// Runs the loop until the stop flag is set; returns the number of completed cycles.
pub fn run() -> std::io::Result<u64> {
    let mut loops: u64 = 0;
    while !stopped() {
        // SAFETY: the worker is single-threaded; the child only calls _exit.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(os_error(&format!("fork failed at iteration {loops}")));
        }
        if pid == 0 {
            // SAFETY: leave the child without running any of the parent's exit handlers.
            unsafe { libc::_exit(0) };
        }
        let mut status: libc::c_int = 0;
        // SAFETY: waiting for our own child.
        if unsafe { libc::waitpid(pid, &mut status, 0) } != pid {
            return Err(os_error("waitpid"));
        }
        if status != 0 {
            return Err(std::io::Error::other(format!(
                "bad wait status {status:#x}"
            )));
        }
        loops += 1;
    }
    Ok(loops)
}
