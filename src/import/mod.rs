//! `patchbench import`: turns results produced elsewhere into run records with the same metric
//! names and parameters as patchbench's own commands, so imported and native runs compare.
//!
//! Formats, recognised from the content: UnixBench text reports and console logs (5.1.x and
//! 6.0, `unixbench`), AIM7 `multitask` output (`aim7`), will-it-scale `runtest.py` CSV
//! (`will_it_scale`), and patchbench's own JSON. A file that is none of these, or one cut off
//! part-way, is an error naming the file and line.

mod aim7;
mod unixbench;
mod will_it_scale;

use crate::error::Usage;
use crate::record::{Kind, Metric, RunRecord};
use crate::sysinfo::SystemInfo;
use std::collections::BTreeMap;
use std::path::Path;

/// Options that apply to every imported file.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// Label for the imported runs (overrides a label inside patchbench JSON).
    pub label: Option<String>,
    /// Test name for formats that do not name it (AIM7, will-it-scale); default: file stem.
    pub test: Option<String>,
}

/// Reads one file into a run record (nothing is stored here).
pub fn import_file(path: &Path, opts: &ImportOptions) -> anyhow::Result<RunRecord> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| Usage(format!("{shown}: cannot read: {e}")))?;
    let text = String::from_utf8_lossy(&bytes);
    let test = opts.test.clone().unwrap_or_else(|| {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "unknown".to_string())
    });
    let mut record = if text.trim_start().starts_with('{') {
        RunRecord::from_json(&text).map_err(|e| Usage(format!("{shown}: {e}")))?
    } else if will_it_scale::looks_like(&text) {
        will_it_scale::parse(&text, &test).map_err(|e| located(&shown, e))?
    } else if aim7::looks_like(&text) {
        aim7::parse(&text, &test).map_err(|e| located(&shown, e))?
    } else if unixbench::looks_like(&text) {
        unixbench::parse(&text).map_err(|e| located(&shown, e))?
    } else {
        return Err(Usage(format!(
            "{shown}: not a known result format (expected a UnixBench report or log, AIM7 \
             multitask output, a will-it-scale CSV, or patchbench JSON)"
        ))
        .into());
    };
    if opts.label.is_some() {
        record.label = opts.label.clone();
    }
    if record.source.as_deref().is_none_or(|s| s == "patchbench") {
        record.source = Some(match record.source {
            Some(_) => format!("patchbench JSON {shown}"),
            None => shown.clone(),
        });
    }
    if record.metrics.is_empty() {
        return Err(Usage(format!("{shown}: no results found in the file")).into());
    }
    Ok(record)
}

/// A parse error at a line of the file.
#[derive(Debug)]
pub(crate) struct LineError {
    pub line: usize,
    pub message: String,
}

pub(crate) fn line_error<T>(line: usize, message: impl Into<String>) -> Result<T, LineError> {
    Err(LineError {
        line,
        message: message.into(),
    })
}

fn located(file: &str, e: LineError) -> anyhow::Error {
    if e.line == 0 {
        Usage(format!("{file}: {}", e.message)).into()
    } else {
        Usage(format!("{file}:{}: {}", e.line, e.message)).into()
    }
}

/// A record for imported numbers: the system is whatever the file says (the rest unknown).
pub(crate) fn imported_record(
    kind: Kind,
    system: SystemInfo,
    config: BTreeMap<String, serde_json::Value>,
    metrics: Vec<Metric>,
) -> RunRecord {
    let record = RunRecord::new(kind, system, &config);
    RunRecord {
        source: None,
        finished_at: record.started_at.clone(),
        metrics,
        ..record
    }
}
