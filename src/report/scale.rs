//! will-it-scale's tables: the points of a run grouped into one scaling curve per testcase,
//! as will-it-scale's CSV (`tasks,processes,processes_idle,threads,threads_idle,linear`, with a
//! leading `test` column so several testcases fit one file) and as the text summary `scale`
//! prints. The SVG plot is in `scale_svg`.

use crate::record::will_it_scale::ScalePoint;
use crate::record::RunRecord;
use anyhow::{Context, Result};

/// One row of a curve; a mode that did not run is None.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub tasks: usize,
    pub processes: Option<f64>,
    pub processes_idle: Option<f64>,
    pub threads: Option<f64>,
    pub threads_idle: Option<f64>,
    /// The better mode at the smallest task count, scaled per task: perfect scaling.
    pub linear: f64,
}

/// A testcase's scaling curve.
#[derive(Debug, Clone)]
pub struct Curve {
    pub test: String,
    pub description: String,
    pub rows: Vec<Row>,
}

/// The points of a record.
pub fn points(record: &RunRecord) -> &[ScalePoint] {
    record
        .will_it_scale
        .as_ref()
        .map(|d| d.points.as_slice())
        .unwrap_or(&[])
}

/// Groups points into one curve per testcase (in first-seen order), rows by task count.
pub fn curves(points: &[ScalePoint]) -> Vec<Curve> {
    let mut out: Vec<Curve> = Vec::new();
    for p in points {
        let idx = match out.iter().position(|c| c.test == p.test) {
            Some(i) => i,
            None => {
                out.push(Curve {
                    test: p.test.clone(),
                    description: p.description.clone(),
                    rows: Vec::new(),
                });
                out.len() - 1
            }
        };
        let rows = &mut out[idx].rows;
        let r = match rows.iter().position(|r| r.tasks == p.tasks) {
            Some(i) => i,
            None => {
                rows.push(Row {
                    tasks: p.tasks,
                    processes: None,
                    processes_idle: None,
                    threads: None,
                    threads_idle: None,
                    linear: 0.0,
                });
                rows.len() - 1
            }
        };
        let (ops, idle) = (Some(p.ops_per_sec), p.idle_percent);
        if p.mode == "threads" {
            (rows[r].threads, rows[r].threads_idle) = (ops, idle);
        } else {
            (rows[r].processes, rows[r].processes_idle) = (ops, idle);
        }
    }
    for c in &mut out {
        c.rows.sort_by_key(|r| r.tasks);
        let per_task = c.rows.first().map_or(0.0, |r| {
            r.processes.unwrap_or(0.0).max(r.threads.unwrap_or(0.0)) / r.tasks as f64
        });
        for r in &mut c.rows {
            r.linear = per_task * r.tasks as f64;
        }
    }
    out
}

/// The CSV: will-it-scale's columns after `test`, and its `0,0,100,0,100,0` first row.
pub fn csv(curves: &[Curve]) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "test",
        "tasks",
        "processes",
        "processes_idle",
        "threads",
        "threads_idle",
        "linear",
    ])?;
    let f = |v: Option<f64>| v.map(|x| format!("{x:.0}")).unwrap_or_default();
    let pct = |v: Option<f64>| v.map(|x| format!("{x:.2}")).unwrap_or_default();
    for c in curves {
        w.write_record([c.test.as_str(), "0", "0", "100", "0", "100", "0"])?;
        for r in &c.rows {
            w.write_record([
                c.test.clone(),
                r.tasks.to_string(),
                f(r.processes),
                pct(r.processes_idle),
                f(r.threads),
                pct(r.threads_idle),
                format!("{:.0}", r.linear),
            ])?;
        }
    }
    w.into_inner().context("cannot format the CSV")
}

/// The CSV of a record, or None before its first point.
pub fn csv_of(record: &RunRecord) -> Result<Option<Vec<u8>>> {
    let p = points(record);
    if p.is_empty() {
        return Ok(None);
    }
    csv(&curves(p)).map(Some)
}

/// The text report: one table per testcase, will-it-scale's columns.
pub fn summary(curves: &[Curve]) -> String {
    let mut s = String::new();
    let f = |v: Option<f64>| v.map(|x| format!("{x:.0}")).unwrap_or_else(|| "-".into());
    let p = |v: Option<f64>| v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "-".into());
    for c in curves {
        s.push_str(&format!("\n{}: {}\n", c.test, c.description));
        s.push_str(&format!(
            "{:>6} {:>14} {:>7} {:>14} {:>7} {:>14}\n",
            "tasks", "processes", "idle%", "threads", "idle%", "linear"
        ));
        for r in &c.rows {
            s.push_str(&format!(
                "{:>6} {:>14} {:>7} {:>14} {:>7} {:>14.0}\n",
                r.tasks,
                f(r.processes),
                p(r.processes_idle),
                f(r.threads),
                p(r.threads_idle),
                r.linear
            ));
        }
    }
    s
}

/// The summary of a record (empty before its first point).
pub fn summary_of(record: &RunRecord) -> String {
    summary(&curves(points(record)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(mode: &str, tasks: usize, per_sec: f64) -> ScalePoint {
        ScalePoint {
            test: "t".into(),
            description: "d".into(),
            mode: mode.into(),
            tasks,
            ops_per_sec: per_sec,
            ops_per_sec_per_task: per_sec / tasks as f64,
            idle_percent: Some(50.0),
            measured_seconds: 1.0,
            samples: vec![per_sec],
            warmup_samples: vec![],
            per_task_ops: vec![per_sec as u64 / tasks as u64; tasks],
            counters_per_op: None,
        }
    }

    #[test]
    fn linear_scales_the_best_single_task_result() {
        let pts = [
            point("processes", 1, 100.0),
            point("threads", 1, 120.0),
            point("processes", 2, 180.0),
        ];
        let c = curves(&pts);
        assert_eq!(c.len(), 1);
        let rows = &c[0].rows;
        assert_eq!(rows[0].linear, 120.0);
        assert_eq!(rows[1].linear, 240.0);
        assert_eq!(rows[1].threads, None);
        let text = String::from_utf8(csv(&c).unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "test,tasks,processes,processes_idle,threads,threads_idle,linear"
        );
        assert_eq!(lines[1], "t,0,0,100,0,100,0");
        assert_eq!(lines[2], "t,1,100,50.00,120,50.00,120");
        assert_eq!(lines[3], "t,2,180,50.00,,,240");
    }
}
