//! will-it-scale `runtest.py` CSV (will-it-scale.md §3): header
//! `tasks,processes,processes_idle,threads,threads_idle,linear`, one row per task count. Each
//! row gives `will-it-scale.per_process_ops` = total ops/s ÷ tasks with params `test`, `tasks`
//! and `mode` (`process` or `thread`), the names `patchbench scale` uses. The `0,0,100,…`
//! row and zero results (a mode that was not run) are skipped.

use super::{imported_record, line_error, LineError};
use crate::record::{Direction, Kind, Metric, RunRecord};
use crate::sysinfo::SystemInfo;
use std::collections::BTreeMap;

const HEADER: &str = "tasks,processes,processes_idle,threads,threads_idle,linear";

/// True when the first non-empty line is runtest.py's header.
pub fn looks_like(text: &str) -> bool {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.trim().replace(' ', "") == HEADER)
}

pub fn parse(text: &str, test: &str) -> Result<RunRecord, LineError> {
    let mut metrics = Vec::new();
    let mut tasks_seen = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .skip_while(|(_, l)| l.trim().is_empty())
        .skip(1)
    {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != 6 {
            return line_error(
                n,
                format!(
                    "expected 6 comma-separated fields, found {} (file cut off?)",
                    fields.len()
                ),
            );
        }
        let mut v = [0.0f64; 6];
        for (k, f) in fields.iter().enumerate() {
            v[k] = f
                .parse()
                .or_else(|_| line_error(n, format!("{f:?} is not a number")))?;
        }
        let tasks = v[0];
        if tasks < 1.0 {
            continue;
        }
        tasks_seen.push(serde_json::json!(tasks as u64));
        for (mode, total) in [("process", v[1]), ("thread", v[3])] {
            if total <= 0.0 {
                continue;
            }
            metrics.push(Metric::new(
                "will-it-scale.per_process_ops",
                &[
                    ("test", test.to_string()),
                    ("tasks", (tasks as u64).to_string()),
                    ("mode", mode.to_string()),
                ],
                format!("will-it-scale {test} {mode} ×{}", tasks as u64),
                "ops/s",
                Direction::HigherIsBetter,
                total / tasks,
                Vec::new(),
            ));
        }
    }
    if metrics.is_empty() {
        return line_error(
            0,
            "the will-it-scale CSV has no result rows (file cut off?)",
        );
    }
    let mut config = BTreeMap::new();
    config.insert("test".to_string(), serde_json::json!(test));
    config.insert("tasks".to_string(), serde_json::Value::Array(tasks_seen));
    Ok(imported_record(
        Kind::WillItScale,
        SystemInfo::default(),
        config,
        metrics,
    ))
}
