//! Placeholder for the `aim7` command (being written; see the issue tracker).

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct Aim7Args {
    /// Arguments (not yet implemented).
    pub args: Vec<String>,
}

pub fn execute(_args: &Aim7Args) -> anyhow::Result<i32> {
    crate::error::usage("`aim7` is not implemented yet")
}
