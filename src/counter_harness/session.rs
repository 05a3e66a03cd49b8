//! What `scale` and `model` share around the harness: the common options, the checks made
//! before anything starts (task counts, process limit, directories, output paths), the private
//! working directory, the signal handlers, and the start of a result record.

use crate::args::{check_dir, check_output, parse_duration};
use crate::counter_harness::{self as harness, Mode, Outcome, RunSpec, Workload};
use crate::error::usage;
use crate::proc::signals::Signals;
use crate::record::RunRecord;
use anyhow::{Context, Result};
use clap::Args;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The most tasks one point may have (will-it-scale's limit).
pub const MAX_TASKS: usize = 2048;

/// Options of every harness-driven command.
#[derive(Debug, Clone, Args)]
pub struct HarnessOpts {
    /// Task counts: a list and/or ranges, e.g. 1,2,4 or 1-N (N = online CPUs) or 1-4,8.
    /// Default: 1-N.
    #[arg(short, long, value_name = "LIST", value_parser = parse_task_list)]
    pub tasks: Option<TaskList>,
    /// Measured seconds per point (fractions allowed).
    #[arg(short, long, value_name = "SECS", value_parser = parse_duration)]
    pub duration: Option<f64>,
    /// Warm-up seconds per point, sampled and discarded before measuring (0 for none).
    #[arg(long, value_name = "SECS", value_parser = parse_warmup)]
    pub warmup: Option<f64>,
    /// Seconds per sample (1 as in will-it-scale; shorter for tests).
    #[arg(long, value_name = "SECS", value_parser = parse_duration, default_value = "1", hide = true)]
    pub sample_interval: f64,
    /// Bind task i to allowed CPU number i mod (number of allowed CPUs).
    #[arg(long)]
    pub pin: bool,
    /// Per-operation performance counters (perf_event_open) where the kernel allows them.
    #[arg(long)]
    pub counters: bool,
    /// Directory in which the private working directory (mode 0700) for test files is made;
    /// it is removed at the end. Default: the system temp directory.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Write every sample, the results and the system fingerprint to FILE as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub store: crate::args::StoreOpts,
}

/// A parsed `--tasks` list, in the order given, without duplicates.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskList(pub Vec<usize>);

/// Parses `1,2,4`, `1-N`, `2-4,8`; N is the number of online CPUs.
pub fn parse_task_list(s: &str) -> Result<TaskList, String> {
    let cpus = crate::sysinfo::online_cpus().max(1) as usize;
    let number = |t: &str| -> Result<usize, String> {
        let t = t.trim();
        let n = if t.eq_ignore_ascii_case("n") {
            cpus
        } else {
            t.parse()
                .map_err(|_| format!("{t:?} is not a task count; give e.g. 1,2,4 or 1-N"))?
        };
        if n == 0 {
            return Err("task counts must be at least 1 (e.g. --tasks 1,2)".into());
        }
        if n > MAX_TASKS {
            return Err(format!("at most {MAX_TASKS} tasks per point, got {n}"));
        }
        Ok(n)
    };
    let mut out = Vec::new();
    for part in s.split(',').filter(|p| !p.trim().is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => {
                let n = number(part)?;
                (n, n)
            }
        };
        if lo > hi {
            return Err(format!("range {part:?} runs backwards; write it low-high"));
        }
        for n in lo..=hi {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    if out.is_empty() {
        return Err("no task counts given; e.g. --tasks 1,2".into());
    }
    Ok(TaskList(out))
}

fn parse_warmup(s: &str) -> Result<f64, String> {
    if s.trim() == "0" {
        return Ok(0.0);
    }
    parse_duration(s)
}

/// The sampling plan of one point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    pub interval: Duration,
    pub warmup: usize,
    pub samples: usize,
}

impl Plan {
    /// Samples of `interval` (never longer than the duration) covering the warm-up and the
    /// measured duration.
    pub fn new(interval: f64, warmup: f64, duration: f64) -> Plan {
        let interval = interval.min(duration);
        Plan {
            interval: Duration::from_secs_f64(interval),
            warmup: (warmup / interval).round() as usize,
            samples: ((duration / interval).round() as usize).max(1),
        }
    }

    pub fn spec(&self, tasks: usize, mode: Mode, opts: &HarnessOpts) -> RunSpec<'static> {
        RunSpec {
            tasks,
            mode,
            pin: opts.pin,
            interval: self.interval,
            warmup: self.warmup,
            samples: self.samples,
            counters: opts.counters,
            until: None,
            max_extra: 0,
        }
    }
}

/// Which modes a command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeChoice {
    Process,
    Thread,
    /// Processes, then threads, at each task count (as will-it-scale's runtest.py).
    Both,
}

impl ModeChoice {
    pub fn modes(self) -> Vec<Mode> {
        match self {
            ModeChoice::Process => vec![Mode::Process],
            ModeChoice::Thread => vec![Mode::Thread],
            ModeChoice::Both => vec![Mode::Process, Mode::Thread],
        }
    }
}

