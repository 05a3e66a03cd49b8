//! The commands: each one's arguments and what it does.

pub mod debug_writer;
pub mod store;
