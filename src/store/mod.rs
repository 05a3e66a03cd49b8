//! The result store (placeholder: the SQLite store is being written).

pub mod cli;

use crate::cli::StoreOpts;
use crate::result::{RunRecord, RunSink};

/// Opens the sink that saves a run as it progresses, or None when storing is off.
pub fn sink(opts: &StoreOpts) -> anyhow::Result<Option<Box<dyn RunSink>>> {
    let _ = opts;
    Ok(None)
}

/// Saves a finished record in one step (for commands that produce the whole record at once).
pub fn save(opts: &StoreOpts, record: &RunRecord) -> anyhow::Result<Option<String>> {
    let _ = (opts, record);
    Ok(None)
}
