//! `patchbench aim7`: the arguments, the checks made before anything starts (tests or the
//! workfile, every `--dir`, the output file, the process limit, a shell where a test needs
//! one, the store), and the run of `crate::aim7`.

use super::shared::{self, OutputOpts, StoreOpts};
use crate::aim7::{self, Plan, AIM_START_DELAY};
use crate::args::parse_kib;
use crate::error::usage;
use crate::progress::Progress;
use crate::record::aim7::Aim7Details;
use crate::record::{Kind, RunRecord};
use crate::report::terminal::TerminalSink;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

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
    #[arg(short, long, value_name = "LOADS", default_value = "3000", value_parser = aim7::loads::parse)]
    pub load: aim7::loads::Loads,
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
    #[command(flatten)]
    pub output: OutputOpts,
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

/// Runs `patchbench aim7`; returns the exit status.
pub fn execute(args: &Aim7Args) -> anyhow::Result<i32> {
    let mixes = aim7::resolve_mixes(args.workfile.as_deref(), &args.tests)?;
    let given: Vec<PathBuf> = if args.dirs.is_empty() {
        vec![std::env::temp_dir()]
    } else {
        args.dirs.clone()
    };
    let (dirs, fs): (Vec<PathBuf>, Vec<_>) = given
        .iter()
        .map(|d| crate::args::check_work_dir(d))
        .collect::<anyhow::Result<Vec<_>>>()?
        .into_iter()
        .unzip();
    args.output.check()?;
    // One workfile, or tests without sizes of their own: the first mix's sizes are the run's.
    let filesize = args.filesize.or(mixes.iter().find_map(|m| m.filesize));
    let poolsize = args.poolsize.or(mixes.iter().find_map(|m| m.poolsize));
    let plan = Plan {
        mixes,
        workfile: args.workfile.is_some(),
        loads: args.load.0.clone(),
        jobs_per_task: args.jobs,
        dirs,
        runs: args.runs,
        start_delay: if args.no_start_delay {
            Duration::ZERO
        } else {
            AIM_START_DELAY
        },
        filesize_kib: filesize.unwrap_or(aim7::DEFAULT_FILESIZE_KIB),
        poolsize_kib: poolsize.unwrap_or(aim7::DEFAULT_POOLSIZE_KIB),
        log: !args.no_log,
        until_crossover: args.until_crossover,
        monitoring: args.output.monitoring()?,
    };
    let all_jobs = plan.all_jobs();
    let max_load = plan.loads.iter().copied().max().unwrap_or(1);
    let extra = all_jobs.iter().map(|j| j.extra_procs).max().unwrap_or(0);
    if let Err(refusal) = crate::proc::limits::check(max_load, extra, "--load") {
        return usage(refusal);
    }
    if let Err(refusal) = aim7::suite::check_shell(&all_jobs) {
        return usage(refusal);
    }

    let mut table = crate::report::aim7::LiveTable::new();
    let terminal = TerminalSink::new(Some(Box::new(move |r| table.render(r))), None);
    let mut sinks = shared::sinks(
        &args.store,
        args.output.json.as_deref(),
        false,
        args.output.html_sinks(),
        terminal,
    )?;
    let mut system = shared::system_at_start(&plan.dirs[0], &args.output)?;
    for (i, f) in fs.iter().enumerate() {
        system.extra.insert(
            format!("aim7.dir{i}"),
            format!("{}: {}", f.dir, f.summary()),
        );
    }
    let mut record = RunRecord {
        label: args.store.label.clone(),
        aim7: Some(Aim7Details {
            points: Vec::new(),
            filesystems: fs,
        }),
        ..RunRecord::new(Kind::Aim7, system, &plan.config())
    };
    sinks.started(&record)?;
    let signals = aim7::driver::Signals::install_waking_on_child_exit()?;
    let mut progress = Progress::new();
    let outcome = aim7::run(&plan, &signals, &mut record, &mut sinks, &mut progress);
    progress.finish();
    shared::conclude(&mut sinks, &mut record, outcome)?;
    Ok(0)
}
