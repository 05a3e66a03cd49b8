//! The result model: what every patchbench command (`run`, `aim7`, `scale`, `model`) records,
//! writes as JSON and stores, and what `compare` reads.
//!
//! One [`RunRecord`] is one execution of one command. It carries the system fingerprint, the
//! configuration it ran with, and every sample. For comparison, every record also exposes a flat
//! list of [`Metric`]s: one named number per (metric, parameters) with the raw samples that
//! produced it, so `compare` needs no knowledge of the workload that made it.
//!
//! The JSON schema is versioned by [`SCHEMA`]; readers refuse documents of another major
//! version with a clear message instead of guessing.

use crate::sysinfo::SystemInfo;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Schema identifier written into every result document.
pub const SCHEMA: &str = "patchbench.run/1";

/// One execution of one patchbench command, with every sample it produced.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunRecord {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Which command produced it: `unixbench`, `aim7`, `will-it-scale`, `model`, or `import`.
    pub kind: String,
    /// The user's label for this side of a comparison (`base`, `patched`, …).
    #[serde(default)]
    pub label: Option<String>,
    /// Where the numbers came from: `patchbench`, or the file an import read.
    #[serde(default)]
    pub source: Option<String>,
    /// The machine and software it ran on.
    pub system: SystemInfo,
    /// The settings of the run (tests, copies, passes, durations, directories, …) as given.
    pub config: BTreeMap<String, serde_json::Value>,
    /// RFC 3339 start and end of the run.
    pub started_at: String,
    pub finished_at: String,
    /// UnixBench-style results (empty for other kinds).
    #[serde(default)]
    pub tests: Vec<TestResult>,
    /// Index scores per copy count (UnixBench).
    #[serde(default)]
    pub indexes: Vec<IndexScore>,
    /// Flat, kind-independent metrics: what `compare` works on.
    pub metrics: Vec<Metric>,
    /// Free-form extra data a kind wants to keep (AIM7 rows, scaling curves, …).
    #[serde(default)]
    pub extra: BTreeMap<String, serde_json::Value>,
    /// Set when the run was interrupted: the results present are the ones that completed.
    #[serde(default)]
    pub incomplete: bool,
}

/// Whether a larger value of a metric is better.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    HigherIsBetter,
    LowerIsBetter,
}

/// One comparable number.
///
/// `name` follows LKP's naming where one exists (`unixbench.score`, `aim7.jobs-per-min`,
/// `will-it-scale.per_process_ops`); `params` holds what distinguishes one instance of it
/// (`copies=4`, `test=pipe`, `load=3000`). Two metrics are the same metric when name and params
/// are equal.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Metric {
    pub name: String,
    #[serde(default)]
    pub params: BTreeMap<String, String>,
    /// Human-readable row title (e.g. the UnixBench report name).
    pub title: String,
    pub unit: String,
    pub direction: Direction,
    /// The run's value for this metric (for UnixBench: the score of the test).
    pub value: f64,
    /// The raw samples behind `value` (for UnixBench: the kept passes' rates).
    #[serde(default)]
    pub samples: Vec<f64>,
}

impl Metric {
    /// A stable key: `name` followed by its parameters, e.g. `unixbench.score[copies=1,test=pipe]`.
    pub fn key(&self) -> String {
        metric_key(&self.name, &self.params)
    }
}

/// Builds the key used to match metrics across runs.
pub fn metric_key(name: &str, params: &BTreeMap<String, String>) -> String {
    if params.is_empty() {
        return name.to_string();
    }
    let p: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{name}[{}]", p.join(","))
}

/// Metric parameters from (name, value) pairs.
pub fn params(pairs: &[(&str, String)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// The result of one UnixBench test at one copy count.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TestResult {
    /// Test id (`pipe`, `dhry2reg`, …).
    pub test: String,
    /// UnixBench report name (`Pipe Throughput`).
    pub name: String,
    /// Unit label (`lps`, `lpm`, `KBps`, `MWIPS`).
    pub unit: String,
    /// 0: counts are already rates; 1: per second; 60: per minute.
    pub timebase: u32,
    pub copies: u32,
    /// Index baseline (George, SPARCstation 20-61), if the test has one.
    pub baseline: Option<f64>,
    /// Seconds each copy was asked to run.
    pub duration: f64,
    /// Every pass, kept or dropped.
    pub passes: Vec<PassResult>,
    /// Geometric mean of the kept passes' rates.
    pub score: f64,
    /// Arithmetic mean of the kept passes' times.
    pub time: f64,
    /// Number of kept passes.
    pub samples: usize,
    /// 10 × score / baseline.
    pub index: Option<f64>,
    /// With `run --precision`: the 95% CI half-width of the mean pass rate reached, in %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_pct: Option<f64>,
}

/// One pass of one test: all copies started together from one barrier.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PassResult {
    pub pass: u32,
    /// Sum of the copies' counts (the value passes are ranked by).
    pub count: f64,
    /// Mean of the copies' times (self-reported where the test reports one, else wall time).
    pub time: f64,
    /// The pass's rate: `count / (time / timebase)`, or `count` when timebase is 0.
    pub rate: f64,
    /// False when the pass was among the lowest third dropped by UnixBench's rule.
    pub kept: bool,
    pub copies: Vec<CopySample>,
}

