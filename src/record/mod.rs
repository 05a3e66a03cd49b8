//! The result model: what every patchbench command (`run`, `aim7`, `scale`, `model`, `exec`)
//! records, writes as JSON and stores, and what `compare` reads; the sinks a run is handed to
//! as it grows (store, JSON and other files, the terminal), the one atomic file writer, and the
//! domain every stored number must lie in (`domain`).
//!
//! One [`RunRecord`] is one execution of one command. It carries the system fingerprint, the
//! configuration it ran with (a command's own config struct, serialised), every sample in the
//! typed details of its [`Kind`], and a flat list of [`Metric`]s: one named number per
//! (metric, parameters) with the raw samples that produced it, so `compare` needs no knowledge
//! of the workload that made it.
//!
//! The JSON schema is versioned by [`SCHEMA`]. Documents of schema `patchbench.run/1` (and
//! stores holding them) are still read: their untyped `extra` sections are moved into the
//! typed fields. Other versions are refused with a clear message instead of guessed at.

pub mod aim7;
pub mod campaign;
pub mod domain;
pub mod exec;
pub mod model;
pub mod monitors;
pub mod output_file;
pub mod shared;
pub mod sink;
pub mod unixbench;
pub mod will_it_scale;

pub use unixbench::{
    Block, CopySample, IndexScore, Overlap, PassResult, SharedWindow, StderrSample, TestResult,
    TimeSource,
};

use crate::sysinfo::SystemInfo;
use serde::{Deserialize, Serialize};
pub use shared::{SharedParams, SharedStr};
use std::collections::BTreeMap;

/// Schema identifier written into every result document.
pub const SCHEMA: &str = "patchbench.run/2";
/// The previous schema, still read.
pub const SCHEMA_V1: &str = "patchbench.run/1";

/// Which command produced a record.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Unixbench,
    Aim7,
    WillItScale,
    Model,
    /// A program we did not write (`patchbench exec`).
    Exec,
    /// The store's testing aid (`debug-slow-writer`).
    Debug,
}

impl Kind {
    /// The word used in JSON and in `patchbench runs`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Unixbench => "unixbench",
            Kind::Aim7 => "aim7",
            Kind::WillItScale => "will-it-scale",
            Kind::Model => "model",
            Kind::Exec => "exec",
            Kind::Debug => "debug",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One execution of one patchbench command, with every sample it produced.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunRecord {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Which command produced it.
    pub kind: Kind,
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
    /// UnixBench results (empty for other kinds).
    #[serde(default)]
    pub tests: Vec<TestResult>,
    /// Index scores per copy count (UnixBench).
    #[serde(default)]
    pub indexes: Vec<IndexScore>,
    /// Start and end of each copy count's block of tests (UnixBench).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<Block>,
    /// AIM7 load points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aim7: Option<aim7::Aim7Details>,
    /// will-it-scale points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub will_it_scale: Option<will_it_scale::ScaleDetails>,
    /// Model points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<model::ModelDetails>,
    /// The tool and the invocations of an `exec` run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<exec::ExecDetails>,
    /// What the monitors saw around each measured unit (`monitors`; empty with
    /// `--no-monitors` and in runs of earlier builds). Their rows are in `metrics` too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub monitors: Vec<monitors::Unit>,
    /// Flat, kind-independent metrics: what `compare` works on.
    pub metrics: Vec<Metric>,
    /// Why the run stopped early, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Anything else an imported or older document carried.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, serde_json::Value>,
    /// Set when the run was interrupted: the results present are the ones that completed.
    #[serde(default)]
    pub incomplete: bool,
    /// The run's identity from the moment it was made (a random UUID, lower-case hex with
    /// dashes): a store keeps one run per UUID, so pushing or importing it twice stores it
    /// once. Absent in documents of earlier builds (the store gives those one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// The campaign step that made this run, when a campaign did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign: Option<campaign::StepInfo>,
}

/// Whether a larger value of a metric is better.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash)]
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
    pub name: SharedStr,
    #[serde(default)]
    pub params: SharedParams,
    /// Human-readable row title (e.g. the UnixBench report name).
    pub title: SharedStr,
    pub unit: SharedStr,
    pub direction: Direction,
    /// The run's value for this metric (for UnixBench: the score of the test).
    pub value: f64,
    /// The raw samples behind `value` (for UnixBench: the kept passes' rates).
    #[serde(default)]
    pub samples: Vec<f64>,
}

impl Metric {
    /// The one way to make a metric: `params` as (name, value) pairs.
    pub fn new(
        name: impl Into<SharedStr>,
        params: &[(&str, String)],
        title: impl Into<SharedStr>,
        unit: impl Into<SharedStr>,
        direction: Direction,
        value: f64,
        samples: Vec<f64>,
    ) -> Metric {
        Metric {
            name: name.into(),
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            title: title.into(),
            unit: unit.into(),
            direction,
            value,
            samples,
        }
    }

    /// A stable key: `name` followed by its parameters, e.g. `unixbench.score[copies=1,test=pipe]`.
    pub fn key(&self) -> String {
        metric_key(&self.name, &self.params)
    }
}

