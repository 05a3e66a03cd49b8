//! AIM Suite VII: the jobs (creat-clo, the disk tests, link/fork/exec/signal/brk/page
//! tests), run by an AIM-style driver at a load of N forked tasks, reported with AIM's
//! arithmetic (jobs/min, JTI, jobs/min/task, real, cpu) and LKP's metric names.
//!
//! Layout: `jobs/` (one file per AIM7 test, registered in `jobs/mod.rs`), `task` (what a forked
//! task runs), `driver` (fork, start gate, reaping), `metrics` (AIM's formulas), `fixtures`
//! (shared input files), and here: the run over tests, loads and repeats, which adds every
//! finished run of a load point to the record and hands it to the sinks at once. The command's
//! arguments and checks are in `crate::commands::aim7`.

pub mod driver;
pub mod fixtures;
pub mod jobs;
pub mod metrics;
pub mod task;

use crate::error::{usage, RunFailed, Usage};
use crate::progress::Progress;
use crate::record::aim7::{Aim7Details, Aim7Point, Aim7Run};
use crate::record::sink::Sinks;
use crate::record::{Direction, Metric, RunRecord};
use anyhow::Context;
use driver::{Outcome, Signals, Stop};
use jobs::{Factor, Job, TaskDir};
use metrics::Figures;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// AIM's pre-start sleep (`SLEEP` in multitask.c), counted inside `real`.
pub const AIM_START_DELAY: Duration = Duration::from_secs(10);

/// The settings an AIM7 run records.
#[derive(Debug, Clone, Serialize)]
pub struct Config {
    pub tests: Vec<&'static str>,
    pub loads: Vec<u32>,
    pub jobs_per_task: u32,
    pub dirs: Vec<String>,
    pub runs: u32,
    pub aim_start_delay_seconds: u64,
    pub filesize_kib: u64,
    pub poolsize_kib: u64,
}

/// What one AIM7 run covers, checked by the command.
pub struct Plan {
    pub tests: Vec<&'static Job>,
    pub loads: Vec<u32>,
    pub jobs_per_task: u32,
    pub dirs: Vec<PathBuf>,
    pub runs: u32,
    pub start_delay: Duration,
    pub filesize_kib: u64,
    pub poolsize_kib: u64,
}

impl Plan {
    pub fn config(&self) -> Config {
        Config {
            tests: self.tests.iter().map(|j| j.name).collect(),
            loads: self.loads.clone(),
            jobs_per_task: self.jobs_per_task,
            dirs: self.dirs.iter().map(|d| d.display().to_string()).collect(),
            runs: self.runs,
            aim_start_delay_seconds: self.start_delay.as_secs(),
            filesize_kib: self.filesize_kib,
            poolsize_kib: self.poolsize_kib,
        }
    }
}

/// The AIM7 tests named (comma lists allowed), each once, or one line saying which is unknown.
pub fn resolve_tests(names: &[String]) -> anyhow::Result<Vec<&'static Job>> {
    let mut out: Vec<&'static Job> = Vec::new();
    for name in names
        .iter()
        .flat_map(|n| n.split(','))
        .filter(|n| !n.is_empty())
    {
        match jobs::find(name) {
            Some(j) if !out.iter().any(|o| o.name == j.name) => out.push(j),
            Some(_) => {}
            None => {
                return usage(format!(
                    "unknown AIM7 test {name:?}; known tests: {}",
                    jobs::names()
                ))
            }
        }
    }
    if out.is_empty() {
        return usage(format!("give at least one AIM7 test: {}", jobs::names()));
    }
    Ok(out)
}

/// ENOSPC or EDQUOT: the filesystem has no room.
pub fn is_no_space(errno: i32) -> bool {
    errno == libc::ENOSPC || errno == libc::EDQUOT
}

fn make_private_dir(dir: &Path) -> anyhow::Result<crate::private_dir::PrivateDir> {
    match crate::private_dir::PrivateDir::create(dir, "patchbench-aim7-") {
        Ok(t) => Ok(t),
        Err(e) if e.raw_os_error().is_some_and(is_no_space) => usage(format!(
            "--dir {}: no space left on the filesystem; free some space or choose another --dir",
            dir.display()
        )),
        Err(e) => Err(e)
            .with_context(|| format!("cannot create a private directory in {}", dir.display())),
    }
}

