//! will-it-scale `runtest.py` CSV (will-it-scale.md §3): header
//! `tasks,processes,processes_idle,threads,threads_idle,linear`, one row per task count. Each
//! row gives `will-it-scale.per_process_ops` = total ops/s ÷ tasks with params `test`, `tasks`
//! and `mode` (`process` or `thread`), the names `patchbench scale` uses. The `0,0,100,…`
//! row and zero results (a mode that was not run) are skipped. Anything else that is not a
//! result is refused with its line and column: a task count that is not a whole number from 1
//! up, a task count given twice, a negative or non-finite number, an idle share outside 0..100.

use super::{field_count, field_number, imported_record, line_error, LineError, Results};
use crate::record::domain::Domain;
use crate::record::{Direction, Kind, Metric, RunRecord};
use crate::sysinfo::SystemInfo;
use std::collections::{BTreeMap, HashMap};

const HEADER: &str = "tasks,processes,processes_idle,threads,threads_idle,linear";

/// True when the first non-empty line is runtest.py's header.
pub fn looks_like(text: &str) -> bool {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.trim().replace(' ', "") == HEADER)
}

pub fn parse(text: &str, test: &str) -> Result<RunRecord, LineError> {
    let mut metrics = Results::default();
    let mut tasks_seen = Vec::new();
    let mut rows: HashMap<u64, usize> = HashMap::new();
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
        // runtest.py's first row, tasks 0, holds the idle baseline: no result.
        if fields[0] == "0" {
            continue;
        }
        let tasks = field_count(n, "tasks", fields[0])?;
        if let Some(first) = rows.insert(tasks, n) {
            return line_error(
                n,
                format!("tasks {tasks} is given a second time (first at line {first})"),
            );
        }
        let mut v = [0.0f64; 6];
        for (k, name) in HEADER.split(',').enumerate().skip(1) {
            let domain = if name.ends_with("_idle") {
                Domain::Range(0.0, 100.0)
            } else {
                Domain::NonNegative
            };
            v[k] = field_number(n, name, fields[k], domain)?;
        }
        tasks_seen.push(serde_json::json!(tasks));
        for (mode, total) in [("process", v[1]), ("thread", v[3])] {
            // A mode that was not run is written as 0.
            if total == 0.0 {
                continue;
            }
            let m = Metric::new(
                "will-it-scale.per_process_ops",
                &[
                    ("test", test.to_string()),
                    ("tasks", tasks.to_string()),
                    ("mode", mode.to_string()),
                ],
                format!("will-it-scale {test} {mode} ×{tasks}"),
                "ops/s",
                Direction::HigherIsBetter,
                total / tasks as f64,
                Vec::new(),
            );
            metrics.add(m, n)?;
        }
    }
    if metrics.is_empty() {
        return line_error(
            0,
            "the will-it-scale CSV has no result rows (file cut off?)",
        );
    }
    let metrics = metrics.into_vec();
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
