//! Error kinds that decide patchbench's exit status: bad input (2), an interrupted run
//! (128 + signal), a run whose workload failed (1). Everything else is reported as an error
//! with exit status 2.

use thiserror::Error;

/// Bad input from the user: the message says what is wrong and how to fix it; exit status 2.
#[derive(Debug, Error)]
#[error("{0}")]
pub struct Usage(pub String);

/// The run was stopped by a signal (SIGINT, SIGTERM, SIGHUP); exit status 128 + signal.
#[derive(Debug, Error)]
#[error("interrupted by {name}; completed results were kept")]
pub struct Interrupted {
    pub signal: i32,
    pub name: &'static str,
}

/// A workload failed while running (a worker crashed or reported an error); exit status 1.
#[derive(Debug, Error)]
#[error("{0}")]
pub struct RunFailed(pub String);

/// Shorthand for returning a [`Usage`] error.
pub fn usage<T>(msg: impl Into<String>) -> anyhow::Result<T> {
    Err(Usage(msg.into()).into())
}

/// The exit status for an error returned by a command.
pub fn exit_status(err: &anyhow::Error) -> i32 {
    if let Some(i) = err.downcast_ref::<Interrupted>() {
        128 + i.signal
    } else if err.downcast_ref::<RunFailed>().is_some() {
        1
    } else {
        2
    }
}
