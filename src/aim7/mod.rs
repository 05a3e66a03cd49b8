//! `patchbench aim7`: AIM Suite VII's jobs (creat-clo, the disk tests, link/fork/exec/signal/
//! brk/page tests) run by an AIM-style driver at a load of N forked tasks, reported with AIM's
//! arithmetic (jobs/min, JTI, jobs/min/task, real, cpu) and LKP's metric names.
//!
//! Layout: `jobs/` (one file per AIM7 test), `task` (what a forked task runs), `driver` (fork,
//! start barrier, reaping), `metrics` (AIM's formulas), `fixtures` (shared input files), and
//! here: arguments, validation, the run loop, output and the result record. Shared with the
//! other commands: `crate::proc::limits` (process and file limits checked before forking),
//! `crate::fsinfo` (what each --dir is), `crate::proc::signals`.

pub mod driver;
pub mod fixtures;
pub mod jobs;
pub mod metrics;
pub mod task;

use crate::args::StoreOpts;
use crate::error::{usage, Interrupted, RunFailed, Usage};
use crate::record::{Direction, Metric, RunRecord};
use anyhow::Context;
use clap::Args;
use driver::{Outcome, Signals, Stop};
use jobs::{Factor, Job, TaskDir};
use metrics::Figures;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// AIM's pre-start sleep (`SLEEP` in multitask.c), counted inside `real`.
const AIM_START_DELAY: Duration = Duration::from_secs(10);

const AFTER_HELP: &str = "\
Each TEST runs separately at each load, like one LKP aim7 job. All tasks work in a private \
directory (mode 0700) made inside each --dir; it is removed at the end, and nothing else in \
--dir is touched.

The filesystem decides the score: tmpfs, ext4 on a RAM disk and a real disk differ widely. The \
type and mount options of each --dir are printed and recorded. To test like the posted \
creat-clo numbers (ext4 on a 48 GB brd ramdisk, as LKP's 1BRD_48G):
  modprobe brd rd_nr=1 rd_size=50331648        # rd_size is in KiB
  mkfs.ext4 -q /dev/ram0 && mkdir -p /mnt/aim7 && mount /dev/ram0 /mnt/aim7
  patchbench aim7 creat-clo --load 3000 --dir /mnt/aim7 --aim-start-delay
or on tmpfs (as LKP's micro jobs): use /dev/shm, or
  mount -t tmpfs -o size=4g tmpfs /mnt/aim7

Published AIM7 numbers include AIM's 10 s pause before the start inside `real`; pass \
--aim-start-delay to reproduce them (it lowers jobs/min by 10 s / real).";

/// Arguments of `patchbench aim7`.
#[derive(Debug, Clone, Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct Aim7Args {
    /// AIM7 tests to run: creat-clo, disk_rr, disk_rw, disk_rd, disk_wrt, disk_cp, disk_src,
    /// link_test, fork_test, exec_test, signal_test, brk_test, page_test.
    #[arg(value_name = "TEST", required = true)]
    pub tests: Vec<String>,
    /// Number of tasks (AIM's operation load), or several comma separated, each a load point.
    #[arg(short, long, value_name = "N", value_delimiter = ',', default_value = "3000", value_parser = parse_load)]
    pub load: Vec<u32>,
    /// Jobs each task runs (AIM's LOADNUM is 100).
    #[arg(short, long, value_name = "J", default_value_t = 100, value_parser = parse_jobs)]
    pub jobs: u32,
    /// Directory for the tasks' files (AIM's `config` list); repeat to use several, round-robin.
    /// Default: the system temp directory.
    #[arg(short, long = "dir", value_name = "PATH")]
    pub dirs: Vec<PathBuf>,
    /// Repeat every load point this many times (one jobs/min sample each).
    #[arg(short, long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// Wait 10 s between parking the tasks and releasing them, counted in `real`, as AIM's
    /// multitask does; needed to match published jobs/min.
    #[arg(long)]
    pub aim_start_delay: bool,
    /// AIM's FILESIZE for the disk tests, in KiB (suffix M for MiB): each task's file is
    /// FILESIZE + POOLSIZE / load.
    #[arg(long, value_name = "SIZE", default_value = "1M", value_parser = parse_kib)]
    pub filesize: u64,
    /// AIM's POOLSIZE, in KiB (suffix M for MiB), shared out among the tasks.
    #[arg(long, value_name = "SIZE", default_value = "10M", value_parser = parse_kib)]
    pub poolsize: u64,
    /// Write every sample, the figures and the system fingerprint to FILE as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreOpts,
}

fn parse_load(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(0) => Err("the load must be at least 1 task (e.g. --load 3000)".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "{s:?} is not a number of tasks; give e.g. --load 3000"
        )),
    }
}

