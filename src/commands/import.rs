//! `patchbench import`: stores results from files (UnixBench reports and logs, AIM7 multitask
//! output, will-it-scale CSV, patchbench JSON). Every file is parsed before anything is
//! stored, so a bad file stores nothing; several files are several runs of one side.

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
    let mut records: Vec<RunRecord> = Vec::with_capacity(a.files.len());
    for (i, f) in a.files.iter().enumerate() {
        if a.files.len() > 1 {
            progress.show(&format!(
                "reading {} ({} of {})",
                f.display(),
                i + 1,
                a.files.len()
            ));
        }
        records.push(import::import_file(f, &opts)?);
    }
    drop(progress);
    let mut store = a.store.open(true)?;
    let ids = store.insert_all(&records)?;
    let mut out = String::new();
    for (id, (f, r)) in ids.iter().zip(a.files.iter().zip(&records)) {
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
