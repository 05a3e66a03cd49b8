//! Error kinds that decide patchbench's exit status: bad input (2), an interrupted run
//! (128 + signal), a run whose workload failed (1), a closed standard output (141).
//! Everything else is reported as an error with exit status 2.

use thiserror::Error;

/// Bad input from the user: the message says what is wrong and how to fix it; exit status 2.
#[derive(Debug, Error)]
#[error("{0}")]
pub struct Usage(pub String);

/// The run was stopped by a signal (SIGINT, SIGTERM, SIGHUP); exit status 128 + signal.
#[derive(Debug, Clone, Error)]
#[error("interrupted by {name}; {kept}")]
pub struct Interrupted {
    pub signal: i32,
    pub name: &'static str,
    /// What of the work was kept: [`KEPT`] for the measuring and campaign commands, whose
    /// every finished unit is stored; a build says that nothing was stored.
    pub kept: &'static str,
}

/// What an interrupted measurement kept: its finished units.
pub const KEPT: &str = "completed results were kept";

/// `e` with `kept` as what was kept, when it is an interruption; else `e` unchanged.
pub fn interrupted_keeping(e: anyhow::Error, kept: &'static str) -> anyhow::Error {
    match e.downcast::<Interrupted>() {
        Ok(i) => Interrupted { kept, ..i }.into(),
        Err(other) => other,
    }
}

/// The store's server cannot be reached, or the connection to it was lost: exit status 2 for a
/// command; a lab agent waits and reconnects instead (it tells this from other errors).
#[derive(Debug, Error)]
#[error("{0}")]
pub struct StoreUnreachable(pub String);

/// True when `err` is (or wraps) a [`StoreUnreachable`].
pub fn is_unreachable(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|e| e.downcast_ref::<StoreUnreachable>().is_some())
}

/// A workload failed while running (a worker crashed or reported an error); exit status 1.
#[derive(Debug, Error)]
#[error("{0}")]
pub struct RunFailed(pub String);

/// Standard output could not be written (a closed pipe, a full disk); whatever was saved
/// before stays saved. A closed pipe ends the command quietly with 141 (128 + SIGPIPE), as
/// `ls | head` does; any other failure is reported and exits 2.
#[derive(Debug, Error)]
#[error("cannot write to standard output: {0}")]
pub struct StdoutFailed(pub std::io::Error);

impl StdoutFailed {
    /// True for a reader that went away (EPIPE).
    pub fn is_closed_pipe(&self) -> bool {
        self.0.kind() == std::io::ErrorKind::BrokenPipe
    }
}

/// True when the error is a closed standard output, to be left unreported.
pub fn is_quiet(err: &anyhow::Error) -> bool {
    err.downcast_ref::<StdoutFailed>()
        .is_some_and(StdoutFailed::is_closed_pipe)
}

/// Shorthand for returning a [`Usage`] error.
pub fn usage<T>(msg: impl Into<String>) -> anyhow::Result<T> {
    Err(Usage(msg.into()).into())
}

/// The exit status for an error returned by a command.
pub fn exit_status(err: &anyhow::Error) -> i32 {
    if let Some(i) = err.downcast_ref::<Interrupted>() {
        128 + i.signal
    } else if is_quiet(err) {
        128 + libc::SIGPIPE
    } else if err.downcast_ref::<RunFailed>().is_some() {
        1
    } else {
        2
    }
}
