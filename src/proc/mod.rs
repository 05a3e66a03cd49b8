//! The process layer shared by every command that starts processes: signal handling and the
//! process limits checked before starting.

pub mod limits;
pub mod signals;
