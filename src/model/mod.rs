//! Placeholder for the `model` command (being written; see the issue tracker).

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct ModelArgs {
    /// Arguments (not yet implemented).
    pub args: Vec<String>,
}

pub fn execute(_args: &ModelArgs) -> anyhow::Result<i32> {
    crate::error::usage("`model` is not implemented yet")
}
