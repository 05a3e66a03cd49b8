//! AIM7's output, as `multitask` prints it: per test or mix a title line (what each task runs,
//! and whether AIM's start delay is in `real`) and AIM's table header, one row per run
//! (`%5d%12.2f%5d%15.4f%10.2f%10.2f` and the date, as ctime() prints it) down the series of
//! loads, with repeats the mean of the runs, and where `--until-crossover` stopped a series,
//! the crossover. [`LiveTable`] prints it as the record grows.

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

/// What one job of a point is, for its title.
fn what_a_job_is(p: &Aim7Point) -> String {
    if p.tests.len() > 1 {
        return format!("{} tests of AIM's workfile {}", p.tests.len(), p.test);
    }
    let units = p.units.as_deref().unwrap_or("operations");
    match p.factor {
        Some(_) if p.factor_is_disk_blocks => format!("{units}, by the file's blocks"),
        Some(f) => format!("{f} {units} per job"),
        None => units.to_string(),
    }
}

/// The title line of a test or mix: what each task runs and whether AIM's start delay
/// (`delay_seconds`, 0 for none) is counted in `real`.
pub fn title(p: &Aim7Point, delay_seconds: u64) -> String {
    let delay = if delay_seconds == 0 {
        "no start delay (--no-start-delay): real lacks AIM's 10 s".to_string()
    } else {
        format!("AIM's {delay_seconds} s start delay counted in real")
    };
    format!(
        "{}: {} jobs per task ({}); {delay}",
        p.test,
        p.jobs_per_task,
        what_a_job_is(p)
    )
}

/// The heading of a series of load points: the title and AIM's header, once per test or mix.
pub fn heading(p: &Aim7Point, delay_seconds: u64) -> String {
    format!("\n{}\n{HEADER}\n", title(p, delay_seconds))
}

/// The line after the point where `--until-crossover` stopped a series.
pub fn crossover_line(p: &Aim7Point) -> String {
    format!("crossover at {} tasks: jobs/min/task at most 1.0\n", p.load)
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

/// Prints AIM's output as a record grows: the directories first, then for each test or mix
/// its heading when its first load point starts, a row per finished run, the mean when a
/// point's last run is in, and the crossover where a series stopped at it.
#[derive(Debug, Default)]
pub struct LiveTable {
    dirs_shown: bool,
    /// Per point already shown: rows printed, and whether the mean and crossover lines were.
    shown: Vec<(usize, bool, bool)>,
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
            .unwrap_or(0);
        for (i, p) in d.points.iter().enumerate() {
            if i == self.shown.len() {
                let first_of_series = i == 0 || d.points[i - 1].test != p.test;
                if first_of_series {
                    out.push_str(&heading(p, delay));
                }
                self.shown.push((0, false, false));
            }
            let (rows, mean, crossover) = &mut self.shown[i];
            for r in &p.runs[*rows..] {
                let _ = writeln!(out, "{}  {}", row(&r.figures), ctime_now());
            }
            *rows = p.runs.len();
            if !*mean && p.runs.len() >= runs_per_point && runs_per_point > 1 {
                out.push_str(&mean_line(p));
                *mean = true;
            }
            if !*crossover && p.crossover {
                out.push_str(&crossover_line(p));
                *crossover = true;
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

#[cfg(test)]
mod title_tests {
    use super::*;

    fn point(test: &str, tests: &[&str], factor: Option<u64>, by_blocks: bool) -> Aim7Point {
        Aim7Point {
            test: test.into(),
            load: 10,
            jobs_per_task: 101,
            disk_blocks: 12,
            tests: tests.iter().map(|t| t.to_string()).collect(),
            factor,
            units: factor.map(|_| "File Creations and Closes".into()),
            factor_is_disk_blocks: by_blocks,
            crossover: false,
            runs: Vec::new(),
        }
    }

    #[test]
    fn the_title_says_what_a_job_is_and_whether_the_delay_is_in_real() {
        let one = point("creat-clo", &["creat-clo"], Some(1000), false);
        assert_eq!(
            title(&one, 10),
            "creat-clo: 101 jobs per task (1000 File Creations and Closes per job); \
             AIM's 10 s start delay counted in real"
        );
        let disk = point("disk_rr", &["disk_rr"], Some(12), true);
        assert!(title(&disk, 0).contains("(File Creations and Closes, by the file's blocks)"));
        assert!(
            title(&disk, 0).ends_with("no start delay (--no-start-delay): real lacks AIM's 10 s")
        );
        let mix = point("fserver", &["creat-clo", "disk_rr"], None, false);
        assert!(title(&mix, 10)
            .starts_with("fserver: 101 jobs per task (2 tests of AIM's workfile fserver)"));
    }
}
