//! What fork_test, exec_test and shell_rtns_* share: fork a child that runs a given body and
//! leaves with the libc `exit()` (atexit handlers and stdio flush, as AIM's children do), and
//! in the parent AIM's reaping loop: `wait()` until it fails with ECHILD, retrying on EINTR, so
//! two wait calls per child.

use super::Fail;

/// Forks; the child runs `body` and exits with its return value; the parent waits until
/// ECHILD and returns the raw status of the child.
pub fn fork_and_wait(body: impl FnOnce() -> i32) -> Result<i32, Fail> {
    // SAFETY: a task is single-threaded; the child runs `body` and exits without returning.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let code = body();
        // SAFETY: leaving the child as AIM's does, with the libc exit.
        unsafe { libc::exit(code) };
    }
    if pid < 0 {
        return Err(Fail::last("fork"));
    }
    wait_until_echild()
}

/// AIM's `while (wait(&status) != -1 || errno == EINTR)` loop; returns the last status.
pub fn wait_until_echild() -> Result<i32, Fail> {
    let mut last = 0;
    loop {
        let mut status = 0;
        // SAFETY: waiting for our own children.
        let r = unsafe { libc::wait(&mut status) };
        if r > 0 {
            last = status;
            continue;
        }
        let fail = Fail::last("wait");
        match fail.errno {
            libc::EINTR => continue,
            libc::ECHILD => return Ok(last),
            _ => return Err(fail),
        }
    }
}

/// Whether a raw wait status is a clean exit 0.
pub fn succeeded(status: i32) -> bool {
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}
