//! `patchbench list`: every UnixBench test with its report name, unit, baseline and
//! description, and the aliases.

use super::store::TextOrJson;
use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// Output format: the table, or JSON (schema patchbench.list/1, docs/json.md).
    #[arg(long, value_enum, default_value = "text")]
    pub format: TextOrJson,
}

/// `patchbench list`.
pub fn execute(a: &ListArgs) -> anyhow::Result<i32> {
    let text = match a.format {
        TextOrJson::Text => crate::report::list::render(),
        TextOrJson::Json => crate::report::list::json()?,
    };
    crate::report::print(&text)?;
    Ok(0)
}
