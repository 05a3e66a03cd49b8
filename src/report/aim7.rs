//! AIM7's output, as `multitask` prints it: per load point a heading and AIM's table header,
//! one row per run (`%5d%12.2f%5d%15.4f%10.2f%10.2f` and the date, as ctime() prints it), and
//! with repeats the mean of the runs. [`LiveTable`] prints it as the record grows.

use crate::record::aim7::{Aim7Point, Figures};
use crate::record::RunRecord;
use std::fmt::Write;

/// AIM's table header, exactly as `multitask` prints it.
pub const HEADER: &str = "Tasks    jobs/min  jti  jobs/min/task      real       cpu";

/// AIM's row.
pub fn row(f: &Figures) -> String {
    format!(
        "{:5}{:12.2}{:5}{:15.4}{:10.2}{:10.2}",
        f.tasks, f.jobs_per_min, f.jti, f.jobs_per_min_per_task, f.real, f.cpu
    )
}

/// The date at the end of AIM's row, as ctime() prints it, in local time.
pub fn ctime_now() -> String {
    let now = time::OffsetDateTime::now_local().unwrap_or_else(|_| time::OffsetDateTime::now_utc());
    let fmt = time::macros::format_description!(
        "[weekday repr:short] [month repr:short] [day padding:space] [hour]:[minute]:[second] [year]"
    );
    now.format(&fmt).unwrap_or_default()
}

/// The heading of a load point.
pub fn heading(p: &Aim7Point, start_delay: bool) -> String {
    format!(
        "\n{}: {} tasks x {} jobs ({} {} per job){}\n{HEADER}\n",
        p.test,
        p.load,
        p.jobs_per_task,
        p.factor,
        p.units,
        if start_delay {
            ", with AIM's 10 s start delay"
        } else {
            ""
        }
    )
}

/// `mean of 3 runs: 15431.00 jobs/min (min …, max …)`.
pub fn mean_line(p: &Aim7Point) -> String {
    let jpm: Vec<f64> = p.runs.iter().map(|r| r.figures.jobs_per_min).collect();
    let (lo, hi) = jpm
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    format!(
        "mean of {} runs: {:.2} jobs/min (min {lo:.2}, max {hi:.2})\n",
        jpm.len(),
        crate::stats::mean(&jpm).unwrap_or(0.0)
    )
}

/// Prints AIM's output as a record grows: the directories first, then for each load point
/// its heading when it starts, a row per finished run, and the mean when its last run is in.
#[derive(Debug, Default)]
pub struct LiveTable {
    dirs_shown: bool,
    /// Per point already shown: rows printed, and whether the mean line was.
    shown: Vec<(usize, bool)>,
}

impl LiveTable {
    pub fn new() -> LiveTable {
        LiveTable::default()
    }

    /// What the record gained since the last call.
    pub fn render(&mut self, record: &RunRecord) -> String {
        let mut out = String::new();
        let Some(d) = &record.aim7 else {
            return out;
        };
        if !self.dirs_shown {
            for f in &d.filesystems {
                let _ = writeln!(out, "dir {}: {}", f.dir, f.summary());
            }
            self.dirs_shown = true;
        }
        let runs_per_point = record
            .config
            .get("runs")
            .and_then(|v| v.as_u64())
            .unwrap_or(1) as usize;
        let delay = record
            .config
            .get("aim_start_delay_seconds")
            .and_then(|v| v.as_u64())
            .unwrap_or(0)
            > 0;
        for (i, p) in d.points.iter().enumerate() {
            if i == self.shown.len() {
                out.push_str(&heading(p, delay));
                self.shown.push((0, false));
            }
            let (rows, mean) = &mut self.shown[i];
            for r in &p.runs[*rows..] {
                let _ = writeln!(out, "{}  {}", row(&r.figures), ctime_now());
            }
            *rows = p.runs.len();
            if !*mean && p.runs.len() >= runs_per_point && runs_per_point > 1 {
                out.push_str(&mean_line(p));
                *mean = true;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_row_matches_aims_printf_widths() {
        let f = Figures {
            tasks: 3000,
            jobs_per_min: 15431.0,
            jti: 95,
            jobs_per_min_per_task: 5.143667,
            real: 1166.48,
            cpu: 2200.5,
        };
        let row = row(&f);
        assert_eq!(
            row,
            " 3000    15431.00   95         5.1437   1166.48   2200.50"
        );
        assert_eq!(row.split_whitespace().count(), 6);
        assert_eq!(
            HEADER.split_whitespace().collect::<Vec<_>>(),
            ["Tasks", "jobs/min", "jti", "jobs/min/task", "real", "cpu"]
        );
    }
}