fn metric(
    name: &str,
    p: &Aim7Point,
    title: &str,
    unit: &str,
    direction: Direction,
    samples: Vec<f64>,
) -> Metric {
    Metric::new(
        name,
        &[("test", p.test.clone()), ("load", p.load.to_string())],
        format!("{} {title} (load {})", p.test, p.load),
        unit,
        direction,
        crate::stats::mean(&samples).unwrap_or(0.0),
        samples,
    )
}

/// LKP-named metrics of one load point: each run is one sample; every task's completion time
/// is a sample of `aim7.task-completion-time`.
pub fn point_metrics(p: &Aim7Point) -> Vec<Metric> {
    let per = |f: fn(&Figures) -> f64| p.runs.iter().map(|r| f(&r.figures)).collect::<Vec<_>>();
    let completion: Vec<f64> = p
        .runs
        .iter()
        .flat_map(|r| r.completion_seconds.iter().copied())
        .collect();
    vec![
        metric(
            "aim7.jobs-per-min",
            p,
            "jobs/min",
            "jobs/min",
            Direction::HigherIsBetter,
            per(|f| f.jobs_per_min),
        ),
        metric(
            "aim7.jobs-per-min-per-task",
            p,
            "jobs/min/task",
            "jobs/min",
            Direction::HigherIsBetter,
            per(|f| f.jobs_per_min_per_task),
        ),
        metric(
            "aim7.jti",
            p,
            "JTI",
            "index",
            Direction::HigherIsBetter,
            per(|f| f.jti as f64),
        ),
        metric(
            "aim7.real",
            p,
            "real",
            "s",
            Direction::LowerIsBetter,
            per(|f| f.real),
        ),
        metric(
            "aim7.cpu",
            p,
            "cpu",
            "s",
            Direction::LowerIsBetter,
            per(|f| f.cpu),
        ),
        metric(
            "aim7.task-completion-time",
            p,
            "task completion time",
            "s",
            Direction::LowerIsBetter,
            completion,
        ),
    ]
}

fn factor_of(job: &Job, disk_blocks: usize) -> u64 {
    match job.factor {
        Factor::Fixed(f) => f,
        Factor::DiskBlocks => disk_blocks as u64,
    }
}

/// The typed run of one driver outcome.
fn run_of(job: &Job, n: usize, figures: Figures, o: Outcome, leftover: u64) -> Aim7Run {
    Aim7Run {
        run: n,
        figures,
        park_seconds: o.park_seconds,
        counters: job
            .counters
            .iter()
            .map(|c| c.to_string())
            .zip(o.counters)
            .collect(),
        leftover_files: leftover,
        task_max_rss_kib: o.task_max_rss_kib,
        task0_private_kib: o.task0_private_kib,
        task0_pss_kib: o.task0_pss_kib,
        driver_max_rss_kib: o.driver_max_rss_kib,
        completion_seconds: o.completion,
    }
}

/// Recomputes the record's metrics from its points (those with a finished run).
fn update_metrics(record: &mut RunRecord) {
    record.metrics = record
        .aim7
        .iter()
        .flat_map(|d| &d.points)
        .filter(|p| !p.runs.is_empty())
        .flat_map(point_metrics)
        .collect();
    record.finished_at = crate::clock::now_rfc3339();
}

fn stop_error(stop: Stop, job: &Job, load: u32, dirs: &[PathBuf]) -> anyhow::Error {
    match stop {
        Stop::Interrupted(sig) => crate::proc::signals::interrupted(sig).into(),
        Stop::TaskFailed {
            task,
            dir,
            op,
            errno,
        } => {
            let d = dirs
                .get(dir)
                .map(|d| d.display().to_string())
                .unwrap_or_default();
            let err = std::io::Error::from_raw_os_error(errno);
            if is_no_space(errno) {
                Usage(format!(
                    "{} at load {load}: --dir {d} is full ({op} in task {task}: {err}); every task was \
                     stopped and its files removed; free space or choose another --dir",
                    job.name
                ))
                .into()
            } else {
                RunFailed(format!(
                    "{} at load {load}: task {task}: {op} in --dir {d} failed: {err}",
                    job.name
                ))
                .into()
            }
        }
        Stop::TaskDied { task, how } => {
            RunFailed(format!("{} at load {load}: task {task} {how}", job.name)).into()
        }
        Stop::CannotFork { started, errno } => crate::proc::start_refused(
            &format!("{} at load {load}", job.name),
            started as usize,
            load as usize,
            std::io::Error::from_raw_os_error(errno),
            "--load",
        ),
        Stop::Other(e) => e,
    }
}

