//! How long a store call may take, on either backend: one bound per call,
//! `PATCHBENCH_STORE_TIMEOUT` seconds (default 30), which PostgreSQL's client wait and
//! `statement_timeout` use (`super::postgres`) and SQLite's statements and lock waits too
//! (`super::sqlite_deadline`); the lock wait of a SQLite write (15 s, never past the bound);
//! and how long a call still waits once a signal has arrived.

use std::time::Duration;

/// The longest a store call takes when `PATCHBENCH_STORE_TIMEOUT` says nothing.
pub const DEFAULT_CALL_LIMIT: Duration = Duration::from_secs(30);

/// How long a call may still wait once a signal has arrived.
pub const SIGNAL_GRACE: Duration = Duration::from_secs(1);

/// The variable a user bounds every store call with.
pub const CALL_LIMIT_ENV: &str = "PATCHBENCH_STORE_TIMEOUT";

/// The longest a store call takes: `PATCHBENCH_STORE_TIMEOUT` seconds (0.5 to 86400), else
/// [`DEFAULT_CALL_LIMIT`].
pub fn call_limit() -> Duration {
    std::env::var(CALL_LIMIT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| (0.5..=86_400.0).contains(s))
        .map(Duration::from_secs_f64)
        .unwrap_or(DEFAULT_CALL_LIMIT)
}

/// How long a SQLite write waits for another process's lock: 15 s, or
/// `PATCHBENCH_LOCK_WAIT_MS` (for tests), never longer than [`call_limit`].
pub fn lock_wait() -> Duration {
    std::env::var("PATCHBENCH_LOCK_WAIT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_millis)
        .unwrap_or(Duration::from_secs(15))
        .min(call_limit())
}