/// The task counts asked for, or will-it-scale's default 1..=online CPUs.
pub fn task_counts(opts: &HarnessOpts) -> Vec<usize> {
    match &opts.tasks {
        Some(t) => t.0.clone(),
        None => (1..=crate::sysinfo::online_cpus().max(1) as usize).collect(),
    }
}

/// A started session: the private directory and the signal handlers.
pub struct Session {
    pub dir: crate::private_dir::PrivateDir,
    pub interrupt: Signals,
    pub started_at: String,
}

impl Session {
    /// Runs one point in a fresh subdirectory of the private directory, removed afterwards
    /// (so 128 MiB test files do not pile up across points).
    pub fn run(&self, work: &dyn Workload, spec: &RunSpec<'_>) -> Result<Outcome> {
        let run_dir = tempfile::Builder::new()
            .prefix("run-")
            .tempdir_in(self.dir.path())
            .context("cannot create a run directory")?;
        let outcome = harness::run(work, spec, run_dir.path(), &self.interrupt);
        let removed = run_dir.close().context("cannot remove the run directory");
        let outcome = outcome?;
        removed?;
        Ok(outcome)
    }

    /// Removes the private directory; an error if a signal arrived meanwhile.
    pub fn finish(self) -> Result<()> {
        self.dir
            .close()
            .context("cannot remove the working directory")?;
        Ok(self.interrupt.check()?)
    }
}

/// Checks everything a run needs before starting anything; `tasks_needed` is the largest
/// number of processes/threads one point will create, `outputs` the files to be written.
pub fn start(opts: &HarnessOpts, tasks_needed: usize, outputs: &[&Path]) -> Result<Session> {
    let dir = opts.dir.clone().unwrap_or_else(std::env::temp_dir);
    check_dir(&dir)?;
    if let Some(j) = &opts.json {
        check_output("--json", j)?;
    }
    for o in outputs {
        check_output("output", o)?;
    }
    let tasks = u32::try_from(tasks_needed).unwrap_or(u32::MAX);
    if let Err(refusal) = crate::proc::limits::check(tasks, 0, "--tasks") {
        return usage(refusal);
    }
    // Handlers first, so a signal from here on still leads to the cleanup below.
    let interrupt = Signals::install().context("cannot install signal handlers")?;
    // tempfile makes the directory with mode 0700.
    let private = crate::private_dir::PrivateDir::create(&dir, "patchbench-")
        .with_context(|| format!("cannot create a working directory in {}", dir.display()))?;
    Ok(Session {
        dir: private,
        interrupt,
        started_at: crate::clock::now_rfc3339(),
    })
}

/// A new record of `kind` with the system fingerprint and the given settings.
pub fn new_record(
    kind: &str,
    opts: &HarnessOpts,
    started_at: &str,
    config: BTreeMap<String, serde_json::Value>,
) -> RunRecord {
    RunRecord {
        label: opts.store.label.clone(),
        started_at: started_at.to_string(),
        finished_at: crate::clock::now_rfc3339(),
        ..RunRecord::new(kind, crate::sysinfo::SystemInfo::collect(), config)
    }
}

pub use crate::record::params;

/// Ends a run: keeps the record (marked incomplete after a failure or signal), removes the
/// working directory, and passes the failure on.
pub fn conclude(
    opts: &HarnessOpts,
    session: Session,
    mut record: RunRecord,
    failure: Option<anyhow::Error>,
) -> Result<()> {
    record.incomplete = failure.is_some();
    keep_record(opts, &record)?;
    let finished = session.finish();
    match failure {
        Some(e) => Err(e),
        None => finished,
    }
}

/// Writes `--json` and saves to the store; prints where.
pub fn keep_record(opts: &HarnessOpts, record: &RunRecord) -> Result<()> {
    if let Some(path) = &opts.json {
        record.write_json(path)?;
        eprintln!("patchbench: wrote {}", path.display());
    }
    if let Some(id) = crate::store::save(&opts.store, record)? {
        crate::store::announce(&opts.store, &id);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_lists_expand_ranges_in_order() {
        assert_eq!(parse_task_list("1,2,4").unwrap().0, vec![1, 2, 4]);
        assert_eq!(parse_task_list("2-4,8,3").unwrap().0, vec![2, 3, 4, 8]);
        let n = crate::sysinfo::online_cpus().max(1) as usize;
        assert_eq!(
            parse_task_list("1-N").unwrap().0,
            (1..=n).collect::<Vec<_>>()
        );
        assert!(parse_task_list("0").unwrap_err().contains("at least 1"));
        assert!(parse_task_list("4-2").is_err());
        assert!(parse_task_list("x").is_err());
        assert!(parse_task_list("5000").is_err());
    }

    #[test]
    fn plan_counts_samples_of_the_interval() {
        let p = Plan::new(1.0, 6.0, 5.0);
        assert_eq!((p.warmup, p.samples), (6, 5));
        // A duration below one interval shortens the interval.
        let p = Plan::new(1.0, 0.0, 0.5);
        assert_eq!(
            (p.interval, p.warmup, p.samples),
            (Duration::from_millis(500), 0, 1)
        );
        let p = Plan::new(0.1, 0.2, 0.5);
        assert_eq!((p.warmup, p.samples), (2, 5));
    }
}
