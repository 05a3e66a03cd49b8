//! AIM7 `multitask` output (aim7.md §3): after the header
//! `Tasks    jobs/min  jti  jobs/min/task      real       cpu`, one row per load point with
//! tasks, jobs/min, jti, jobs/min/task, real and cpu, then a date. Each row becomes the
//! metrics `aim7.jobs-per-min`, `aim7.jti`, `aim7.jobs-per-min-per-task`, `aim7.real` and
//! `aim7.cpu` with params `test` and `load`, the names lkp-tests and `patchbench aim7` use.

use super::{imported_record, line_error, LineError};
use crate::record::{Direction, Kind, Metric, RunRecord};
use crate::sysinfo::SystemInfo;
use regex::Regex;
use std::collections::BTreeMap;
use std::sync::LazyLock;

static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*Tasks\s+jobs/min\s+jti\s+jobs/min/task\s+real\s+cpu\s*$").expect("regex")
});
static ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(\d+)\s+(\d+\.\d+)\s+(\d+)\s+(\d+\.\d+)\s+(\d+\.\d+)\s+(\d+\.\d+)(\s.*)?$")
        .expect("regex")
});

/// True when the text holds a multitask result header.
pub fn looks_like(text: &str) -> bool {
    text.lines().any(|l| HEADER.is_match(l))
}

/// Parses every load point after every header (several runs of multitask in one log are
/// several load points).
pub fn parse(text: &str, test: &str) -> Result<RunRecord, LineError> {
    let mut metrics = Vec::new();
    let mut in_table: Option<usize> = None;
    let mut rows_in_table = 0;
    let mut loads = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if HEADER.is_match(line) {
            in_table = Some(n);
            rows_in_table = 0;
            continue;
        }
        let Some(header) = in_table else { continue };
        if let Some(c) = ROW.captures(line) {
            let f = |k: usize| -> Result<f64, LineError> {
                c[k].parse()
                    .or_else(|_| line_error(n, format!("{:?} is not a number", &c[k])))
            };
            let load = c[1].to_string();
            loads.push(serde_json::json!(f(1)?));
            let p = [("test", test.to_string()), ("load", load)];
            let fields = [
                (
                    "aim7.jobs-per-min",
                    "jobs/min",
                    "jobs/min",
                    f(2)?,
                    Direction::HigherIsBetter,
                ),
                ("aim7.jti", "JTI", "%", f(3)?, Direction::HigherIsBetter),
                (
                    "aim7.jobs-per-min-per-task",
                    "jobs/min/task",
                    "jobs/min",
                    f(4)?,
                    Direction::HigherIsBetter,
                ),
                (
                    "aim7.real",
                    "real time",
                    "s",
                    f(5)?,
                    Direction::LowerIsBetter,
                ),
                ("aim7.cpu", "CPU time", "s", f(6)?, Direction::LowerIsBetter),
            ];
            for (name, title, unit, value, direction) in fields {
                metrics.push(Metric::new(
                    name,
                    &p,
                    format!("AIM7 {test} {title}"),
                    unit,
                    direction,
                    value,
                    Vec::new(),
                ));
            }
            rows_in_table += 1;
        } else if line.trim().is_empty() && rows_in_table == 0 {
            continue;
        } else if rows_in_table == 0 {
            return line_error(
                n,
                format!(
                    "the AIM7 table begun at line {header} has no complete row (file cut off?)"
                ),
            );
        } else {
            in_table = None;
        }
    }
    if let (Some(header), 0) = (in_table, rows_in_table) {
        return line_error(
            header,
            "cut off: the AIM7 table has a header but no result row",
        );
    }
    let mut config = BTreeMap::new();
    config.insert("test".to_string(), serde_json::json!(test));
    config.insert("load".to_string(), serde_json::Value::Array(loads));
    Ok(imported_record(
        Kind::Aim7,
        SystemInfo::default(),
        config,
        metrics,
    ))
}
