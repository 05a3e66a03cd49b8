//! `patchbench aim7`: AIM Suite VII's 56 tests, alone or in AIM's weighted workfile mixes, run
//! by an AIM-style driver at loads of N forked tasks, reported with AIM's arithmetic (jobs/min,
//! JTI, jobs/min/task, real, cpu) and LKP's metric names.
//!
//! Layout: `jobs/` (one file per AIM7 test), `workfile` (mixes, job counts, the per-task
//! schedule), `aim_rand` (AIM's generator), `loads` (`--load` lists and ranges), `task` (what
//! a forked task runs), `joblog` (AIM's per-job times() calls and log line), `driver` (fork,
//! start barrier, reaping), `metrics` (AIM's formulas), `fixtures` and `fakeh` (input files),
//! `suite` (the tasks' directory), and here: arguments, validation, the run loop, output and
//! the result record. Shared with the
//! other commands: `crate::proc::limits` (process and file limits checked before forking),
//! `crate::fsinfo` (what each --dir is), `crate::proc::signals`.

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
pub mod workfile;

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
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::time::Duration;
use workfile::Mix;

/// AIM's pre-start sleep (`SLEEP` in multitask.c), counted inside `real`.
const AIM_START_DELAY: Duration = Duration::from_secs(10);

const AFTER_HELP: &str = "\
Each TEST runs separately at each load, like one LKP aim7 job (a one-line workfile); \
--workfile runs one of AIM's weighted mixes instead. All tasks work in a private directory \
(mode 0700) made inside each --dir; it is removed at the end, and nothing else in --dir is \
touched.

The filesystem decides the score: tmpfs, ext4 on a RAM disk and a real disk differ widely. The \
type and mount options of each --dir are printed and recorded. To test like the posted \
creat-clo numbers (ext4 on a 48 GB brd ramdisk, as LKP's 1BRD_48G):
  modprobe brd rd_nr=1 rd_size=50331648        # rd_size is in KiB
  mkfs.ext4 -q /dev/ram0 && mkdir -p /mnt/aim7 && mount /dev/ram0 /mnt/aim7
  patchbench aim7 creat-clo --load 3000 --dir /mnt/aim7
or on tmpfs (as LKP's micro jobs): use /dev/shm, or
  mount -t tmpfs -o size=4g tmpfs /mnt/aim7

Like published AIM7 numbers, `real` includes AIM's 10 s pause before the start; \
--no-start-delay skips it (raising jobs/min by real / (real - 10 s)).";

/// Arguments of `patchbench aim7`.
#[derive(Debug, Clone, Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct Aim7Args {
    /// AIM7 tests to run, each alone at each load: any of AIM's 56 (creat-clo, disk_rr,
    /// fork_test, sieve, ...; an unknown name lists them all).
    #[arg(value_name = "TEST", required_unless_present = "workfile")]
    pub tests: Vec<String>,
    /// Run one of AIM's weighted mixes instead: compute, dbase, fserver, shared, or a PATH to a
    /// workfile in AIM's format (`<weight> <test>` lines, FILESIZE:/POOLSIZE:).
    #[arg(long, value_name = "MIX|PATH", conflicts_with = "tests")]
    pub workfile: Option<String>,
    /// Load points: a number of tasks (AIM's operation load), a list (1,10,100,1000,3000) or
    /// ranges START-END[:STEP] (1-100:10 runs 1, 11, .., 91), as AIM's series of load points.
    #[arg(short, long, value_name = "LOADS", default_value = "3000", value_parser = loads::parse)]
    pub load: loads::Loads,
    /// AIM's LOADNUM: each task runs this many jobs of one TEST; a workfile's per-test counts
    /// are its weights' shares of it (AIM: 100).
    #[arg(short, long, value_name = "J", default_value_t = 100, value_parser = parse_jobs)]
    pub jobs: u32,
    /// Directory for the tasks' files (AIM's `config` list); repeat to use several, round-robin.
    /// Default: the system temp directory.
    #[arg(short, long = "dir", value_name = "PATH")]
    pub dirs: Vec<PathBuf>,
    /// Repeat every load point this many times (one jobs/min sample each).
    #[arg(short, long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// Skip AIM's 10 s wait between parking the tasks and releasing them (counted in `real`
    /// by AIM and in every published jobs/min).
    #[arg(long)]
    pub no_start_delay: bool,
    /// AIM's start delay, now the default (kept so old command lines still work).
    #[arg(long, hide = true, conflicts_with = "no_start_delay")]
    pub aim_start_delay: bool,
    /// Stop a series of loads at AIM's crossover: after the first load point whose
    /// jobs/min/task is at most 1.0.
    #[arg(long)]
    pub until_crossover: bool,
    /// Do not append AIM's per-job line to its shared log file (multitask's -nl).
    #[arg(long)]
    pub no_log: bool,
    /// AIM's FILESIZE for the disk tests, in KiB (suffix M for MiB): each task's file is
    /// FILESIZE + POOLSIZE / load. Default: the workfile's, else 1M (LKP's).
    #[arg(long, value_name = "SIZE", value_parser = parse_kib)]
    pub filesize: Option<u64>,
    /// AIM's POOLSIZE, in KiB (suffix M for MiB), shared out among the tasks. Default: the
    /// workfile's, else 10M (LKP's).
    #[arg(long, value_name = "SIZE", value_parser = parse_kib)]
    pub poolsize: Option<u64>,
    /// Write every sample, the figures and the system fingerprint to FILE as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreOpts,
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
    workfile::parse_kib(s)
}

/// One load point's runs as they finish.
struct Point {
    mix: Mix,
    load: u32,
    disk_blocks: usize,
    jobs_per_task: u32,
    runs: Vec<(Figures, Outcome, u64)>,
}

impl Point {
    /// The test of a one-test point.
    fn single(&self) -> Option<&'static Job> {
        match self.mix.lines.as_slice() {
            [line] => Some(line.job),
            _ => None,
        }
    }
}

