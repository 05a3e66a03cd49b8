//! How a child process ended, in words, and the names of signals: one description for every
//! harness, so `run`, `aim7`, `scale` and `model` say the same thing about the same death.

use nix::sys::wait::WaitStatus;

/// The exit status of a child whose code panicked: its panic hook (see
/// [`super::child::become_child`]) prints the message on stderr and exits with this.
pub const PANIC_EXIT: i32 = 101;

/// The name of a signal (`SIGKILL`), or `signal N` for a number without one.
pub fn signal_name(sig: i32) -> String {
    nix::sys::signal::Signal::try_from(sig)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {sig}"))
}

/// `was killed by signal 9 (SIGKILL)`, `exited with status 3`, `panicked (...)`.
pub fn describe(status: WaitStatus) -> String {
    match status {
        WaitStatus::Exited(_, PANIC_EXIT) => {
            format!("panicked (exit status {PANIC_EXIT}; its message is above)")
        }
        WaitStatus::Exited(_, code) => format!("exited with status {code}"),
        WaitStatus::Signaled(_, sig, _) => killed_by(sig as i32),
        other => format!("stopped unexpectedly ({other:?})"),
    }
}

/// The same as [`describe`] for a raw `waitpid` status word.
pub fn describe_raw(status: i32) -> String {
    if libc::WIFSIGNALED(status) {
        killed_by(libc::WTERMSIG(status))
    } else if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == PANIC_EXIT {
        describe(WaitStatus::Exited(
            nix::unistd::Pid::from_raw(0),
            PANIC_EXIT,
        ))
    } else {
        format!("exited with status {}", libc::WEXITSTATUS(status))
    }
}

fn killed_by(sig: i32) -> String {
    format!("was killed by signal {sig} ({})", signal_name(sig))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::sys::signal::Signal;
    use nix::unistd::Pid;

    #[test]
    fn deaths_are_described_alike_from_both_forms() {
        let pid = Pid::from_raw(1);
        assert_eq!(
            describe(WaitStatus::Signaled(pid, Signal::SIGKILL, false)),
            "was killed by signal 9 (SIGKILL)"
        );
        assert_eq!(describe_raw(9), "was killed by signal 9 (SIGKILL)");
        assert_eq!(describe(WaitStatus::Exited(pid, 3)), "exited with status 3");
        assert_eq!(describe_raw(3 << 8), "exited with status 3");
        assert!(describe_raw(PANIC_EXIT << 8).starts_with("panicked"));
        assert_eq!(signal_name(15), "SIGTERM");
        assert_eq!(signal_name(99), "signal 99");
    }
}
