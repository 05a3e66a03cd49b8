//! Reports (placeholder).
pub mod list;
