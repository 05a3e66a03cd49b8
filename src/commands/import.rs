//! `patchbench import`: stores results from files (UnixBench reports and logs, AIM7 multitask
//! output, will-it-scale CSV, patchbench JSON). Every file is parsed before anything is
//! stored, so a bad file stores nothing; several files are several runs of one side, and a
//! posted comparison table (`name | base | patched | cmp`) is one run for each of its sides.

use super::shared::StoreArg;
use crate::import::{self, ImportOptions};
use crate::progress::Progress;
use crate::record::RunRecord;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Label the imported runs (e.g. base, patched): plain text, no control characters or
    /// commas.
    #[arg(long, value_name = "NAME", value_parser = crate::args::parse_label)]
    pub label: Option<String>,
    /// Test name for AIM7 and will-it-scale files, which do not name it (default: file stem).
    #[arg(long, value_name = "NAME")]
    pub test: Option<String>,
    #[command(flatten)]
    pub store: StoreArg,
}

/// `patchbench import`.
pub fn execute(a: &ImportArgs) -> anyhow::Result<i32> {
    let opts = ImportOptions {
        label: a.label.clone(),
        test: a.test.clone(),
    };
    let progress = Progress::new();
    // A posted comparison table gives two runs (one per side), so each run keeps its file.
    let mut records: Vec<RunRecord> = Vec::with_capacity(a.files.len());
    let mut from = Vec::with_capacity(a.files.len());
    for (i, f) in a.files.iter().enumerate() {
        if a.files.len() > 1 {
            progress.show(&format!(
                "reading {} ({} of {})",
                crate::safe_text::field(&f.display().to_string()),
                i + 1,
                a.files.len()
            ));
        }
        let runs = import::import_file_runs(f, &opts)?;
        let n = runs.len();
        for (k, r) in runs.into_iter().enumerate() {
            records.push(r);
            // A file of several runs (JSON lines, a posted table's two sides) names each.
            let shown = crate::safe_text::field(&f.display().to_string());
            from.push(if n > 1 {
                format!("{shown} ({} of {n})", k + 1)
            } else {
                shown
            });
        }
    }
    drop(progress);
    let mut store = a.store.open(true)?;
    // A patchbench document already stored (same run identity) is not stored twice: importing
    // is idempotent, as pushing is.
    let mut out = String::new();
    let mut fresh = Vec::with_capacity(records.len());
    let mut fresh_from = Vec::with_capacity(records.len());
    for (r, f) in records.into_iter().zip(from) {
        match r
            .uuid
            .as_deref()
            .map(|u| store.id_of_uuid(u))
            .transpose()?
            .flatten()
        {
            Some(id) => out.push_str(&format!(
                "{f} is already stored as run {id} (the same run); not stored again\n"
            )),
            None => {
                fresh.push(r);
                fresh_from.push(f);
            }
        }
    }
    let (records, from) = (fresh, fresh_from);
    let ids = store.insert_all(&records)?;
    for (id, (f, r)) in ids.iter().zip(from.iter().zip(&records)) {
        // The file's name and the label it gave are shown escaped and cut.
        out.push_str(&format!(
            "imported {f} as run {id} (label {}, {} metrics)\n",
            r.label
                .as_deref()
                .map_or_else(|| "-".into(), crate::safe_text::field),
            r.metrics.len()
        ));
    }
    crate::report::print(&out)?;
    Ok(0)
}
