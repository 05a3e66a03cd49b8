//! Building the run's [`RunRecord`] as tests finish: configuration, per-copy-count blocks with
//! their times, test results, index scores, and the flat metrics `compare` reads.

use super::{scoring, Plan};
use crate::record::{params, Direction, Metric, RunRecord, TestResult};
use crate::sysinfo::SystemInfo;
use serde_json::{json, Value};
use std::collections::BTreeMap;

use crate::clock::now_rfc3339;

/// A record for a run that is about to start.
pub fn new_record(plan: &Plan, label: Option<String>) -> RunRecord {
    let mut config = BTreeMap::new();
    config.insert(
        "tests".into(),
        json!(plan.tests.iter().map(|t| t.id).collect::<Vec<_>>()),
    );
    config.insert("copies".into(), json!(plan.copies));
    config.insert("passes".into(), json!(plan.passes));
    config.insert("duration".into(), json!(plan.duration));
    config.insert("settle".into(), json!(plan.settle));
    config.insert("profile".into(), json!(plan.profile));
    config.insert("precision".into(), json!(plan.precision));
    config.insert("max_time".into(), json!(plan.max_time));
    config.insert("dir".into(), json!(plan.dir.display().to_string()));
    let fs = crate::fsinfo::collect(&plan.dir);
    config.insert("dir_fstype".into(), json!(fs.fs_type));
    config.insert("dir_mount".into(), json!(fs.summary()));
    let mut system = SystemInfo::collect();
    system.lang = "en_US.utf8".into();
    RunRecord {
        label,
        ..RunRecord::new("unixbench", system, config)
    }
}

fn blocks(record: &mut RunRecord) -> &mut Vec<Value> {
    let v = record
        .extra
        .entry("blocks".into())
        .or_insert_with(|| json!([]));
    if !v.is_array() {
        *v = json!([]);
    }
    v.as_array_mut().expect("just made an array")
}

/// Marks the start of the block of tests at `copies` copies.
pub fn begin_block(record: &mut RunRecord, copies: u32) {
    let now = now_rfc3339();
    blocks(record).push(json!({"copies": copies, "started_at": now, "finished_at": null}));
}

/// Marks the end of the block at `copies` copies.
pub fn end_block(record: &mut RunRecord, copies: u32) {
    let now = now_rfc3339();
    if let Some(b) = blocks(record)
        .iter_mut()
        .rev()
        .find(|b| b["copies"] == json!(copies))
    {
        b["finished_at"] = json!(now);
    }
}

/// Appends a finished test and recomputes the index scores and metrics.
pub fn add_test(record: &mut RunRecord, result: TestResult) {
    record.tests.push(result);
    let mut copies: Vec<u32> = record.tests.iter().map(|t| t.copies).collect();
    copies.dedup();
    let refs: Vec<&TestResult> = record.tests.iter().collect();
    record.indexes = copies
        .iter()
        .filter_map(|&c| scoring::index_score(&refs, c))
        .collect();
    record.metrics = metrics(record);
}

/// Sets the end time and closes any block left open by an interruption.
pub fn finish(record: &mut RunRecord) {
    let now = now_rfc3339();
    for b in blocks(record).iter_mut() {
        if b["finished_at"].is_null() {
            b["finished_at"] = json!(now);
        }
    }
    record.finished_at = now;
}

/// The flat metrics of a UnixBench record: `unixbench.score` per test and copy count (samples:
/// the kept passes' rates) and `unixbench.index` per copy count.
pub fn metrics(record: &RunRecord) -> Vec<Metric> {
    let mut out = Vec::new();
    for t in &record.tests {
        out.push(Metric {
            name: "unixbench.score".into(),
            params: params(&[("test", t.test.clone()), ("copies", t.copies.to_string())]),
            title: t.name.clone(),
            unit: t.unit.clone(),
            direction: Direction::HigherIsBetter,
            value: t.score,
            samples: t.passes.iter().filter(|p| p.kept).map(|p| p.rate).collect(),
        });
    }
    for i in &record.indexes {
        out.push(Metric {
            name: "unixbench.index".into(),
            params: params(&[("copies", i.copies.to_string())]),
            title: format!("{} Index Score", i.category),
            unit: "index".into(),
            direction: Direction::HigherIsBetter,
            value: i.score,
            samples: Vec::new(),
        });
    }
    out
}
