//! Catching SIGINT, SIGTERM and SIGHUP without threads: the handler records the signal and
//! writes a byte to a self-pipe, which the runner polls together with the workers' output, so
//! it can kill every worker, remove its files and exit 128+N within a poll interval.

use crate::error::Interrupted;
use nix::fcntl::OFlag;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The installed handlers and the read end of their self-pipe.
pub struct Signals {
    wake: OwnedFd,
    caught: Arc<AtomicUsize>,
}

const HANDLED: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

impl Signals {
    /// Installs the handlers.
    pub fn install() -> anyhow::Result<Signals> {
        let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK)?;
        let caught = Arc::new(AtomicUsize::new(0));
        for sig in HANDLED {
            signal_hook::flag::register_usize(sig, caught.clone(), sig as usize)?;
            signal_hook::low_level::pipe::register(sig, write.try_clone()?)?;
        }
        Ok(Signals { wake: read, caught })
    }

    /// The descriptor that becomes readable when a signal arrives.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.wake.as_fd()
    }

    /// The interruption, if a handled signal has arrived.
    pub fn check(&self) -> Result<(), Interrupted> {
        match self.caught.load(Ordering::SeqCst) {
            0 => Ok(()),
            sig => Err(interrupted(sig as i32)),
        }
    }

    /// Sleeps for `d` unless a signal arrives first.
    pub fn sleep(&self, d: Duration) -> Result<(), Interrupted> {
        let end = Instant::now() + d;
        loop {
            self.check()?;
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            let ms = left.as_millis().min(i32::MAX as u128) as i32;
            let mut fds = [PollFd::new(self.fd(), PollFlags::POLLIN)];
            let _ = poll(
                &mut fds,
                PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX),
            );
        }
    }
}

/// The [`Interrupted`] error for a signal number.
pub fn interrupted(signal: i32) -> Interrupted {
    let name = match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    };
    Interrupted { signal, name }
}

/// Name of a signal that killed a worker, for messages.
pub fn signal_name(sig: i32) -> String {
    nix::sys::signal::Signal::try_from(sig)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {sig}"))
}
