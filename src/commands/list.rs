//! `patchbench list`: every UnixBench test with its report name, unit, baseline and
//! description, and the aliases.

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct ListArgs {}

/// `patchbench list`.
pub fn execute(_: &ListArgs) -> anyhow::Result<i32> {
    crate::report::print(&crate::report::list::render())?;
    Ok(0)
}
