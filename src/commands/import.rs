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
    /// Label the imported runs (e.g. base, patched).
    #[arg(long, value_name = "NAME")]
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
                f.display(),
                i + 1,
                a.files.len()
            ));
        }
        for r in import::import_file_runs(f, &opts)? {
            records.push(r);
            from.push(f);
        }
    }
    drop(progress);
    let mut store = a.store.open(true)?;
    let ids = store.insert_all(&records)?;
    let mut out = String::new();
    for (id, (f, r)) in ids.iter().zip(from.iter().zip(&records)) {
        out.push_str(&format!(
            "imported {} as run {id} (label {}, {} metrics)\n",
            f.display(),
            r.label.as_deref().unwrap_or("-"),
            r.metrics.len()
        ));
    }
    crate::report::print(&out)?;
    Ok(0)
}
