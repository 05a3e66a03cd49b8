//! The result store: every run is kept in an embedded SQLite database so that any two sets of
//! runs can be compared later. This module holds where the store lives and the [`StoreSink`]
//! the measuring commands save through (one transaction per finished unit); `db` holds the
//! database itself, and `locks` finds who holds a lock on it.

pub mod campaign;
pub mod db;
pub mod locks;

use crate::record::sink::Sink;
use crate::record::RunRecord;
use db::Store;
use std::path::{Path, PathBuf};

/// Where the store is: `--store`, else `$PATCHBENCH_STORE`, else
/// `$XDG_DATA_HOME/patchbench/results.db`, else `~/.local/share/patchbench/results.db`.
pub fn store_path(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(p) = env("PATCHBENCH_STORE") {
        return Ok(PathBuf::from(p));
    }
    if let Some(d) = env("XDG_DATA_HOME") {
        return Ok(PathBuf::from(d).join("patchbench").join("results.db"));
    }
    match env("HOME") {
        Some(h) => Ok(PathBuf::from(h).join(".local/share/patchbench/results.db")),
        None => crate::error::usage(
            "cannot find a place for the result store: set PATCHBENCH_STORE or give --store PATH",
        ),
    }
}

/// Opens (creating if needed) the store at `path` for a run labelled `label`.
pub fn sink(path: &Path, label: Option<String>) -> anyhow::Result<StoreSink> {
    Ok(StoreSink {
        store: Store::open(path, true)?,
        label,
        id: None,
    })
}

/// Saves a finished record in one step; returns its id.
pub fn save(path: &Path, label: Option<String>, record: &RunRecord) -> anyhow::Result<i64> {
    let mut sink = sink(path, label)?;
    sink.write(record, record.incomplete)?;
    sink.id
        .ok_or_else(|| anyhow::anyhow!("the store gave the run no id"))
}

/// Saves a run incrementally: `started` inserts it marked incomplete, each `progress` replaces
/// its record and metrics in one transaction, `finished` records the final state. The
/// `--label` given here wins over one already in the record.
pub struct StoreSink {
    store: Store,
    label: Option<String>,
    id: Option<i64>,
}

impl StoreSink {
    fn write(&mut self, record: &RunRecord, incomplete: bool) -> anyhow::Result<()> {
        let mut r = record.clone();
        if self.label.is_some() {
            r.label = self.label.clone();
        }
        r.incomplete = incomplete;
        match self.id {
            Some(id) => self.store.update(id, &r),
            None => {
                self.id = Some(self.store.insert(&r)?);
                Ok(())
            }
        }
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        self.store.path()
    }
}

impl Sink for StoreSink {
    fn name(&self) -> String {
        format!("store {}", self.store.path().display())
    }

    fn started(&mut self, record: &RunRecord) -> anyhow::Result<()> {
        self.write(record, true)
    }

    fn progress(&mut self, record: &RunRecord) -> anyhow::Result<()> {
        self.write(record, true)
    }

    fn finished(&mut self, record: &RunRecord) -> anyhow::Result<()> {
        self.write(record, record.incomplete)
    }

    fn saved_as(&self) -> Option<String> {
        self.id.map(|i| i.to_string())
    }

    fn done_line(&self) -> Option<String> {
        let id = self.id?;
        Some(format!(
            "saved as run {id} in {}",
            self.store.path().display()
        ))
    }
}
