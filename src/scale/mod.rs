//! Placeholder for the `scale` command (being written; see the issue tracker).

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct ScaleArgs {
    /// Arguments (not yet implemented).
    pub args: Vec<String>,
}

pub fn execute(_args: &ScaleArgs) -> anyhow::Result<i32> {
    crate::error::usage("`scale` is not implemented yet")
}
