//! AIM7 `multitask` output (aim7.md §3): after the header
//! `Tasks    jobs/min  jti  jobs/min/task      real       cpu`, one row per load point with
//! tasks, jobs/min, jti, jobs/min/task, real and cpu, then a date. Each row becomes the
//! metrics `aim7.jobs-per-min`, `aim7.jti`, `aim7.jobs-per-min-per-task`, `aim7.real` and
//! `aim7.cpu` with params `test` and `load`, the names lkp-tests and `patchbench aim7` use.

use super::{field_count, field_number, imported_record, line_error, LineError, Results};
use crate::record::domain::Domain;
use crate::record::{Direction, Kind, Metric, RunRecord};
use crate::sysinfo::SystemInfo;
use regex::Regex;
use std::collections::BTreeMap;
use std::sync::LazyLock;

static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    super::constant_regex(r"^\s*Tasks\s+jobs/min\s+jti\s+jobs/min/task\s+real\s+cpu\s*$")
});
static ROW: LazyLock<Regex> = LazyLock::new(|| {
    super::constant_regex(
        r"^\s*(\d+)\s+(\d+\.\d+)\s+(-?\d+)\s+(\d+\.\d+)\s+(\d+\.\d+)\s+(\d+\.\d+)(\s.*)?$",
    )
});
/// A line that starts like a row (a number) but is not a whole one.
static ROW_START: LazyLock<Regex> = LazyLock::new(|| super::constant_regex(r"^\s*-?\d"));

/// A multitask header line (a substring test first: the regex is the slow part of a long log).
fn is_header(line: &str) -> bool {
    line.contains("jobs/min") && HEADER.is_match(line)
}

/// True when the text holds a multitask result header.
pub fn looks_like(text: &str) -> bool {
    text.lines().any(is_header)
}

/// Parses every load point after every header (several runs of multitask in one log are
/// several load points; the same load twice is refused, as each file is one run). Every
/// number is checked against its metric's domain at its line; a line that starts like a row
/// but is not a complete one is refused as cut off.
pub fn parse(text: &str, test: &str) -> Result<RunRecord, LineError> {
    let mut metrics = Results::default();
    let mut in_table: Option<usize> = None;
    let mut rows_in_table = 0;
    let mut loads = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if is_header(line) {
            in_table = Some(n);
            rows_in_table = 0;
            continue;
        }
        let Some(header) = in_table else { continue };
        if let Some(c) = ROW.captures(line) {
            let load = field_count(n, "tasks", &c[1])?;
            let f = |k: usize, column: &str, metric: &str| {
                field_number(n, column, &c[k], Domain::of(metric))
            };
            let fields = [
                (
                    "aim7.jobs-per-min",
                    "jobs/min",
                    "jobs/min",
                    f(2, "jobs/min", "aim7.jobs-per-min")?,
                    Direction::HigherIsBetter,
                ),
                (
                    "aim7.jti",
                    "JTI",
                    "%",
                    f(3, "jti", "aim7.jti")?,
                    Direction::HigherIsBetter,
                ),
                (
                    "aim7.jobs-per-min-per-task",
                    "jobs/min/task",
                    "jobs/min",
                    f(4, "jobs/min/task", "aim7.jobs-per-min-per-task")?,
                    Direction::HigherIsBetter,
                ),
                (
                    "aim7.real",
                    "real time",
                    "s",
                    f(5, "real", "aim7.real")?,
                    Direction::LowerIsBetter,
                ),
                (
                    "aim7.cpu",
                    "CPU time",
                    "s",
                    f(6, "cpu", "aim7.cpu")?,
                    Direction::LowerIsBetter,
                ),
            ];
            loads.push(serde_json::json!(load));
            let p = [("test", test.to_string()), ("load", load.to_string())];
            for (name, title, unit, value, direction) in fields {
                let m = Metric::new(
                    name,
                    &p,
                    format!("AIM7 {test} {title}"),
                    unit,
                    direction,
                    value,
                    Vec::new(),
                );
                metrics.add(m, n)?;
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
        } else if ROW_START.is_match(line) {
            return line_error(
                n,
                format!(
                    "not a complete AIM7 row (tasks, jobs/min, jti, jobs/min/task, real, cpu): \
                     {:?} (file cut off or edited?)",
                    line.trim()
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
    let metrics = metrics.into_vec();
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
