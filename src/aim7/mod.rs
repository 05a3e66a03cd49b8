//! AIM Suite VII: its 56 tests, alone or in AIM's weighted workfile mixes, run by an AIM-style
//! driver at loads of N tasks (each a fork of the driver that execs the small task program),
//! reported with AIM's arithmetic (jobs/min, JTI, jobs/min/task, real, cpu) and LKP's metric
//! names.
//!
//! Layout: `jobs/` (one file per AIM7 test, registered in `jobs/mod.rs`), `workfile` (mixes,
//! job counts, the per-task schedule), `aim_rand` (AIM's generator), `loads` (`--load` lists
//! and ranges), `task` (what a task runs, and why tasks are exec'd), `task_program` (where
//! the task program is and the command line that carries a task's plan), `joblog` (AIM's
//! per-job times() calls and log line), `driver` (fork + exec, start gate, reaping), `metrics`
//! (AIM's formulas), `fixtures` and `fakeh` (input files), `suite` (the tasks' directory), and
//! here: the run over mixes, loads and repeats, which adds every finished run of a load point
//! to the record and hands it to the sinks at once. The command's arguments and checks are in
//! `crate::commands::aim7`.

pub mod aim_rand;
pub mod driver;
pub mod fakeh;
pub mod fixtures;
pub mod joblog;
pub mod jobs;
pub mod loads;
pub mod metrics;
pub mod suite;
pub mod task;
pub mod task_program;
pub mod workfile;

use crate::error::{usage, RunFailed, Usage};
use crate::monitor::monitoring::Monitoring;
use crate::progress::Progress;
use crate::record::aim7::{Aim7Details, Aim7Point, Aim7Run, Aim7TestCounts};
use crate::record::sink::Sinks;
use crate::record::{Direction, Metric, RunRecord};
use anyhow::Context;
use driver::{Outcome, Signals, Stop};
use jobs::{Factor, Job, TaskDir};
use metrics::Figures;
use serde::Serialize;
use std::collections::BTreeMap;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::time::Duration;
use workfile::Mix;

/// AIM's pre-start sleep (`SLEEP` in multitask.c), counted inside `real`.
pub const AIM_START_DELAY: Duration = Duration::from_secs(10);

/// LKP's FILESIZE and POOLSIZE in KiB, where neither the command line nor the workfile sets one.
pub const DEFAULT_FILESIZE_KIB: u64 = 1024;
pub const DEFAULT_POOLSIZE_KIB: u64 = 10 * 1024;

/// One line of a workfile as a run records it.
#[derive(Debug, Clone, Serialize)]
pub struct WorkfileLine {
    pub test: &'static str,
    pub weight: u32,
    /// AIM's count for the line: its weight's share of LOADNUM.
    pub jobs_per_task: u32,
}

/// The settings an AIM7 run records.
#[derive(Debug, Clone, Serialize)]
pub struct Config {
    /// The tests, or the mix's name.
    pub tests: Vec<String>,
    /// A `--workfile`'s lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workfile: Option<Vec<WorkfileLine>>,
    pub loads: Vec<u32>,
    /// AIM's LOADNUM (`--jobs`).
    pub jobs_per_task: u32,
    pub dirs: Vec<String>,
    pub runs: u32,
    pub aim_start_delay_seconds: u64,
    pub filesize_kib: u64,
    pub poolsize_kib: u64,
    /// Whether AIM's shared log was written (`--no-log` turns it off).
    pub aim_log: bool,
    pub until_crossover: bool,
}

/// What one AIM7 run covers, checked by the command.
pub struct Plan {
    /// One mix per TEST, or the `--workfile`'s.
    pub mixes: Vec<Mix>,
    /// Whether the mixes came from `--workfile`.
    pub workfile: bool,
    pub loads: Vec<u32>,
    /// AIM's LOADNUM: a one-test mix's jobs per task, a workfile's total before AIM's rounding.
    pub jobs_per_task: u32,
    pub dirs: Vec<PathBuf>,
    pub runs: u32,
    pub start_delay: Duration,
    pub filesize_kib: u64,
    pub poolsize_kib: u64,
    /// Append AIM's line to its shared log after every job (multitask without -nl).
    pub log: bool,
    /// Stop a series of loads after the first point whose jobs/min/task is at most 1.0.
    pub until_crossover: bool,
    /// What to record around every run of a load point (`crate::monitor::monitoring`).
    pub monitoring: crate::monitor::monitoring::Plan,
}

