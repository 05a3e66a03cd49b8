//! The result store: every run is kept in an embedded SQLite database so that any two sets of
//! runs can be compared later. This module holds the two entry points the measuring commands
//! call ([`sink`] for incremental saving, [`save`] for a finished record) and where the store
//! lives; `db` holds the database itself and `cli` the `runs`/`show`/`export`/`rm`/`import`/
//! `compare` commands.

pub mod db;

use crate::args::StoreOpts;
use crate::record::{RunRecord, RunSink};
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

/// Opens the sink that saves a run as it progresses, or None when storing is off.
pub fn sink(opts: &StoreOpts) -> anyhow::Result<Option<Box<dyn RunSink>>> {
    if opts.no_store {
        return Ok(None);
    }
    let store = Store::open(&store_path(opts.store.as_deref())?, true)?;
    Ok(Some(Box::new(StoreSink {
        store,
        label: opts.label.clone(),
        id: None,
    })))
}

/// Tells the user where a run was saved: `patchbench: saved as run ID in PATH` on stderr.
pub fn announce(opts: &StoreOpts, id: &str) {
    match store_path(opts.store.as_deref()) {
        Ok(path) => eprintln!("patchbench: saved as run {id} in {}", path.display()),
        Err(_) => eprintln!("patchbench: saved as run {id}"),
    }
}

/// Saves a finished record in one step (for commands that produce the whole record at once).
pub fn save(opts: &StoreOpts, record: &RunRecord) -> anyhow::Result<Option<String>> {
    if opts.no_store {
        return Ok(None);
    }
    let mut store = Store::open(&store_path(opts.store.as_deref())?, true)?;
    let id = store.insert(&labelled(record, &opts.label))?;
    Ok(Some(id.to_string()))
}

/// The record with the command line's `--label` applied (it wins over a label already set).
fn labelled(record: &RunRecord, label: &Option<String>) -> RunRecord {
    let mut r = record.clone();
    if label.is_some() {
        r.label = label.clone();
    }
    r
}

/// Saves a run incrementally: `started` inserts it marked incomplete, each `progress` replaces
/// its record and metrics in one transaction, `finished` records the final state.
struct StoreSink {
    store: Store,
    label: Option<String>,
    id: Option<i64>,
}

impl StoreSink {
    fn write(&mut self, record: &RunRecord, incomplete: bool) -> anyhow::Result<()> {
        let mut r = labelled(record, &self.label);
        r.incomplete = incomplete;
        match self.id {
            Some(id) => self.store.update(id, &r),
            None => {
                self.id = Some(self.store.insert(&r)?);
                Ok(())
            }
        }
    }
}

impl RunSink for StoreSink {
    fn started(&mut self, record: &RunRecord) -> anyhow::Result<Option<String>> {
        self.write(record, true)?;
        Ok(self.id.map(|i| i.to_string()))
    }

    fn progress(&mut self, record: &RunRecord) -> anyhow::Result<()> {
        self.write(record, true)
    }

    fn finished(&mut self, record: &RunRecord) -> anyhow::Result<()> {
        self.write(record, record.incomplete)
    }
}
