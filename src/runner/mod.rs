//! The runner (placeholder).
pub mod scoring;
pub fn run_command(_args: &crate::cli::RunArgs) -> anyhow::Result<i32> {
    Ok(0)
}
