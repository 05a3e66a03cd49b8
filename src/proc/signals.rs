//! Catching SIGINT, SIGTERM and SIGHUP without threads, for every command that runs workers:
//! the handlers record the signal and write a byte to a self-pipe, which a driver polls
//! together with its workers' output, so it can kill every worker, remove its files and exit
//! 128+N within a poll interval. Optionally SIGCHLD also wakes the pipe (AIM7's driver reaps
//! thousands of tasks as they finish).

use crate::error::Interrupted;
use nix::fcntl::OFlag;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The installed handlers and their self-pipe.
pub struct Signals {
    wake: OwnedFd,
    /// Kept open for the handlers, which write to it.
    wake_write: OwnedFd,
    caught: Arc<AtomicUsize>,
}

const HANDLED: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

impl Signals {
    /// Installs the handlers for SIGINT, SIGTERM and SIGHUP.
    pub fn install() -> anyhow::Result<Signals> {
        Self::install_with(&[])
    }

    /// Like [`Signals::install`], and SIGCHLD also wakes the pipe (without counting as an
    /// interruption).
    pub fn install_waking_on_child_exit() -> anyhow::Result<Signals> {
        Self::install_with(&[libc::SIGCHLD])
    }

    fn install_with(wakers: &[i32]) -> anyhow::Result<Signals> {
        let (wake, wake_write) = nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK)?;
        let caught = Arc::new(AtomicUsize::new(0));
        for sig in HANDLED {
            signal_hook::flag::register_usize(sig, caught.clone(), sig as usize)?;
        }
        for &sig in HANDLED.iter().chain(wakers) {
            signal_hook::low_level::pipe::register_raw(sig, wake_write.as_raw_fd())?;
        }
        Ok(Signals {
            wake,
            wake_write,
            caught,
        })
    }

    /// The descriptor that becomes readable when a signal arrives.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.wake.as_fd()
    }

    /// Both ends of the self-pipe, for a forked child to close.
    pub fn raw_fds(&self) -> [RawFd; 2] {
        [self.wake.as_raw_fd(), self.wake_write.as_raw_fd()]
    }

    /// The interruption, if a handled signal has arrived.
    pub fn pending(&self) -> Option<Interrupted> {
        match self.caught.load(Ordering::SeqCst) {
            0 => None,
            sig => Some(interrupted(sig as i32)),
        }
    }

    /// A check, usable from anywhere, that is true once a handled signal has arrived.
    pub fn flag(&self) -> impl Fn() -> bool + Send + Sync + 'static {
        let caught = self.caught.clone();
        move || caught.load(Ordering::SeqCst) != 0
    }

    /// `Err` once a handled signal has arrived.
    pub fn check(&self) -> Result<(), Interrupted> {
        match self.pending() {
            None => Ok(()),
            Some(i) => Err(i),
        }
    }

    /// Empties the self-pipe after a wake-up.
    pub fn drain(&self) {
        let mut buf = [0u8; 256];
        while matches!(nix::unistd::read(&self.wake, &mut buf), Ok(n) if n > 0) {}
    }

    /// Sleeps in one `poll` of the self-pipe for at most `d` (rounded up to a millisecond):
    /// returns `Ok(true)` when the pipe woke it (SIGCHLD, with
    /// [`Signals::install_waking_on_child_exit`]), `Ok(false)` when the time ran out, and the
    /// interruption once a handled signal has arrived.
    pub fn wait(&self, d: Duration) -> Result<bool, Interrupted> {
        self.check()?;
        let ms = d.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
        let mut fds = [PollFd::new(self.fd(), PollFlags::POLLIN)];
        let woke = match poll(
            &mut fds,
            PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX),
        ) {
            Ok(n) => n > 0,
            // A handler ran during the poll: its byte is in the pipe.
            Err(e) => e == nix::errno::Errno::EINTR,
        };
        if woke {
            self.drain();
        }
        self.check()?;
        Ok(woke)
    }

    /// Sleeps for `d` unless a handled signal arrives first.
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
            self.drain();
        }
    }
}

/// The [`Interrupted`] error for a signal number.
pub fn interrupted(signal: i32) -> Interrupted {
    let name = nix::sys::signal::Signal::try_from(signal)
        .map(|s| s.as_str())
        .unwrap_or("a signal");
    Interrupted {
        signal,
        name,
        kept: crate::error::KEPT,
    }
}
