//! Scaling curves, and will-it-scale's files for them, byte for byte as its `runtest.py` writes
//! them: the CSV `tasks,processes,processes_idle,threads,threads_idle,linear` (first row
//! `0,0,100,0,100,0`, then `%d,%d,%0.2f,%d,%0.2f,%d` per task count: ops/s as the integer its
//! harness prints, a mode that did not run as `0,0.00`, `linear` from the 1-task row or 0
//! without one) and `<test>.title` (the description). `--csv FILE` takes one testcase;
//! `--csv DIR` gets `<test>.csv` and `<test>.title` for each, as will-it-scale's `runalltests`
//! leaves them for `postprocess.py`. Also the atomic file writes every output uses.

use crate::counter_harness::{Mode, Outcome};
use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

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
    /// Perfect scaling: the better mode at 1 task times the task count (will-it-scale's
    /// `linear`); None without a 1-task row.
    pub linear: Option<f64>,
}

/// A testcase's scaling curve.
#[derive(Debug, Clone)]
pub struct Curve {
    pub test: String,
    pub description: String,
    pub rows: Vec<Row>,
    /// The better of the two modes at 1 task (0 for a mode that did not run).
    pub one_task: Option<f64>,
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
                    one_task: None,
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
                    linear: None,
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
        c.one_task = c
            .rows
            .iter()
            .find(|r| r.tasks == 1)
            .map(|r| r.processes.unwrap_or(0.0).max(r.threads.unwrap_or(0.0)));
        for r in &mut c.rows {
            r.linear = c.one_task.map(|b| b * r.tasks as f64);
        }
    }
    out
}

/// will-it-scale's CSV header.
pub const CSV_HEADER: &str = "tasks,processes,processes_idle,threads,threads_idle,linear";

/// An ops/s figure as will-it-scale's harness prints it: the integer part (its `average` is an
/// integer division); a mode that did not run is 0.
pub fn ops(v: Option<f64>) -> u64 {
    v.map_or(0, |x| x as u64)
}

/// will-it-scale's `linear` at `tasks`: the 1-task figure (as printed) times `tasks`; None
/// without a 1-task row (the CSV then has 0).
pub fn linear_ops(curve: &Curve, tasks: usize) -> Option<u64> {
    curve.one_task.map(|b| ops(Some(b)) * tasks as u64)
}

/// One testcase's CSV, as will-it-scale's runtest.py prints it.
pub fn csv_text(curve: &Curve) -> String {
    let mut s = format!("{CSV_HEADER}\n0,0,100,0,100,0\n");
    for r in &curve.rows {
        s.push_str(&format!(
            "{},{},{:.2},{},{:.2},{}\n",
            r.tasks,
            ops(r.processes),
            r.processes_idle.unwrap_or(0.0),
            ops(r.threads),
            r.threads_idle.unwrap_or(0.0),
            linear_ops(curve, r.tasks).unwrap_or(0)
        ));
    }
    s
}

/// The `<test>.title` file runtest.py writes: the description and a newline.
pub fn title_text(curve: &Curve) -> String {
    format!("{}\n", curve.description)
}

/// Where `--csv` writes.
#[derive(Debug, Clone, PartialEq)]
pub enum CsvTarget {
    /// One testcase's CSV in this file.
    File(PathBuf),
    /// `<test>.csv` and `<test>.title` per testcase in this existing directory.
    Dir(PathBuf),
}

impl CsvTarget {
    /// What `--csv PATH` means for `tests` testcases: an existing directory takes any number;
    /// a file takes exactly one (will-it-scale's CSV has no testcase column). Checked before
    /// anything runs.
    pub fn choose(path: &Path, tests: usize) -> Result<CsvTarget> {
        if path.is_dir() {
            crate::args::check_dir(path)?;
            return Ok(CsvTarget::Dir(path.to_path_buf()));
        }
        if tests > 1 {
            return crate::error::usage(format!(
                "--csv {}: will-it-scale's CSV holds one testcase and {tests} were given; give \
                 an existing directory instead (it gets <test>.csv and <test>.title for each, \
                 as will-it-scale's runalltests writes them)",
                path.display()
            ));
        }
        crate::args::check_output("--csv", path)?;
        Ok(CsvTarget::File(path.to_path_buf()))
    }

    /// Writes the curves; returns the files written.
    pub fn write(&self, curves: &[Curve]) -> Result<Vec<PathBuf>> {
        let mut written = Vec::new();
        match self {
            CsvTarget::File(path) => {
                for c in curves {
                    write_atomic(path, csv_text(c).as_bytes())?;
                    written.push(path.clone());
                }
            }
            CsvTarget::Dir(dir) => {
                for c in curves {
                    let csv = dir.join(format!("{}.csv", c.test));
                    let title = dir.join(format!("{}.title", c.test));
                    write_atomic(&csv, csv_text(c).as_bytes())?;
                    write_atomic(&title, title_text(c).as_bytes())?;
                    written.extend([csv, title]);
                }
            }
        }
        Ok(written)
    }
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
        assert_eq!(rows[0].linear, Some(120.0));
        assert_eq!(rows[1].linear, Some(240.0));
        assert_eq!(rows[1].threads, None);
        assert_eq!(
            csv_text(&c[0]),
            "tasks,processes,processes_idle,threads,threads_idle,linear\n\
             0,0,100,0,100,0\n\
             1,100,50.00,120,50.00,120\n\
             2,180,50.00,0,0.00,240\n"
        );
        assert_eq!(title_text(&c[0]), "d\n");
    }

    #[test]
    fn csv_truncates_as_will_it_scale_and_needs_a_one_task_row_for_linear() {
        let mut p = point(Mode::Process, 2, 0);
        // 2 tasks, 1001 and 1000 ops in 0.5 s: 4002 ops/s, printed as 4002; 1000.75 → 1000.
        p.outcome.measured[0].per_task = vec![1001, 1000];
        p.outcome.measured[0].seconds = 0.5;
        let mut q = point(Mode::Process, 4, 0);
        q.outcome.measured[0].per_task = vec![1000, 1000, 1000, 1003];
        q.outcome.measured[0].seconds = 4.0;
        q.outcome.idle_percent = Some(12.345);
        let c = curves(&[p, q]);
        assert_eq!(c[0].one_task, None);
        let text = csv_text(&c[0]);
        let rows: Vec<&str> = text.lines().skip(2).collect();
        assert_eq!(rows, ["2,4002,50.00,0,0.00,0", "4,1000,12.35,0,0.00,0"]);
    }
}