fn memory_line(o: &Outcome) -> String {
    format!(
        "parked in {:.2} s; peak RSS: driver {:.1} MiB, task {:.1} MiB (task 0: {} KiB private, {} KiB PSS)",
        o.park_seconds,
        o.driver_max_rss_kib as f64 / 1024.0,
        o.task_max_rss_kib as f64 / 1024.0,
        o.task0_private_kib,
        o.task0_pss_kib
    )
}

/// Runs every test at every load `plan.runs` times, in private directories made inside the
/// checked `--dir`s; each finished run is added to `record` and handed to `sinks` at once.
pub fn run(
    plan: &Plan,
    true_program: &std::ffi::CStr,
    signals: &Signals,
    record: &mut RunRecord,
    sinks: &mut Sinks,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    let private: Vec<crate::private_dir::PrivateDir> = plan
        .dirs
        .iter()
        .map(|d| make_private_dir(d))
        .collect::<anyhow::Result<_>>()?;
    let task_dirs: Vec<TaskDir> = private.iter().map(|p| TaskDir::new(p.path())).collect();
    let say = |msg: &str| progress.line(&format!("  {msg}"));
    for &job in &plan.tests {
        for &load in &plan.loads {
            let disk_blocks =
                (plan.filesize_kib + plan.poolsize_kib / u64::from(load)).max(1) as usize;
            for (p, d) in private.iter().zip(&plan.dirs) {
                if let Err(e) = fixtures::prepare(job, p.path(), disk_blocks) {
                    if e.raw_os_error().is_some_and(is_no_space) {
                        return usage(format!("{}: --dir {} is too full for the test's input files; free space or choose another --dir", job.name, d.display()));
                    }
                    return Err(e).with_context(|| {
                        format!("{}: cannot prepare files in {}", job.name, d.display())
                    });
                }
            }
            record
                .aim7
                .get_or_insert_with(Aim7Details::default)
                .points
                .push(Aim7Point {
                    test: job.name.to_string(),
                    load,
                    jobs_per_task: plan.jobs_per_task,
                    disk_blocks,
                    factor: factor_of(job, disk_blocks),
                    units: job.units.to_string(),
                    runs: Vec::new(),
                });
            sinks.progress(record);
            for n in 1..=plan.runs as usize {
                let task_plan = task::TaskPlan {
                    job,
                    jobs_per_task: plan.jobs_per_task,
                    dirs: task_dirs.clone(),
                    disk_blocks,
                    true_program: true_program.to_owned(),
                };
                let result = match signals.pending().map(|i| i.signal) {
                    Some(sig) => Err(Stop::Interrupted(sig)),
                    None => driver::run(&task_plan, load, plan.start_delay, signals, &say),
                };
                let outcome = result.map_err(|stop| stop_error(stop, job, load, &plan.dirs))?;
                let figures = Figures::compute(
                    plan.jobs_per_task,
                    &outcome.completion,
                    outcome.real,
                    outcome.cpu,
                );
                say(&memory_line(&outcome));
                let leftover: u64 = private.iter().map(|p| fixtures::leftovers(p.path())).sum();
                if let Some(p) = record.aim7.as_mut().and_then(|d| d.points.last_mut()) {
                    p.runs.push(run_of(job, n, figures, outcome, leftover));
                }
                update_metrics(record);
                sinks.progress(record);
            }
            for p in &private {
                fixtures::remove(job, p.path());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_resolve_by_name_and_alias_once() {
        let t = resolve_tests(&["creat_clo".into(), "creat-clo,disk_rr".into()]).unwrap();
        assert_eq!(
            t.iter().map(|j| j.name).collect::<Vec<_>>(),
            ["creat-clo", "disk_rr"]
        );
        let e = resolve_tests(&["bogus".into()]).unwrap_err();
        assert!(e.downcast_ref::<Usage>().is_some());
        assert!(e.to_string().contains("known tests: creat-clo"));
    }
}