/// What one copy (one worker process) reported for one pass.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CopySample {
    pub copy: u32,
    /// Raw count (loops, or a rate for timebase-0 tests).
    pub count: f64,
    /// The time UnixBench would divide by: the test's own TIME, else the copy's wall time.
    pub seconds: f64,
    /// Wall time of the copy from barrier release to the end of its work.
    pub wall_seconds: f64,
    /// This copy's own rate, for per-copy spread.
    pub rate: f64,
}

/// An index score of one category at one copy count.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct IndexScore {
    pub copies: u32,
    /// Category name (`System Benchmarks`).
    pub category: String,
    /// 10 × geometric mean of the ratios.
    pub score: f64,
    /// True when every baseline test of the category has a result.
    pub full: bool,
    /// Number of tests that entered the index.
    pub tests: usize,
}

impl RunRecord {
    /// An empty record of `kind` made by patchbench, started now, with the system it runs on
    /// and its settings; results, label and end time are filled in by the caller.
    pub fn new(
        kind: &str,
        system: SystemInfo,
        config: BTreeMap<String, serde_json::Value>,
    ) -> RunRecord {
        RunRecord {
            schema: SCHEMA.to_string(),
            kind: kind.to_string(),
            label: None,
            source: Some("patchbench".to_string()),
            system,
            config,
            started_at: crate::clock::now_rfc3339(),
            finished_at: String::new(),
            tests: Vec::new(),
            indexes: Vec::new(),
            metrics: Vec::new(),
            extra: BTreeMap::new(),
            incomplete: false,
        }
    }

    /// Parses a result document, checking the schema version.
    pub fn from_json(text: &str) -> anyhow::Result<RunRecord> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| anyhow::anyhow!("not valid JSON ({e})"))?;
        let schema = value
            .get("schema")
            .and_then(|s| s.as_str())
            .ok_or_else(|| anyhow::anyhow!("not a patchbench result (no \"schema\" field)"))?;
        if schema != SCHEMA {
            anyhow::bail!(
                "result schema {schema:?} is not supported by this patchbench (it reads {SCHEMA:?})"
            );
        }
        serde_json::from_value(value).map_err(|e| anyhow::anyhow!("malformed result ({e})"))
    }

    /// Writes the document to `path` atomically (temporary file in the same directory, then
    /// rename), so a kill never leaves a half-written file behind.
    pub fn write_json(&self, path: &std::path::Path) -> anyhow::Result<()> {
        use anyhow::Context;
        use std::io::Write;
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        };
        let mut tmp = tempfile::NamedTempFile::new_in(&dir)
            .with_context(|| format!("cannot write {}: directory not writable", path.display()))?;
        serde_json::to_writer_pretty(&mut tmp, self)?;
        tmp.write_all(b"\n")?;
        tmp.as_file().sync_all()?;
        tmp.persist(path)
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(())
    }
}

/// Receives a run record as it grows, so a store can commit each finished test at once and a
/// killed run keeps what completed. Every call gets the whole record so far.
pub trait RunSink {
    /// The run has started (no results yet). Returns an id for messages, if the sink has one.
    fn started(&mut self, record: &RunRecord) -> anyhow::Result<Option<String>>;
    /// One more test (or unit of work) has finished and been appended to the record.
    fn progress(&mut self, record: &RunRecord) -> anyhow::Result<()>;
    /// The run has ended (completely, or `record.incomplete` after an interruption).
    fn finished(&mut self, record: &RunRecord) -> anyhow::Result<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_key_lists_params_in_order() {
        let mut p = BTreeMap::new();
        p.insert("test".to_string(), "pipe".to_string());
        p.insert("copies".to_string(), "2".to_string());
        assert_eq!(
            metric_key("unixbench.score", &p),
            "unixbench.score[copies=2,test=pipe]"
        );
        assert_eq!(
            metric_key("aim7.jobs-per-min", &BTreeMap::new()),
            "aim7.jobs-per-min"
        );
    }

    #[test]
    fn from_json_rejects_other_schemas() {
        let err = RunRecord::from_json(r#"{"schema":"patchbench.run/9"}"#).unwrap_err();
        assert!(err.to_string().contains("not supported"));
        let err = RunRecord::from_json("{").unwrap_err();
        assert!(err.to_string().contains("not valid JSON"));
        let err = RunRecord::from_json("{}").unwrap_err();
        assert!(err.to_string().contains("no \"schema\""));
    }
}
