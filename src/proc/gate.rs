//! The start gate: every task of a run blocks on the read end of one pipe, and the driver
//! releases them all at once by closing the write end (end of file wakes every reader, forked
//! process, thread or exec'd worker alike, and stays readable). Both ends are close-on-exec;
//! an exec'd worker gets the read end as its stdin.

use anyhow::Context;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

/// One start gate.
pub struct Gate {
    read: OwnedFd,
    write: Option<OwnedFd>,
}

impl Gate {
    pub fn new() -> anyhow::Result<Gate> {
        let (read, write) =
            nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).context("cannot create a pipe")?;
        Ok(Gate {
            read,
            write: Some(write),
        })
    }

    /// The end the tasks wait on.
    pub fn read_end(&self) -> BorrowedFd<'_> {
        self.read.as_fd()
    }

    /// In a forked child: closes the child's copy of the write end (else the gate could never
    /// open for it). Only raw `close`, so it is safe right after fork.
    pub fn close_write_in_child(&self) {
        if let Some(w) = &self.write {
            // SAFETY: closing this process's copy of a descriptor; the parent keeps its own.
            unsafe { libc::close(w.as_raw_fd()) };
        }
    }

    /// In the driver: releases every task.
    pub fn open(&mut self) {
        self.write = None;
    }

    /// In the driver, once the tasks hold their copies: drops the driver's read end.
    pub fn into_opener(self) -> GateOpener {
        GateOpener { write: self.write }
    }
}

/// The driver's side of a gate whose read end it no longer needs.
pub struct GateOpener {
    write: Option<OwnedFd>,
}

impl GateOpener {
    /// Releases every task.
    pub fn open(&mut self) {
        self.write = None;
    }
}

/// Blocks until the gate at `fd` opens (end of file). Reads nothing, so it works for many
/// readers of one pipe; returns false if the pipe failed.
pub fn wait(fd: BorrowedFd<'_>) -> bool {
    let mut fds = [libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    }];
    loop {
        // SAFETY: one valid pollfd.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), 1, -1) };
        if r > 0 {
            return fds[0].revents & (libc::POLLHUP | libc::POLLIN) != 0;
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closing_the_write_end_releases_a_waiter() {
        let mut gate = Gate::new().unwrap();
        let fd = gate.read.try_clone().unwrap();
        let waiter = std::thread::spawn(move || wait(fd.as_fd()));
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!waiter.is_finished());
        gate.open();
        assert!(waiter.join().unwrap());
    }
}