fn parse_jobs(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(0) => Err("each task must run at least 1 job (AIM runs 100)".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "{s:?} is not a number of jobs; give e.g. --jobs 100"
        )),
    }
}

/// Parses a size in KiB: `1024`, `1024k`, `1M`.
pub fn parse_kib(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('M' | 'm') => (&t[..t.len() - 1], 1024),
        Some('K' | 'k') => (&t[..t.len() - 1], 1),
        _ => (t, 1),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a size; give KiB like 1024, or 1M"))?;
    n.checked_mul(mult)
        .filter(|&v| v <= 1 << 30)
        .ok_or_else(|| format!("{s:?} is too large (at most 1024G)"))
}

/// One load point's runs as they finish.
struct Point {
    job: &'static Job,
    load: u32,
    disk_blocks: usize,
    runs: Vec<(Figures, Outcome, u64)>,
}

fn resolve_tests(names: &[String]) -> anyhow::Result<Vec<&'static Job>> {
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

/// Rejects a --dir that is unusable: missing, a symlink, read-only or full.
fn check_work_dir(dir: &Path) -> anyhow::Result<crate::fsinfo::FsInfo> {
    let is_real_dir = std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir());
    if is_real_dir && crate::fsinfo::collect(dir).read_only {
        return usage(format!(
            "--dir {}: the filesystem is mounted read-only; choose a writable directory",
            dir.display()
        ));
    }
    crate::args::check_dir(dir)?;
    let info = crate::fsinfo::collect(dir);
    if let Ok(v) = nix::sys::statvfs::statvfs(dir) {
        let no_inodes = v.files() > 0 && v.files_available() == 0;
        if v.blocks_available() == 0 || no_inodes {
            return usage(format!(
                "--dir {}: the filesystem is full (no free {}); free some space or choose another --dir",
                dir.display(),
                if no_inodes { "inodes" } else { "blocks" }
            ));
        }
    }
    Ok(info)
}

fn is_no_space(errno: i32) -> bool {
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

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// AIM's row ends with the wall-clock date, as ctime() prints it.
fn ctime_now() -> String {
    let now = time::OffsetDateTime::now_local().unwrap_or_else(|_| time::OffsetDateTime::now_utc());
    let fmt = time::macros::format_description!(
        "[weekday repr:short] [month repr:short] [day padding:space] [hour]:[minute]:[second] [year]"
    );
    now.format(&fmt).unwrap_or_default()
}

fn metric(
    name: &str,
    p: &Point,
    title: &str,
    unit: &str,
    direction: Direction,
    samples: Vec<f64>,
) -> Metric {
    Metric {
        name: name.to_string(),
        params: crate::record::params(&[
            ("test", p.job.name.to_string()),
            ("load", p.load.to_string()),
        ]),
        title: format!("{} {title} (load {})", p.job.name, p.load),
        unit: unit.to_string(),
        direction,
        value: crate::stats::mean(&samples).unwrap_or(0.0),
        samples,
    }
}

/// LKP-named metrics of one load point: each run is one sample; every task's completion time
/// is a sample of `aim7.task-completion-time`.
fn point_metrics(p: &Point) -> Vec<Metric> {
    let per = |f: fn(&Figures) -> f64| p.runs.iter().map(|(fig, _, _)| f(fig)).collect::<Vec<_>>();
    let completion: Vec<f64> = p
        .runs
        .iter()
        .flat_map(|(_, o, _)| o.completion.iter().copied())
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

fn point_json(p: &Point, jobs_per_task: u32) -> serde_json::Value {
    let runs: Vec<serde_json::Value> = p
        .runs
        .iter()
        .enumerate()
        .map(|(i, (f, o, leftover))| {
            let counters: BTreeMap<&str, u64> =
                p.job.counters.iter().copied().zip(o.counters).collect();
            json!({
                "run": i + 1,
                "figures": f,
                "park_seconds": o.park_seconds,
                "counters": counters,
                "leftover_files": leftover,
                "task_max_rss_kib": o.task_max_rss_kib,
                "task0_private_kib": o.task0_private_kib,
                "task0_pss_kib": o.task0_pss_kib,
                "driver_max_rss_kib": o.driver_max_rss_kib,
                "completion_seconds": o.completion,
            })
        })
        .collect();
    json!({
        "test": p.job.name,
        "load": p.load,
        "jobs_per_task": jobs_per_task,
        "disk_blocks": p.disk_blocks,
        "factor": factor_of(p.job, p.disk_blocks),
        "units": p.job.units,
        "runs": runs,
    })
}

/// The record and where it goes, kept up to date so an interruption can save what finished.
struct Recorder<'a> {
    args: &'a Aim7Args,
    record: RunRecord,
    points: Vec<Point>,
    fs: Vec<crate::fsinfo::FsInfo>,
}

impl Recorder<'_> {
    fn finish(&mut self, incomplete: bool) -> anyhow::Result<()> {
        let points: Vec<&Point> = self.points.iter().filter(|p| !p.runs.is_empty()).collect();
        self.record.metrics = points.iter().flat_map(|p| point_metrics(p)).collect();
        let pj: Vec<serde_json::Value> = points
            .iter()
            .map(|p| point_json(p, self.args.jobs))
            .collect();
        self.record.extra.insert(
            "aim7".into(),
            json!({ "points": pj, "filesystems": self.fs }),
        );
        self.record.finished_at = crate::clock::now_rfc3339();
        self.record.incomplete = incomplete;
        if let Some(path) = &self.args.json {
            self.record.write_json(path)?;
        }
        if let Some(id) = crate::store::save(&self.args.store, &self.record)? {
            crate::store::announce(&self.args.store, &id);
        }
        Ok(())
    }
}