/// A new random run identity (UUID version 4).
pub fn new_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Builds the key used to match metrics across runs.
pub fn metric_key(name: &str, params: &BTreeMap<String, String>) -> String {
    if params.is_empty() {
        return name.to_string();
    }
    // Written into one string: compare makes a key for every metric of every run.
    let len = params
        .iter()
        .map(|(k, v)| k.len() + v.len() + 2)
        .sum::<usize>();
    let mut key = String::with_capacity(name.len() + len + 1);
    key.push_str(name);
    for (i, (k, v)) in params.iter().enumerate() {
        key.push(if i == 0 { '[' } else { ',' });
        key.push_str(k);
        key.push('=');
        key.push_str(v);
    }
    key.push(']');
    key
}

/// A command's settings struct as the record's `config` map.
pub fn config_map(config: &impl Serialize) -> BTreeMap<String, serde_json::Value> {
    match serde_json::to_value(config) {
        Ok(serde_json::Value::Object(m)) => m.into_iter().collect(),
        _ => BTreeMap::new(),
    }
}

impl RunRecord {
    /// An empty record of `kind` made by patchbench, started now, with the system it runs on
    /// and its settings; results, label and end time are filled in by the caller.
    pub fn new(kind: Kind, system: SystemInfo, config: &impl Serialize) -> RunRecord {
        RunRecord {
            schema: SCHEMA.to_string(),
            kind,
            label: None,
            source: Some("patchbench".to_string()),
            system,
            config: config_map(config),
            started_at: crate::clock::now_rfc3339(),
            finished_at: String::new(),
            tests: Vec::new(),
            indexes: Vec::new(),
            blocks: Vec::new(),
            aim7: None,
            will_it_scale: None,
            model: None,
            exec: None,
            monitors: Vec::new(),
            metrics: Vec::new(),
            error: None,
            extra: BTreeMap::new(),
            incomplete: false,
            uuid: Some(new_uuid()),
            campaign: None,
        }
    }

    /// Parses a result document of this schema or of `patchbench.run/1`.
    pub fn from_json(text: &str) -> anyhow::Result<RunRecord> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| anyhow::anyhow!("not valid JSON ({e})"))?;
        RunRecord::from_value(value)
    }

    /// Like [`RunRecord::from_json`], from parsed JSON.
    pub fn from_value(mut value: serde_json::Value) -> anyhow::Result<RunRecord> {
        upgrade(&mut value)?;
        serde_json::from_value(value).map_err(|e| anyhow::anyhow!("malformed result ({e})"))
    }

    /// The document as pretty JSON with a final newline.
    pub fn to_json(&self) -> anyhow::Result<Vec<u8>> {
        let mut text = serde_json::to_vec_pretty(self)?;
        text.push(b'\n');
        Ok(text)
    }
}

/// Brings a parsed result document to this schema in place (a `/1` document's untyped
/// sections move to the typed fields); refuses other schemas.
pub fn upgrade(value: &mut serde_json::Value) -> anyhow::Result<()> {
    let schema = value
        .get("schema")
        .and_then(|s| s.as_str())
        .ok_or_else(|| anyhow::anyhow!("not a patchbench result (no \"schema\" field)"))?;
    match schema {
        SCHEMA => {}
        SCHEMA_V1 => upgrade_v1(value),
        other => anyhow::bail!(
            "result schema {other:?} is not supported by this patchbench (it reads \
             {SCHEMA:?} and {SCHEMA_V1:?})"
        ),
    }
    Ok(())
}

/// Moves a `/1` document's untyped `extra` sections into the `/2` fields.
fn upgrade_v1(value: &mut serde_json::Value) {
    let Some(doc) = value.as_object_mut() else {
        return;
    };
    doc.insert("schema".into(), SCHEMA.into());
    let mut extra = match doc.remove("extra") {
        Some(serde_json::Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    extra.remove("store_id");
    for (from, to) in [("blocks", "blocks"), ("error", "error"), ("aim7", "aim7")] {
        if let Some(v) = extra.remove(from) {
            doc.insert(to.into(), v);
        }
    }
    if let Some(points) = extra.remove("points") {
        doc.insert(
            "will_it_scale".into(),
            serde_json::json!({ "points": points }),
        );
    }
    doc.insert("extra".into(), serde_json::Value::Object(extra));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_key_lists_params_in_order() {
        let m = Metric::new(
            "unixbench.score",
            &[("test", "pipe".into()), ("copies", "2".into())],
            "Pipe Throughput",
            "lps",
            Direction::HigherIsBetter,
            1.0,
            vec![],
        );
        assert_eq!(m.key(), "unixbench.score[copies=2,test=pipe]");
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

    #[test]
    fn config_structs_become_the_config_map() {
        #[derive(Serialize)]
        struct C {
            copies: Vec<u32>,
            passes: Option<u32>,
        }
        let m = config_map(&C {
            copies: vec![1, 2],
            passes: None,
        });
        assert_eq!(m["copies"], serde_json::json!([1, 2]));
        assert!(m["passes"].is_null());
    }
}
