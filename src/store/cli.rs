//! Store subcommands (placeholder).

use clap::Subcommand;

#[derive(Debug, Clone, Subcommand)]
pub enum StoreCommand {
    /// List stored runs.
    Runs,
}

pub fn execute(_cmd: StoreCommand) -> anyhow::Result<i32> {
    crate::error::usage("the store commands are not implemented yet")
}
