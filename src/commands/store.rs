//! The store commands: `runs`, `show`, `export` and `rm`. Errors are returned (exit 2).
//! `runs` and `show` print text, or JSON for scripts; `show` also one HTML page.

use super::shared::StoreArg;
use crate::error::usage;
use crate::record::RunRecord;
use crate::store::db::Store;
use clap::Args;
use std::path::PathBuf;

/// The formats of a listing: the table, or JSON on standard output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TextOrJson {
    Text,
    Json,
}

/// The formats of `show`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShowFormat {
    Text,
    /// Schema patchbench.show/1 (docs/json.md).
    Json,
    /// One self-contained page: noise check, metrics with their samples, curves, fingerprint.
    Html,
}

#[derive(Debug, Clone, Args)]
pub struct RunsArgs {
    /// Only runs with this label.
    #[arg(long, value_name = "NAME", value_parser = crate::args::parse_label)]
    pub label: Option<String>,
    /// Output format: the table, or JSON (schema patchbench.runs/1, docs/json.md).
    #[arg(long, value_enum, default_value = "text")]
    pub format: TextOrJson,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    /// Run id, as `patchbench runs` lists it.
    #[arg(value_name = "RUN")]
    pub run: String,
    /// For a UnixBench run: print its UnixBench text report instead.
    #[arg(long, conflicts_with = "format")]
    pub report: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ShowFormat,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    Json,
    Csv,
}

#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    #[arg(value_name = "RUN")]
    pub run: String,
    #[arg(long, value_enum, default_value = "json")]
    pub format: ExportFormat,
    /// Write to FILE instead of standard output: a file is replaced atomically (a link is
    /// followed), a FIFO or character device written in place; `-` is standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Args)]
pub struct RmArgs {
    #[arg(value_name = "RUN", required = true)]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub store: StoreArg,
}

/// A run id as given on the command line.
pub fn run_id(s: &str) -> anyhow::Result<i64> {
    s.trim().parse().or_else(|_| {
        usage(format!(
            "{s:?} is not a run id; give a number as listed by `patchbench runs`"
        ))
    })
}

/// The stored run `s`, or one line saying it is not there.
pub fn get_run(store: &Store, s: &str) -> anyhow::Result<RunRecord> {
    let id = run_id(s)?;
    match store.get(id)? {
        Some(r) => Ok(r),
        None => usage(format!(
            "no run {id} in store {}; `patchbench runs` lists the runs",
            store.location()
        )),
    }
}

/// `patchbench runs`.
pub fn runs(a: &RunsArgs) -> anyhow::Result<i32> {
    let store = a.store.open(false)?;
    let list = store.list(a.label.as_deref())?;
    let text = match a.format {
        TextOrJson::Text => crate::report::store::runs(&list),
        TextOrJson::Json => crate::report::store::runs_json(&store.location().shown(), &list)?,
    };
    crate::report::print(&text)?;
    Ok(0)
}

/// `patchbench show`.
pub fn show(a: &ShowArgs) -> anyhow::Result<i32> {
    let store = a.store.open(false)?;
    let r = get_run(&store, &a.run)?;
    let id = a.run.trim();
    if a.report {
        if r.tests.is_empty() {
            return usage(format!(
                "run {id} has no UnixBench results to report; use `patchbench show {id}`"
            ));
        }
        crate::report::print(&crate::report::unixbench_text::render(&r))?;
        return Ok(0);
    }
    let text = match a.format {
        ShowFormat::Text => crate::report::store::show(id, &r),
        ShowFormat::Json => crate::report::store::show_json(run_id(id)?, &r)?,
        ShowFormat::Html => crate::report::html::run(Some(id), &r),
    };
    crate::report::print(&text)?;
    Ok(0)
}

/// `patchbench export`.
pub fn export(a: &ExportArgs) -> anyhow::Result<i32> {
    if let Some(path) = &a.output {
        crate::args::check_output("--output", path)?;
    }
    let store = a.store.open(false)?;
    let r = get_run(&store, &a.run)?;
    let bytes = match a.format {
        ExportFormat::Json => r.to_json()?,
        ExportFormat::Csv => crate::report::store::csv(a.run.trim(), &r)?,
    };
    match &a.output {
        Some(path) => crate::record::output_file::write("--output", path, &bytes)?,
        None => crate::report::print(&String::from_utf8_lossy(&bytes))?,
    }
    Ok(0)
}

/// `patchbench rm`: deletes the runs, or none when one is missing.
pub fn rm(a: &RmArgs) -> anyhow::Result<i32> {
    let mut store = a.store.open_for(crate::store::Access::Write)?;
    let ids: Vec<i64> = a
        .runs
        .iter()
        .map(|s| run_id(s))
        .collect::<anyhow::Result<_>>()?;
    for id in &ids {
        if !store.exists(*id)? {
            return usage(format!(
                "no run {id} in store {}; nothing was deleted",
                store.location()
            ));
        }
    }
    for id in ids {
        store.delete(id)?;
        crate::report::print(&format!("deleted run {id}\n"))?;
    }
    Ok(0)
}
