//! will-it-scale's tables: the points of a run grouped into one scaling curve per testcase,
//! will-it-scale's files for them byte for byte as its `runtest.py` writes them, and the text
//! summary `scale` prints (integers, as will-it-scale prints them). The CSV is
//! `tasks,processes,processes_idle,threads,threads_idle,linear`, first row `0,0,100,0,100,0`,
//! then `%d,%d,%0.2f,%d,%0.2f,%d` per task count: ops/s as the integer its harness prints, a
//! mode that did not run as `0,0.00`, `linear` from the 1-task row or 0 without one. The
//! `<test>.title` file holds the description. The SVG plot is in `scale_svg`.

use crate::record::will_it_scale::ScalePoint;
use crate::record::RunRecord;

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
        let (ops, idle) = (Some(p.ops_per_sec), p.idle_percent);
        if p.mode == "threads" {
            (rows[r].threads, rows[r].threads_idle) = (ops, idle);
        } else {
            (rows[r].processes, rows[r].processes_idle) = (ops, idle);
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

/// The curve of testcase `test` in a record, or None before its first point.
pub fn curve_of(record: &RunRecord, test: &str) -> Option<Curve> {
    let mine: Vec<ScalePoint> = points(record)
        .iter()
        .filter(|p| p.test == test)
        .cloned()
        .collect();
    curves(&mine).into_iter().next()
}

/// The CSV file of testcase `test` in a record, or None before its first point.
pub fn csv_of(record: &RunRecord, test: &str) -> Option<Vec<u8>> {
    curve_of(record, test).map(|c| csv_text(&c).into_bytes())
}

/// The `<test>.title` file of testcase `test` in a record, or None before its first point.
pub fn title_of(record: &RunRecord, test: &str) -> Option<Vec<u8>> {
    curve_of(record, test).map(|c| title_text(&c).into_bytes())
}

/// The text report: one table per testcase, will-it-scale's columns and integers.
pub fn summary(curves: &[Curve]) -> String {
    let mut s = String::new();
    let f = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_else(|| "-".into());
    let p = |v: Option<f64>| v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "-".into());
    let int = |v: Option<f64>| v.map(|x| ops(Some(x)));
    for c in curves {
        s.push_str(&format!("\n{}: {}\n", c.test, c.description));
        s.push_str(&format!(
            "{:>6} {:>14} {:>7} {:>14} {:>7} {:>14}\n",
            "tasks", "processes", "idle%", "threads", "idle%", "linear"
        ));
        for r in &c.rows {
            s.push_str(&format!(
                "{:>6} {:>14} {:>7} {:>14} {:>7} {:>14}\n",
                r.tasks,
                f(int(r.processes)),
                p(r.processes_idle),
                f(int(r.threads)),
                p(r.threads_idle),
                f(linear_ops(c, r.tasks))
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
            measured_idle_percent: None,
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
        // will-it-scale prints the integer part: 4002 ops/s stays 4002, 1000.75 becomes 1000.
        let p = point("processes", 2, 4002.0);
        let mut q = point("processes", 4, 1000.75);
        q.idle_percent = Some(12.345);
        let c = curves(&[p, q]);
        assert_eq!(c[0].one_task, None);
        let text = csv_text(&c[0]);
        let rows: Vec<&str> = text.lines().skip(2).collect();
        assert_eq!(rows, ["2,4002,50.00,0,0.00,0", "4,1000,12.35,0,0.00,0"]);
        let table = summary(&c);
        assert!(table.contains("4002"), "{table}");
        assert!(
            !table.contains("1000.75") && !table.contains("1001"),
            "{table}"
        );
    }

    #[test]
    fn a_record_gives_each_testcase_its_own_files() {
        let mut other = point("threads", 1, 7.9);
        other.test = "u".into();
        other.description = "e".into();
        let mut record = RunRecord::new(
            crate::record::Kind::WillItScale,
            crate::sysinfo::SystemInfo::default(),
            &(),
        );
        assert_eq!(csv_of(&record, "t"), None);
        record.will_it_scale = Some(crate::record::will_it_scale::ScaleDetails {
            points: vec![point("processes", 1, 100.0), other],
        });
        let t = String::from_utf8(csv_of(&record, "t").unwrap()).unwrap();
        assert_eq!(
            t,
            format!("{CSV_HEADER}\n0,0,100,0,100,0\n1,100,50.00,0,0.00,100\n")
        );
        let u = String::from_utf8(csv_of(&record, "u").unwrap()).unwrap();
        assert!(u.ends_with("\n1,0,0.00,7,50.00,7\n"), "{u}");
        assert_eq!(title_of(&record, "u").unwrap(), b"e\n");
        assert_eq!(title_of(&record, "v"), None);
    }
}