/// The mixes to run: `--workfile`'s, or one per TEST.
fn resolve_mixes(args: &Aim7Args) -> anyhow::Result<Vec<Mix>> {
    let Some(w) = &args.workfile else {
        return Ok(resolve_tests(&args.tests)?
            .into_iter()
            .map(Mix::single)
            .collect());
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
            ("test", p.mix.name.clone()),
            ("load", p.load.to_string()),
        ]),
        title: format!("{} {title} (load {})", p.mix.name, p.load),
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
        Factor::HalfDiskBlocks => disk_blocks as u64 / 2,
    }
}

/// The counters of one run: summed by name over the tests, and by test.
fn run_counters(mix: &Mix, o: &Outcome) -> (BTreeMap<&'static str, u64>, Vec<serde_json::Value>) {
    let mut sum: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut by_test = Vec::new();
    for (line, counts) in mix.lines.iter().zip(&o.lines) {
        let named: BTreeMap<&str, u64> = line
            .job
            .counters
            .iter()
            .copied()
            .zip(counts.counters)
            .collect();
        for (k, v) in &named {
            *sum.entry(k).or_default() += v;
        }
        by_test.push(json!({ "test": line.job.name, "runs": counts.runs, "counters": named }));
    }
    (sum, by_test)
}

fn point_json(p: &Point) -> serde_json::Value {
    let runs: Vec<serde_json::Value> = p
        .runs
        .iter()
        .enumerate()
        .map(|(i, (f, o, leftover))| {
            let (counters, jobs) = run_counters(&p.mix, o);
            json!({
                "run": i + 1,
                "figures": f,
                "park_seconds": o.park_seconds,
                "counters": counters,
                "jobs": jobs,
                "leftover_files": leftover,
                "log_lines": o.log_lines,
                "task_max_rss_kib": o.task_max_rss_kib,
                "task0_private_kib": o.task0_private_kib,
                "task0_pss_kib": o.task0_pss_kib,
                "driver_max_rss_kib": o.driver_max_rss_kib,
                "completion_seconds": o.completion,
            })
        })
        .collect();
    json!({
        "test": p.mix.name,
        "load": p.load,
        "jobs_per_task": p.jobs_per_task,
        "disk_blocks": p.disk_blocks,
        "factor": p.single().map(|j| factor_of(j, p.disk_blocks)),
        "units": p.single().map(|j| j.units),
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
        let pj: Vec<serde_json::Value> = points.iter().map(|p| point_json(p)).collect();
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

fn stop_error(stop: Stop, mix: &Mix, load: u32, dirs: &[PathBuf]) -> anyhow::Error {
    let name = &mix.name;
    match stop {
        Stop::Interrupted(sig) => Interrupted { signal: sig, name: signal_name(sig) }.into(),
        Stop::TaskFailed { task, line, dir, op, errno } => {
            let job = mix.lines.get(line).map(|l| l.job);
            let test = job.map(|j| j.name).unwrap_or("?");
            let d = dirs.get(dir).map(|d| d.display().to_string()).unwrap_or_default();
            let err = std::io::Error::from_raw_os_error(errno);
            let place = if job.is_some_and(|j| j.uses_dirs) {
                format!(" in --dir {d}")
            } else {
                String::new()
            };
            if is_no_space(errno) {
                Usage(format!(
                    "{name} at load {load}: --dir {d} is full ({test}: {op} in task {task}: {err}); every task was \
                     stopped and its files removed; free space or choose another --dir"
                ))
                .into()
            } else if errno == 0 {
                RunFailed(format!("{name} at load {load}: task {task}: {test}: {op} gave a wrong result")).into()
            } else {
                RunFailed(format!("{name} at load {load}: task {task}: {test}: {op}{place} failed: {err}")).into()
            }
        }
        Stop::TaskDied { task, how } => RunFailed(format!("{name} at load {load}: task {task} {how}")).into(),
        Stop::CannotFork { started, errno } => Usage(format!(
            "{name} at load {load}: only {started} tasks could be started (fork: {}); raise the process \
             limit (`ulimit -u`, the cgroup's pids.max, kernel.pid_max) or lower --load",
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

/// The title line of a mix: what each task runs and whether AIM's start delay is in `real`.
fn title(mix: &Mix, counts: &[u32], delay: Duration) -> String {
    let jobs: u32 = counts.iter().sum();
    let what = match mix.lines.as_slice() {
        [line] => match line.job.factor {
            Factor::Fixed(f) => format!("{f} {} per job", line.job.units),
            _ => format!("{}, by the file's blocks", line.job.units),
        },
        lines => format!("{} tests of AIM's workfile {}", lines.len(), mix.name),
    };
    let delay = if delay.is_zero() {
        "no start delay (--no-start-delay): real lacks AIM's 10 s".to_string()
    } else {
        format!("AIM's {} s start delay counted in real", delay.as_secs())
    };
    format!("{}: {jobs} jobs per task ({what}); {delay}", mix.name)
}

/// The plan every task of one load point runs.
fn plan(
    mix: &Mix,
    counts: &[u32],
    dirs: &[TaskDir],
    disk_blocks: usize,
    load: u32,
    suite: &suite::Suite,
) -> task::TaskPlan {
    task::TaskPlan {
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

/// Runs `patchbench aim7`; returns the exit status.
pub fn execute(args: &Aim7Args) -> anyhow::Result<i32> {
    let mixes = resolve_mixes(args)?;
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
    let loads = &args.load.0;
    let max_load = loads.iter().copied().max().unwrap_or(1);
    let all_jobs: Vec<&Job> = mixes
        .iter()
        .flat_map(|m| m.lines.iter().map(|l| l.job))
        .collect();
    let extra = all_jobs.iter().map(|j| j.extra_procs).max().unwrap_or(0);
    if let Err(refusal) = crate::proc::limits::check(max_load, extra, "--load") {
        return usage(refusal);
    }
    if let Err(refusal) = suite::check_shell(&all_jobs) {
        return usage(refusal);
    }
    // AIM fills num_fcns.c's tables in the parent; the tasks inherit them.
    jobs::num_fcns::prepare();

    let signals = Signals::install_waking_on_child_exit()?;
    let suite = suite::Suite::create(!args.no_log)?;
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
    let delay = if args.no_start_delay {
        Duration::ZERO
    } else {
        AIM_START_DELAY
    };
    let mut config = BTreeMap::new();
    config.insert(
        "tests".into(),
        json!(mixes.iter().map(|m| m.name.as_str()).collect::<Vec<_>>()),
    );
    if args.workfile.is_some() {
        let lines: Vec<serde_json::Value> = mixes
            .iter()
            .flat_map(|m| m.lines.iter().zip(m.counts(args.jobs)))
            .map(|(l, c)| json!({ "test": l.job.name, "weight": l.weight, "jobs_per_task": c }))
            .collect();
        config.insert("workfile".into(), json!(lines));
    }
    config.insert("loads".into(), json!(loads));
    config.insert("loadnum".into(), json!(args.jobs));
    config.insert(
        "dirs".into(),
        json!(dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()),
    );
    config.insert("runs".into(), json!(args.runs));
    config.insert("aim_start_delay_seconds".into(), json!(delay.as_secs()));
    config.insert("aim_log".into(), json!(!args.no_log));
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
    let progress = |msg: &str| eprintln!("  {msg}");

    for mix in &mixes {
        let counts = mix.counts(args.jobs);
        let jobs_per_task: u32 = counts.iter().sum();
        let filesize = args.filesize.or(mix.filesize).unwrap_or(1024);
        let poolsize = args.poolsize.or(mix.poolsize).unwrap_or(10 * 1024);
        println!("\n{}", title(mix, &counts, delay));
        println!("{}", metrics::HEADER);
        for &load in loads {
            let disk_blocks = (filesize + poolsize / u64::from(load)).max(1) as usize;
            for (p, d) in private.iter().zip(&dirs) {
                if let Err(e) = fixtures::prepare(p.path(), disk_blocks) {
                    if e.raw_os_error().is_some_and(is_no_space) {
                        return usage(format!("{}: --dir {} is too full for the test's input files; free space or choose another --dir", mix.name, d.display()));
                    }
                    return Err(e).with_context(|| {
                        format!("{}: cannot prepare files in {}", mix.name, d.display())
                    });
                }
            }
            progress(&format!("load {load}: disk files of {disk_blocks} KiB"));
            rec.points.push(Point {
                mix: mix.clone(),
                load,
                disk_blocks,
                jobs_per_task,
                runs: Vec::new(),
            });
            let plan = plan(mix, &counts, &task_dirs, disk_blocks, load, &suite);
            let ipc = mix.lines.iter().any(|l| l.job.name == "shared_memory");
            for _ in 0..args.runs {
                fixtures::sync_disks();
                let logged = suite.log_lines();
                let result = match signals.pending().map(|i| i.signal) {
                    Some(sig) => Err(Stop::Interrupted(sig)),
                    None => driver::run(&plan, load, delay, &signals, &progress, ipc),
                };
                let mut outcome = match result {
                    Ok(o) => o,
                    Err(stop) => {
                        let interrupted = matches!(stop, Stop::Interrupted(_));
                        let err = stop_error(stop, mix, load, &dirs);
                        if interrupted {
                            rec.finish(true)?;
                        }
                        return Err(err);
                    }
                };
                outcome.log_lines = suite.log_lines().saturating_sub(logged);
                let figures = Figures::compute(
                    jobs_per_task,
                    &outcome.completion,
                    outcome.real,
                    outcome.cpu,
                );
                println!("{}  {}", figures.row(), ctime_now());
                eprintln!("  {}", memory_line(&outcome));
                let leftover: u64 = private.iter().map(|p| fixtures::leftovers(p.path())).sum();
                if let Some(p) = rec.points.last_mut() {
                    p.runs.push((figures, outcome, leftover));
                }
            }
            let per_task: Vec<f64> = rec
                .points
                .last()
                .map(|p| {
                    p.runs
                        .iter()
                        .map(|(f, _, _)| f.jobs_per_min_per_task)
                        .collect()
                })
                .unwrap_or_default();
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
            let crossed = crate::stats::mean(&per_task).is_some_and(|m| m <= 1.0);
            if args.until_crossover && crossed {
                println!("crossover at {load} tasks: jobs/min/task at most 1.0");
                break;
            }
        }
    }
    for p in &private {
        fixtures::remove(p.path());
    }
    rec.finish(false)?;
    drop(suite);
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
    fn jobs_must_be_positive() {
        assert!(parse_jobs("0").is_err());
        assert_eq!(parse_jobs("100"), Ok(100));
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
        assert!(e.to_string().contains("known tests: add_double"));
    }
}
