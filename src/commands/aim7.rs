//! `patchbench aim7`: the arguments, the checks made before anything starts (tests, every
//! `--dir`, the output file, the process limit, the store), and the run of `crate::aim7`.

use super::shared::{self, StoreOpts};
use crate::aim7::{self, jobs, Plan, AIM_START_DELAY};
use crate::args::parse_kib;
use crate::error::usage;
use crate::progress::Progress;
use crate::record::aim7::Aim7Details;
use crate::record::{Kind, RunRecord};
use crate::report::terminal::TerminalSink;
use anyhow::Context;
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    #[arg(short, long, value_name = "N", value_delimiter = ',', default_value = "3000",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub load: Vec<u32>,
    /// Jobs each task runs (AIM's LOADNUM is 100).
    #[arg(short, long, value_name = "J", default_value_t = 100,
          value_parser = clap::value_parser!(u32).range(1..))]
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

/// Rejects a --dir that is unusable: missing, a symlink, read-only or full.
pub fn check_work_dir(dir: &Path) -> anyhow::Result<crate::fsinfo::FsInfo> {
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

/// Runs `patchbench aim7`; returns the exit status.
pub fn execute(args: &Aim7Args) -> anyhow::Result<i32> {
    let tests = aim7::resolve_tests(&args.tests)?;
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
    let plan = Plan {
        tests,
        loads: args.load.clone(),
        jobs_per_task: args.jobs,
        dirs,
        runs: args.runs,
        start_delay: if args.aim_start_delay {
            AIM_START_DELAY
        } else {
            Duration::ZERO
        },
        filesize_kib: args.filesize,
        poolsize_kib: args.poolsize,
    };

    let mut table = crate::report::aim7::LiveTable::new();
    let terminal = TerminalSink::new(Some(Box::new(move |r| table.render(r))), None);
    let mut sinks = shared::sinks(&args.store, args.json.as_deref(), false, vec![], terminal)?;
    let mut system = shared::system_at_start(&plan.dirs[0]);
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
    let outcome = aim7::run(
        &plan,
        &true_program,
        &signals,
        &mut record,
        &mut sinks,
        &mut progress,
    );
    progress.finish();
    shared::conclude(&mut sinks, &mut record, outcome)?;
    Ok(0)
}