impl Plan {
    pub fn config(&self) -> Config {
        Config {
            tests: self.mixes.iter().map(|m| m.name.clone()).collect(),
            workfile: self.workfile.then(|| {
                self.mixes
                    .iter()
                    .flat_map(|m| m.lines.iter().zip(m.counts(self.jobs_per_task)))
                    .map(|(l, c)| WorkfileLine {
                        test: l.job.name,
                        weight: l.weight,
                        jobs_per_task: c,
                    })
                    .collect()
            }),
            loads: self.loads.clone(),
            jobs_per_task: self.jobs_per_task,
            dirs: self.dirs.iter().map(|d| d.display().to_string()).collect(),
            runs: self.runs,
            aim_start_delay_seconds: self.start_delay.as_secs(),
            filesize_kib: self.filesize_kib,
            poolsize_kib: self.poolsize_kib,
            aim_log: self.log,
            until_crossover: self.until_crossover,
        }
    }

    /// Every test the run's mixes name.
    pub fn all_jobs(&self) -> Vec<&'static Job> {
        self.mixes
            .iter()
            .flat_map(|m| m.lines.iter().map(|l| l.job))
            .collect()
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

/// The mixes to run: the `workfile`'s (one of AIM's by name, or a file), or one per TEST.
pub fn resolve_mixes(workfile: Option<&str>, tests: &[String]) -> anyhow::Result<Vec<Mix>> {
    let Some(w) = workfile else {
        return Ok(resolve_tests(tests)?.into_iter().map(Mix::single).collect());
    };
    if let Some(m) = Mix::builtin(w) {
        return Ok(vec![m]);
    }
    let path = Path::new(w);
    if !path.exists() {
        return usage(format!(
            "--workfile {w}: not one of AIM's mixes (compute, dbase, fserver, shared) and no such file"
        ));
    }
    match Mix::read(path) {
        Ok(m) => Ok(vec![m]),
        Err(e) => usage(e),
    }
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
        Factor::HalfDiskBlocks => disk_blocks as u64 / 2,
    }
}

/// The record's point for a mix at a load, before its first run.
fn new_point(mix: &Mix, load: u32, jobs_per_task: u32, disk_blocks: usize) -> Aim7Point {
    let single = match mix.lines.as_slice() {
        [line] => Some(line.job),
        _ => None,
    };
    Aim7Point {
        test: mix.name.clone(),
        load,
        jobs_per_task,
        disk_blocks,
        tests: mix.lines.iter().map(|l| l.job.name.to_string()).collect(),
        factor: single.map(|j| factor_of(j, disk_blocks)),
        units: single.map(|j| j.units.to_string()),
        factor_is_disk_blocks: single.is_some_and(|j| !matches!(j.factor, Factor::Fixed(_))),
        crossover: false,
        runs: Vec::new(),
    }
}

/// The counters of one run: summed by name over the tests, and by test.
fn run_counters(mix: &Mix, o: &Outcome) -> (BTreeMap<String, u64>, Vec<Aim7TestCounts>) {
    let mut sum: BTreeMap<String, u64> = BTreeMap::new();
    let mut by_test = Vec::new();
    for (line, counts) in mix.lines.iter().zip(&o.lines) {
        let named: BTreeMap<String, u64> = line
            .job
            .counters
            .iter()
            .map(|c| c.to_string())
            .zip(counts.counters)
            .collect();
        for (k, v) in &named {
            *sum.entry(k.clone()).or_default() += v;
        }
        by_test.push(Aim7TestCounts {
            test: line.job.name.to_string(),
            runs: counts.runs,
            counters: named,
        });
    }
    (sum, by_test)
}

