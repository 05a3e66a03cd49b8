//! What every child a harness forks does first, so none outlives its driver or reacts to the
//! driver's signals: default signal dispositions, death with the parent, a check that the
//! parent is still the one that forked it, membership of the run's process group, and a panic
//! hook that reports a panic as one line and exits with [`PANIC_EXIT`] (the build aborts on
//! panic, so `catch_unwind` would never see it).

use super::status::PANIC_EXIT;
use std::os::fd::RawFd;

/// The exit status of a child whose parent was gone before it could arm its watchdog.
pub const ORPHAN_EXIT: i32 = 4;

/// Turns a freshly forked process into a well-behaved child of `parent` in process group
/// `pgid` (0: a new group led by this child). `close` lists descriptors of the driver the
/// child must not keep (the write end of a start gate, the driver's self-pipe).
///
/// # Safety
/// Call only in a child just forked from a single-threaded process.
pub unsafe fn become_child(
    parent: libc::pid_t,
    pgid: libc::pid_t,
    close: &[RawFd],
    what: &'static str,
) {
    for sig in [
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGCHLD,
        libc::SIGPIPE,
    ] {
        libc::signal(sig, libc::SIG_DFL);
    }
    libc::prctl(
        libc::PR_SET_PDEATHSIG,
        libc::SIGKILL as libc::c_ulong,
        0,
        0,
        0,
    );
    if libc::getppid() != parent {
        // The parent died before the watchdog was armed.
        libc::_exit(ORPHAN_EXIT);
    }
    libc::setpgid(0, pgid);
    for &fd in close {
        libc::close(fd);
    }
    report_panics_as(what);
}

/// Installs a panic hook that prints `patchbench: WHAT panicked: MESSAGE at FILE:LINE` and
/// ends the process with [`PANIC_EXIT`].
pub fn report_panics_as(what: &'static str) {
    std::panic::set_hook(Box::new(move |info| {
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        crate::safe_text::eprint_line(&format!(
            "patchbench: {what} panicked: {}{place}",
            panic_message(info.payload())
        ));
        // SAFETY: ends this child at once; nothing of the driver is unwound or dropped.
        unsafe { libc::_exit(PANIC_EXIT) }
    }));
}

/// The text of a panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// Runs a child's body and leaves with `_exit`: 0 on success, 1 after printing the error.
/// Nothing of the driver (temporary directories, buffers) is dropped twice.
pub fn run_and_exit(what: &str, f: impl FnOnce() -> anyhow::Result<()>) -> ! {
    let code = match f() {
        Ok(()) => 0,
        Err(e) => {
            crate::safe_text::eprint_line(&format!("patchbench: {what} failed: {e:#}"));
            1
        }
    };
    // SAFETY: ends this child without running the driver's destructors.
    unsafe { libc::_exit(code) }
}

/// Refuses to fork from a process that has more than one thread (only async-signal-safe code
/// would be allowed in the child, and the harnesses' children run ordinary Rust).
pub fn ensure_single_threaded(who: &str) -> anyhow::Result<()> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let threads = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse::<u32>().ok())
        .unwrap_or(1);
    anyhow::ensure!(
        threads == 1,
        "internal error: {who} has {threads} threads; it must fork from one"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_child_exits_with_the_panic_status_and_is_described_as_a_panic() {
        // SAFETY: the child only installs the hook and panics; glibc keeps malloc usable
        // after fork.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            report_panics_as("test task");
            panic!("boom");
        }
        let mut status = 0;
        // SAFETY: reaping the child forked above.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFEXITED(status));
        assert_eq!(libc::WEXITSTATUS(status), crate::proc::status::PANIC_EXIT);
        assert!(crate::proc::status::describe_raw(status).starts_with("panicked"));
    }
}
