//! The per-copy worker (placeholder).
pub fn main(_args: Vec<std::ffi::OsString>) -> i32 {
    2
}