/// The typed run of one driver outcome.
fn run_of(mix: &Mix, n: usize, figures: Figures, o: Outcome, leftover: u64) -> Aim7Run {
    let (counters, jobs) = run_counters(mix, &o);
    Aim7Run {
        run: n,
        figures,
        park_seconds: o.park_seconds,
        counters,
        jobs,
        log_lines: o.log_lines,
        leftover_files: leftover,
        task_max_rss_kib: o.task_max_rss_kib,
        task0_private_kib: o.task0_private_kib,
        task0_pss_kib: o.task0_pss_kib,
        driver_max_rss_kib: o.driver_max_rss_kib,
        completion_seconds: o.completion,
        noise: None,
    }
}

/// Recomputes the record's metrics from its points (those with a finished run).
pub fn update_metrics(record: &mut RunRecord) {
    record.metrics = record
        .aim7
        .iter()
        .flat_map(|d| &d.points)
        .filter(|p| !p.runs.is_empty())
        .flat_map(point_metrics)
        .collect();
    // Each load point's jobs per CPU-second of its tasks, then the monitor rows.
    let per_cpu: Vec<Metric> = record
        .monitors
        .iter()
        .filter_map(|u| {
            let title = format!("{} jobs", u.title);
            crate::record::monitors::per_cpu_second("aim7.jobs-per-cpu-s", u, &title, "jobs")
        })
        .collect();
    record.metrics.extend(per_cpu);
    record
        .metrics
        .extend(crate::record::monitors::metrics(&record.monitors));
    record.finished_at = crate::clock::now_rfc3339();
}

/// Adds one run's monitor window to its load point's unit (`test`, `load`): the window is
/// the driver's, from the tasks' start to their reaping; its operations are the jobs done,
/// `load` tasks × the mix's jobs per task.
fn add_monitors(
    record: &mut RunRecord,
    test: &str,
    load: u32,
    jobs_per_task: u32,
    sample: crate::monitor::Sample,
) {
    let jobs = f64::from(load) * f64::from(jobs_per_task);
    let unit = crate::record::monitors::Unit::new(
        &[("test", test.to_string()), ("load", load.to_string())],
        format!("{test} load {load}"),
        Some(jobs),
        sample,
    );
    match record.monitors.iter_mut().find(|u| u.params == unit.params) {
        Some(u) => {
            u.sample.add(&unit.sample);
            u.ops = Some(u.ops.unwrap_or(0.0) + jobs);
        }
        None => record.monitors.push(unit),
    }
}

