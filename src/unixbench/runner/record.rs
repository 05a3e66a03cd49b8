//! Building the run's [`RunRecord`] as tests finish: configuration, per-copy-count blocks with
//! their times, test results, index scores, and the flat metrics `compare` reads.

use super::{scoring, Plan, Skipped};
use crate::clock::now_rfc3339;
use crate::record::monitors;
use crate::record::{Block, Direction, Kind, Metric, RunRecord, TestResult};
use crate::sysinfo::SystemInfo;
use crate::unixbench::catalog::SYSTEM_CATEGORY;
use serde::Serialize;

/// The settings a UnixBench run records.
#[derive(Debug, Clone, Serialize)]
pub struct Config {
    pub tests: Vec<&'static str>,
    pub copies: Vec<u32>,
    pub passes: Option<u32>,
    pub duration: Option<f64>,
    pub settle: bool,
    pub profile: &'static str,
    pub precision: Option<f64>,
    pub max_time: Option<f64>,
    pub dir: String,
    pub dir_fstype: String,
    pub dir_mount: String,
    /// Selected tests left out because a program they need is missing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Skipped>,
}

/// A record for a run that is about to start, with the fingerprint the command took.
pub fn new_record(plan: &Plan, label: Option<String>, mut system: SystemInfo) -> RunRecord {
    let fs = crate::fsinfo::collect(&plan.dir);
    let config = Config {
        tests: plan.tests.iter().map(|t| t.id).collect(),
        copies: plan.copies.clone(),
        passes: plan.passes,
        duration: plan.duration,
        settle: plan.settle,
        profile: plan.profile,
        precision: plan.precision,
        max_time: plan.max_time,
        dir: plan.dir.display().to_string(),
        dir_fstype: fs.fs_type.clone(),
        dir_mount: fs.summary(),
        skipped: plan.skipped.clone(),
    };
    system.lang = "en_US.utf8".into();
    RunRecord {
        label,
        ..RunRecord::new(Kind::Unixbench, system, &config)
    }
}

/// Marks the start of the block of tests at `copies` copies.
pub fn begin_block(record: &mut RunRecord, copies: u32) {
    record.blocks.push(Block {
        copies,
        started_at: now_rfc3339(),
        finished_at: None,
    });
}

/// Marks the end of the block at `copies` copies.
pub fn end_block(record: &mut RunRecord, copies: u32) {
    if let Some(b) = record.blocks.iter_mut().rev().find(|b| b.copies == copies) {
        b.finished_at = Some(now_rfc3339());
    }
}

/// Keeps what the monitors saw over a test's passes, as the unit `test`, `copies`; its
/// operations are the passes' counts (for tests whose count is not a rate).
pub fn add_monitors(record: &mut RunRecord, t: &TestResult, sample: crate::monitor::Sample) {
    let ops = (t.timebase > 0).then(|| t.passes.iter().map(|p| p.count).sum::<f64>());
    record.monitors.push(monitors::Unit::new(
        &[("test", t.test.clone()), ("copies", t.copies.to_string())],
        t.name.clone(),
        ops,
        sample,
    ));
}

/// Appends a finished test and recomputes the index scores and metrics.
pub fn add_test(record: &mut RunRecord, result: TestResult) {
    record.tests.push(result);
    let mut copies: Vec<u32> = record.tests.iter().map(|t| t.copies).collect();
    copies.dedup();
    let refs: Vec<&TestResult> = record.tests.iter().collect();
    record.indexes = copies
        .iter()
        .flat_map(|&c| scoring::index_scores(&refs, c))
        .collect();
    record.metrics = metrics(record);
    record.finished_at = now_rfc3339();
}

/// Sets the end time and closes any block left open by an interruption.
pub fn finish(record: &mut RunRecord) {
    let now = now_rfc3339();
    for b in record.blocks.iter_mut() {
        if b.finished_at.is_none() {
            b.finished_at = Some(now.clone());
        }
    }
    record.finished_at = now;
}

/// The flat metrics of a UnixBench record: `unixbench.score` per test and copy count (samples:
/// the kept passes' rates) and `unixbench.index` per copy count (and, for a category other
/// than System Benchmarks, per category).
pub fn metrics(record: &RunRecord) -> Vec<Metric> {
    let mut out = Vec::new();
    for t in &record.tests {
        out.push(Metric::new(
            "unixbench.score",
            &[("test", t.test.clone()), ("copies", t.copies.to_string())],
            t.name.clone(),
            t.unit.clone(),
            Direction::HigherIsBetter,
            t.score,
            t.passes.iter().filter(|p| p.kept).map(|p| p.rate).collect(),
        ));
    }
    for i in &record.indexes {
        let mut params = vec![("copies", i.copies.to_string())];
        if i.category != SYSTEM_CATEGORY {
            params.push(("category", i.category.clone()));
        }
        out.push(Metric::new(
            "unixbench.index",
            &params,
            format!("{} Index Score", i.category),
            "index",
            Direction::HigherIsBetter,
            i.score,
            Vec::new(),
        ));
    }
    // Each test's score per CPU-second of its copies, then the monitor rows.
    for u in &record.monitors {
        let test = record.tests.iter().find(|t| {
            Some(&t.test) == u.params.get("test")
                && Some(&t.copies.to_string()) == u.params.get("copies")
        });
        if let Some(t) = test {
            out.extend(monitors::per_cpu_second(
                "unixbench.score-per-cpu-s",
                u,
                &t.name,
                &count_unit(&t.unit),
            ));
        }
    }
    out.extend(monitors::metrics(&record.monitors));
    out
}

/// What a test counts, from its rate's unit (`lps` counts loops, `lpm` loops, `KBps` KB).
fn count_unit(rate_unit: &str) -> String {
    match rate_unit {
        "lps" | "lpm" => "loops".to_string(),
        "KBps" => "KB".to_string(),
        other => other.to_string(),
    }
}