fn stop_error(stop: Stop, job: &Job, load: u32, dirs: &[PathBuf]) -> anyhow::Error {
    match stop {
        Stop::Interrupted(sig) => Interrupted { signal: sig, name: signal_name(sig) }.into(),
        Stop::TaskFailed { task, dir, op, errno } => {
            let d = dirs.get(dir).map(|d| d.display().to_string()).unwrap_or_default();
            let err = std::io::Error::from_raw_os_error(errno);
            if is_no_space(errno) {
                Usage(format!(
                    "{} at load {load}: --dir {d} is full ({op} in task {task}: {err}); every task was \
                     stopped and its files removed; free space or choose another --dir",
                    job.name
                ))
                .into()
            } else {
                RunFailed(format!("{} at load {load}: task {task}: {op} in --dir {d} failed: {err}", job.name)).into()
            }
        }
        Stop::TaskDied { task, how } => RunFailed(format!("{} at load {load}: task {task} {how}", job.name)).into(),
        Stop::CannotFork { started, errno } => Usage(format!(
            "{} at load {load}: only {started} tasks could be started (fork: {}); raise the process \
             limit (`ulimit -u`, the cgroup's pids.max, kernel.pid_max) or lower --load",
            job.name,
            std::io::Error::from_raw_os_error(errno)
        ))
        .into(),
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

/// Runs `patchbench aim7`; returns the exit status.
pub fn execute(args: &Aim7Args) -> anyhow::Result<i32> {
    let tests = resolve_tests(&args.tests)?;
    let dirs: Vec<PathBuf> = if args.dirs.is_empty() {
        vec![std::env::temp_dir()]
    } else {
        args.dirs.clone()
    };
    let fs = dirs
        .iter()
        .map(|d| check_work_dir(d))
        .collect::<anyhow::Result<Vec<_>>>()?;
    if let Some(path) = &args.json {
        crate::args::check_output("--json", path)?;
    }
    let max_load = args.load.iter().copied().max().unwrap_or(1);
    let extra = tests.iter().map(|j| j.extra_procs).max().unwrap_or(0);
    if let Err(refusal) = crate::proc::limits::check(max_load, extra, "--load") {
        return usage(refusal);
    }
    let true_program = if tests.iter().any(|j| j.name == "exec_test") {
        match jobs::exec_test::find_true() {
            Some(p) => p,
            None => return usage(
                "exec_test needs a `true` program (/bin/true or /usr/bin/true); install coreutils",
            ),
        }
    } else {
        PathBuf::from("/bin/true")
    };
    let true_program = std::ffi::CString::new(true_program.as_os_str().as_encoded_bytes().to_vec())
        .context("bad path for true")?;

    let signals = Signals::install_waking_on_child_exit()?;
    let private: Vec<crate::private_dir::PrivateDir> = dirs
        .iter()
        .map(|d| make_private_dir(d))
        .collect::<anyhow::Result<_>>()?;
    let task_dirs: Vec<TaskDir> = private.iter().map(|p| TaskDir::new(p.path())).collect();

    let mut system = crate::sysinfo::SystemInfo::collect();
    for (i, f) in fs.iter().enumerate() {
        system.extra.insert(
            format!("aim7.dir{i}"),
            format!("{}: {}", f.dir, f.summary()),
        );
    }
    let mut config = BTreeMap::new();
    config.insert(
        "tests".into(),
        json!(tests.iter().map(|j| j.name).collect::<Vec<_>>()),
    );
    config.insert("loads".into(), json!(args.load));
    config.insert("jobs_per_task".into(), json!(args.jobs));
    config.insert(
        "dirs".into(),
        json!(dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()),
    );
    config.insert("runs".into(), json!(args.runs));
    config.insert(
        "aim_start_delay_seconds".into(),
        json!(if args.aim_start_delay { 10 } else { 0 }),
    );
    config.insert("filesize_kib".into(), json!(args.filesize));
    config.insert("poolsize_kib".into(), json!(args.poolsize));
    let mut rec = Recorder {
        args,
        record: RunRecord {
            label: args.store.label.clone(),
            ..RunRecord::new("aim7", system, config)
        },
        points: Vec::new(),
        fs,
    };
    for (d, f) in dirs.iter().zip(&rec.fs) {
        println!("dir {}: {}", d.display(), f.summary());
    }
    let delay = if args.aim_start_delay {
        AIM_START_DELAY
    } else {
        Duration::ZERO
    };
    let progress = |msg: &str| eprintln!("  {msg}");

    for &job in &tests {
        for &load in &args.load {
            let disk_blocks = (args.filesize + args.poolsize / u64::from(load)).max(1) as usize;
            for (p, d) in private.iter().zip(&dirs) {
                if let Err(e) = fixtures::prepare(job, p.path(), disk_blocks) {
                    if e.raw_os_error().is_some_and(is_no_space) {
                        return usage(format!("{}: --dir {} is too full for the test's input files; free space or choose another --dir", job.name, d.display()));
                    }
                    return Err(e).with_context(|| {
                        format!("{}: cannot prepare files in {}", job.name, d.display())
                    });
                }
            }
            println!(
                "\n{}: {} tasks x {} jobs ({} {} per job){}",
                job.name,
                load,
                args.jobs,
                factor_of(job, disk_blocks),
                job.units,
                if args.aim_start_delay {
                    ", with AIM's 10 s start delay"
                } else {
                    ""
                }
            );
            println!("{}", metrics::HEADER);
            rec.points.push(Point {
                job,
                load,
                disk_blocks,
                runs: Vec::new(),
            });
            for _ in 0..args.runs {
                let plan = task::TaskPlan {
                    job,
                    jobs_per_task: args.jobs,
                    dirs: task_dirs.clone(),
                    disk_blocks,
                    true_program: true_program.clone(),
                };
                let result = match signals.pending().map(|i| i.signal) {
                    Some(sig) => Err(Stop::Interrupted(sig)),
                    None => driver::run(&plan, load, delay, &signals, &progress),
                };
                let outcome = match result {
                    Ok(o) => o,
                    Err(stop) => {
                        let interrupted = matches!(stop, Stop::Interrupted(_));
                        let err = stop_error(stop, job, load, &dirs);
                        if interrupted {
                            rec.finish(true)?;
                        }
                        return Err(err);
                    }
                };
                let figures =
                    Figures::compute(args.jobs, &outcome.completion, outcome.real, outcome.cpu);
                println!("{}  {}", figures.row(), ctime_now());
                eprintln!("  {}", memory_line(&outcome));
                let leftover: u64 = private.iter().map(|p| fixtures::leftovers(p.path())).sum();
                if let Some(p) = rec.points.last_mut() {
                    p.runs.push((figures, outcome, leftover));
                }
            }
            if let Some(p) = rec.points.last().filter(|p| p.runs.len() > 1) {
                let jpm: Vec<f64> = p.runs.iter().map(|(f, _, _)| f.jobs_per_min).collect();
                let (lo, hi) = jpm
                    .iter()
                    .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
                println!(
                    "mean of {} runs: {:.2} jobs/min (min {lo:.2}, max {hi:.2})",
                    jpm.len(),
                    crate::stats::mean(&jpm).unwrap_or(0.0)
                );
            }
            for p in &private {
                fixtures::remove(job, p.path());
            }
        }
    }
    rec.finish(false)?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_kib() {
        assert_eq!(parse_kib("1M"), Ok(1024));
        assert_eq!(parse_kib("10M"), Ok(10240));
        assert_eq!(parse_kib("16"), Ok(16));
        assert_eq!(parse_kib("16k"), Ok(16));
        assert!(parse_kib("x").is_err());
    }

    #[test]
    fn loads_and_jobs_must_be_positive() {
        assert!(parse_load("0").unwrap_err().contains("at least 1"));
        assert_eq!(parse_load("3000"), Ok(3000));
        assert!(parse_jobs("0").is_err());
    }

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