fn stop_error(stop: Stop, mix: &Mix, load: u32, dirs: &[PathBuf]) -> anyhow::Error {
    let name = &mix.name;
    match stop {
        Stop::Interrupted(sig) => crate::proc::signals::interrupted(sig).into(),
        Stop::TaskFailed {
            task,
            line,
            dir,
            op,
            errno,
        } => {
            let job = mix.lines.get(line).map(|l| l.job);
            let test = job.map(|j| j.name).unwrap_or("?");
            let d = dirs
                .get(dir)
                .map(|d| d.display().to_string())
                .unwrap_or_default();
            let err = std::io::Error::from_raw_os_error(errno);
            let place = if job.is_some_and(|j| j.uses_dirs) {
                format!(" in --dir {d}")
            } else {
                String::new()
            };
            if is_no_space(errno) {
                Usage(format!(
                    "{name} at load {load}: --dir {d} is full ({test}: {op} in task {task}: {err}); \
                     every task was stopped and its files removed; free space or choose another --dir"
                ))
                .into()
            } else if errno == 0 {
                RunFailed(format!(
                    "{name} at load {load}: task {task}: {test}: {op} gave a wrong result"
                ))
                .into()
            } else {
                RunFailed(format!(
                    "{name} at load {load}: task {task}: {test}: {op}{place} failed: {err}"
                ))
                .into()
            }
        }
        Stop::TaskDied { task, how } => {
            RunFailed(format!("{name} at load {load}: task {task} {how}")).into()
        }
        Stop::OutOfMemory { task } => anyhow::anyhow!(
            "{name} at load {load}: task {task} ran out of memory; every task was stopped and \
             its files removed; raise the memory limit (ulimit -v, the cgroup's memory.max) or \
             lower --load"
        ),
        Stop::CannotFork { started, errno } => crate::proc::start_refused(
            &format!("{name} at load {load}"),
            started as usize,
            load as usize,
            std::io::Error::from_raw_os_error(errno),
            "--load",
        ),
        Stop::CannotExec {
            task,
            program,
            errno,
        } => {
            let err = std::io::Error::from_raw_os_error(errno);
            if errno == libc::EAGAIN || errno == libc::ENOMEM {
                crate::proc::start_refused(
                    &format!("{name} at load {load}"),
                    task as usize,
                    load as usize,
                    err,
                    "--load",
                )
            } else {
                RunFailed(format!(
                    "{name} at load {load}: task {task} cannot run the task program {program}: {err}"
                ))
                .into()
            }
        }
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

/// The plan every task of one load point runs.
fn task_plan(
    program: &CString,
    mix: &Mix,
    counts: &[u32],
    dirs: &[TaskDir],
    disk_blocks: usize,
    load: u32,
    suite: &suite::Suite,
) -> task::TaskPlan {
    task::TaskPlan {
        program: program.clone(),
        jobs: mix.lines.iter().map(|l| l.job).collect(),
        names: mix
            .lines
            .iter()
            .map(|l| CString::new(l.job.name).unwrap_or_default())
            .collect(),
        counts: counts.to_vec(),
        dirs: dirs.to_vec(),
        disk_blocks,
        load,
        suite_dir: suite.dir_c.clone(),
        path_env: suite.path_env.clone(),
        log_fd: suite.log_fd(),
    }
}

/// The last point of the record.
fn last_point(record: &mut RunRecord) -> Option<&mut Aim7Point> {
    record.aim7.as_mut().and_then(|d| d.points.last_mut())
}

/// Runs every mix at every load `plan.runs` times, in private directories made inside the
/// checked `--dir`s, the tasks in AIM's suite directory; each finished run is added to
/// `record` and handed to `sinks` at once.
pub fn run(
    plan: &Plan,
    signals: &Signals,
    record: &mut RunRecord,
    sinks: &mut Sinks,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    let program = task_program::locate()?;
    // Said once, after the checks that refuse a run, before anything is measured.
    let run_id = record.uuid.clone().unwrap_or_default();
    let first_dir = plan.dirs.first().map_or(Path::new("."), |d| d.as_path());
    let mut monitoring = Monitoring::start(&plan.monitoring, first_dir, &run_id, progress)?;
    // Also writes num_fcns.c's tables, which AIM fills in the parent, for the tasks to map.
    let suite = suite::Suite::create(plan.log)?;
    let mut private: Vec<crate::private_dir::PrivateDir> = Vec::with_capacity(plan.dirs.len());
    let mut outcome = Ok(());
    for d in &plan.dirs {
        match make_private_dir(d) {
            Ok(p) => private.push(p),
            Err(e) => {
                outcome = Err(e);
                break;
            }
        }
    }
    if outcome.is_ok() {
        outcome = run_points(
            plan,
            &program,
            &suite,
            &private,
            signals,
            &mut monitoring,
            record,
            sinks,
            progress,
        );
    }
    // The directories go whatever happened, and one left behind is said, not hidden (the
    // results stand: it is a warning).
    let removed: Vec<anyhow::Result<()>> = private
        .into_iter()
        .map(|p| p.close())
        .chain(std::iter::once(suite.close()))
        .chain(std::iter::once(monitoring.finish()))
        .collect();
    for left in removed.into_iter().filter_map(Result::err) {
        progress.line(&format!("patchbench: warning: {left:#}"));
    }
    outcome
}

/// Every mix at every load, in the private directories made for the run.
#[allow(clippy::too_many_arguments)]
fn run_points(
    plan: &Plan,
    program: &std::ffi::CString,
    suite: &suite::Suite,
    private: &[crate::private_dir::PrivateDir],
    signals: &Signals,
    monitoring: &mut Monitoring,
    record: &mut RunRecord,
    sinks: &mut Sinks,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    let task_dirs: Vec<TaskDir> = private.iter().map(|p| TaskDir::new(p.path())).collect();
    let say = |msg: &str| progress.line(&format!("  {msg}"));
    for mix in &plan.mixes {
        let counts = mix.counts(plan.jobs_per_task);
        let jobs_per_task: u32 = counts.iter().sum();
        let ipc = mix.lines.iter().any(|l| l.job.name == "shared_memory");
        for &load in &plan.loads {
            let disk_blocks =
                (plan.filesize_kib + plan.poolsize_kib / u64::from(load)).max(1) as usize;
            for (p, d) in private.iter().zip(&plan.dirs) {
                if let Err(e) = fixtures::prepare(p.path(), disk_blocks) {
                    if e.raw_os_error().is_some_and(is_no_space) {
                        return usage(format!("{}: --dir {} is too full for the test's input files; free space or choose another --dir", mix.name, d.display()));
                    }
                    return Err(e).with_context(|| {
                        format!("{}: cannot prepare files in {}", mix.name, d.display())
                    });
                }
            }
            say(&format!("load {load}: disk files of {disk_blocks} KiB"));
            record
                .aim7
                .get_or_insert_with(Aim7Details::default)
                .points
                .push(new_point(mix, load, jobs_per_task, disk_blocks));
            sinks.progress(record);
            let tasks = task_plan(program, mix, &counts, &task_dirs, disk_blocks, load, suite);
            for n in 1..=plan.runs as usize {
                // AIM's sync;sync;sync before each load point.
                fixtures::sync_disks();
                let logged = suite.log_lines();
                // What else used the CPUs during the point, watched from outside the driver.
                let watch = crate::noise::activity::Watch::start();
                let window = monitoring.open(&format!("{}-{load}", mix.name));
                let result = match signals.pending().map(|i| i.signal) {
                    Some(sig) => Err(Stop::Interrupted(sig)),
                    None => driver::run(&tasks, load, plan.start_delay, signals, &say, ipc),
                };
                let mut outcome = result.map_err(|stop| stop_error(stop, mix, load, &plan.dirs))?;
                if let Some(w) = window {
                    let sample = monitoring.close(w, progress);
                    add_monitors(record, &mix.name, load, jobs_per_task, sample);
                }
                let noise = watch.finish();
                for w in noise.warnings() {
                    say(&format!("noise: {w}"));
                }
                outcome.log_lines = suite.log_lines().saturating_sub(logged);
                let figures = Figures::compute(
                    jobs_per_task,
                    &outcome.completion,
                    outcome.real,
                    outcome.cpu,
                );
                say(&memory_line(&outcome));
                let leftover: u64 = private.iter().map(|p| fixtures::leftovers(p.path())).sum();
                if let Some(p) = last_point(record) {
                    let mut run = run_of(mix, n, figures, outcome, leftover);
                    run.noise = Some(noise);
                    p.runs.push(run);
                }
                update_metrics(record);
                sinks.progress(record);
            }
            let crossed = last_point(record).is_some_and(|p| {
                let per_task: Vec<f64> = p
                    .runs
                    .iter()
                    .map(|r| r.figures.jobs_per_min_per_task)
                    .collect();
                crate::stats::mean(&per_task).is_some_and(|m| m <= 1.0)
            });
            if plan.until_crossover && crossed {
                if let Some(p) = last_point(record) {
                    p.crossover = true;
                }
                sinks.progress(record);
                break;
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
        assert!(e.to_string().contains("known tests: add_double"));
    }

    #[test]
    fn a_workfile_is_one_of_aims_mixes_or_a_file() {
        let m = resolve_mixes(Some("fserver"), &[]).unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].lines.len(), 31);
        let e = resolve_mixes(Some("/nonexistent/wf"), &[]).unwrap_err();
        assert!(e.to_string().contains("no such file"));
        let one = resolve_mixes(None, &["sieve,creat-clo".into()]).unwrap();
        assert_eq!(
            one.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(),
            ["sieve", "creat-clo"]
        );
    }
}
