//! Scaling curves as will-it-scale's CSV (`tasks,processes,processes_idle,threads,
//! threads_idle,linear`, with a leading `test` column so several testcases fit one file), and
//! the atomic file writes every output uses.

use crate::counter_harness::{Mode, Outcome};
use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

/// One measured point: a testcase at a task count in one mode.
#[derive(Debug, Clone)]
pub struct Point {
    pub test: String,
    pub description: String,
    pub mode: Mode,
    pub tasks: usize,
    pub outcome: Outcome,
}

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

/// Groups points into one curve per testcase (in first-seen order), rows by task count.
pub fn curves(points: &[Point]) -> Vec<Curve> {
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
        let (ops, idle) = (Some(p.outcome.average()), p.outcome.idle_percent);
        match p.mode {
            Mode::Process => (rows[r].processes, rows[r].processes_idle) = (ops, idle),
            Mode::Thread => (rows[r].threads, rows[r].threads_idle) = (ops, idle),
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

/// The CSV text: will-it-scale's columns after `test`, and its `0,0,100,0,100,0` first row.
pub fn csv_text(curves: &[Curve]) -> Result<Vec<u8>> {
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

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so
/// an interrupted write never leaves half a file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    use std::os::unix::fs::PermissionsExt;
    let mut tmp = tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o644))
        .tempfile_in(&dir)
        .with_context(|| format!("cannot write {}", path.display()))?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter_harness::Sample;

    fn point(mode: Mode, tasks: usize, per_sec: u64) -> Point {
        Point {
            test: "t".into(),
            description: "d".into(),
            mode,
            tasks,
            outcome: Outcome {
                warmup: vec![],
                measured: vec![Sample {
                    seconds: 1.0,
                    per_task: vec![per_sec / tasks as u64; tasks],
                }],
                aux: vec![],
                idle_percent: Some(50.0),
                counters: None,
            },
        }
    }

    #[test]
    fn linear_scales_the_best_single_task_result() {
        let pts = [
            point(Mode::Process, 1, 100),
            point(Mode::Thread, 1, 120),
            point(Mode::Process, 2, 180),
        ];
        let c = curves(&pts);
        assert_eq!(c.len(), 1);
        let rows = &c[0].rows;
        assert_eq!(rows[0].linear, 120.0);
        assert_eq!(rows[1].linear, 240.0);
        assert_eq!(rows[1].threads, None);
        let text = String::from_utf8(csv_text(&c).unwrap()).unwrap();
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
