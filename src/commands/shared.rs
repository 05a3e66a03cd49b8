//! What several commands share: the store options of every measuring command, their output
//! files (`--json`, `--html`) and working directory (`--dir`), the options of the
//! harness-driven commands (`scale`, `model`), the fingerprint every measuring command
//! starts with (the system and a short noise check), the sink set every run is handed to, and
//! the way a run ends (the run's own failure wins over a sink's; a closed stdout is quiet).

use crate::args::{parse_duration, parse_duration_or_zero, parse_task_list, TaskList};
use crate::counter_harness::aslr::{self, Aslr};
use crate::counter_harness::placement::{Pinning, Placement};
use crate::counter_harness::Mode;
use crate::record::sink::{FileSink, Sinks};
use crate::record::RunRecord;
use crate::report::terminal::TerminalSink;
use crate::store::db::Store;
use crate::store::{Access, Location};
use crate::sysinfo::SystemInfo;
use clap::Args;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The `--store` help, the same for every command.
const STORE_HELP: &str = "Result store: a SQLite file, or a lab's PostgreSQL database as \
postgres://USER@HOST:PORT/DB?sslmode=require (the password from PGPASSWORD or ~/.pgpass, never \
in the URL on a shared machine); default: $PATCHBENCH_STORE, else \
$XDG_DATA_HOME/patchbench/results.db";

/// The files every measuring command (`run`, `aim7`, `scale`, `model`) can write besides the
/// store, declared once.
#[derive(Debug, Clone, Args, Default)]
pub struct OutputOpts {
    /// Write every sample, the results and the system fingerprint to FILE as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the run's report as one self-contained HTML page to FILE (when the run ends).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Record no monitors: by default the workload's CPU time, faults and context switches
    /// and the machine's /proc/vmstat, /proc/stat, interrupts, softirqs, schedstat and cgroup
    /// throttling are read around every measured unit (outside the timed windows) and
    /// stored, for `compare`'s "what changed with it" table.
    #[arg(long)]
    pub no_monitors: bool,
    /// Also count the workload's own perf events (LKP's perf-stat rows: task-clock, context
    /// switches, CPU migrations, page faults; cycles, instructions, cache and branch misses
    /// where the kernel has a PMU) with counters inherited by every copy and task. They run
    /// INSIDE the timed window: the kernel works for them at every fork, exit and context
    /// switch, the paths such tests time (measured: context1 about 18 % slower, spawn 16 %;
    /// docs/benchmarks.md). Off by default; the record and the report say when they ran. A
    /// user without CAP_PERFMON under kernel.perf_event_paranoid 2 counts user space only:
    /// rows named `:u`, context switches and migrations left out (docs/monitors.md).
    #[arg(long)]
    pub perf_stat: bool,
    /// A sampling profile of every measured unit, kernel and user, with call chains: `perf
    /// record -a -g` (Debian's linux-perf) on `cycles` where the kernel has it, else
    /// `cpu-clock`, folded into each symbol's self and children share
    /// (`perf-profile.self.<event>.<sym>`), stored with the monitors and compared in their
    /// table. Needs root (or perf_event_paranoid -1); without it the run goes on and says why.
    #[arg(long)]
    pub profile: bool,
    /// With --profile: keep each unit's perf data in DIR (made if missing; nothing there is
    /// replaced), as `<run>-<unit>-<n>.perf.data`, for `perf report -i FILE`.
    #[arg(long, value_name = "DIR", requires = "profile")]
    pub profile_data: Option<PathBuf>,
    /// Measure even while another measurement runs on this machine. By default every
    /// measuring command (and every campaign or agent step) waits for the one before it,
    /// whatever its store, saying whose it is: two at once share the CPUs and the caches,
    /// and both results are quietly contaminated. With this flag the run goes on, its record
    /// says whom it ran beside, and `compare` warns.
    #[arg(long)]
    pub allow_overlap: bool,
}

impl OutputOpts {
    /// Checks the files given before anything starts (`crate::args::check_output`).
    pub fn check(&self) -> anyhow::Result<()> {
        if let Some(j) = &self.json {
            crate::args::check_output("--json", j)?;
        }
        if let Some(h) = &self.html {
            crate::args::check_output("--html", h)?;
        }
        Ok(())
    }

    /// What to record around each unit; `--profile` without the monitors is refused.
    pub fn monitoring(&self) -> anyhow::Result<crate::monitor::monitoring::Plan> {
        if self.profile && self.no_monitors {
            return crate::error::usage("--profile is kept with the monitors; drop --no-monitors");
        }
        if self.perf_stat && self.no_monitors {
            return crate::error::usage(
                "--perf-stat is kept with the monitors; drop --no-monitors",
            );
        }
        if let Some(d) = &self.profile_data {
            if d.exists() && !d.is_dir() {
                return crate::error::usage(format!(
                    "--profile-data {} is not a directory; give a directory (it is made if missing)",
                    d.display()
                ));
            }
        }
        Ok(crate::monitor::monitoring::Plan {
            monitors: !self.no_monitors,
            profile: self.profile,
            profile_data: self.profile_data.clone(),
            perf_stat: self.perf_stat,
        })
    }

    /// The sinks of `--html` (the `--json` one is `sinks`'s).
    pub fn html_sinks(&self) -> Vec<FileSink> {
        html_sinks(self.html.as_deref())
    }

    /// The first option of these given, for a refusal (`--json`, `--html`).
    pub fn given(&self) -> Option<&'static str> {
        if self.json.is_some() {
            Some("--json")
        } else if self.html.is_some() {
            Some("--html")
        } else {
            None
        }
    }
}

/// The one working directory of `run`, `scale` and `model` (`aim7` takes several, round-robin,
/// as AIM's `config` list does: its own `-d/--dir`).
#[derive(Debug, Clone, Args, Default)]
pub struct WorkDirOpt {
    /// Directory in which a private working directory (mode 0700) is made for the tests'
    /// files; it is removed at the end. Default: the system temp directory.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

impl WorkDirOpt {
    /// The directory given, else the system temp directory.
    pub fn or_temp(&self) -> PathBuf {
        self.dir.clone().unwrap_or_else(std::env::temp_dir)
    }
}

/// Where results go: the store (on by default) and a label for comparisons.
#[derive(Debug, Clone, Args, Default)]
pub struct StoreOpts {
    /// Label this run as one side of a comparison (e.g. base, patched): plain text, no
    /// control characters or commas.
    #[arg(long, value_name = "NAME", value_parser = crate::args::parse_label)]
    pub label: Option<String>,
    #[arg(long, value_name = "PATH|URL", help = STORE_HELP)]
    pub store: Option<OsString>,
    /// Give up reaching a PostgreSQL store after SECS (default: connect_timeout in the URL,
    /// else PGCONNECT_TIMEOUT, else 5).
    #[arg(long, value_name = "SECS", value_parser = parse_connect_timeout)]
    pub connect_timeout: Option<Duration>,
    /// Do not save this run in the store.
    #[arg(long)]
    pub no_store: bool,
}

/// The store of a command that only reads or edits it.
#[derive(Debug, Clone, Args, Default)]
pub struct StoreArg {
    #[arg(long, value_name = "PATH|URL", help = STORE_HELP)]
    pub store: Option<OsString>,
    /// Give up reaching a PostgreSQL store after SECS (default: connect_timeout in the URL,
    /// else PGCONNECT_TIMEOUT, else 5).
    #[arg(long, value_name = "SECS", value_parser = parse_connect_timeout)]
    pub connect_timeout: Option<Duration>,
}

/// `--connect-timeout`: seconds (fractions allowed), above 0, at most a day.
pub fn parse_connect_timeout(s: &str) -> Result<Duration, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 86_400.0 => Ok(Duration::from_secs_f64(v)),
        _ => Err(format!(
            "{s:?} is not a number of seconds above 0 (at most 86400)"
        )),
    }
}

impl StoreArg {
    /// Where the store is.
    pub fn location(&self) -> anyhow::Result<Location> {
        crate::store::store_location(self.store.as_deref())
    }

    /// Opens the store (creating it only with `create`; otherwise for reading).
    pub fn open(&self, create: bool) -> anyhow::Result<Store> {
        self.open_for(if create { Access::Create } else { Access::Read })
    }

    /// Opens the store for `access`.
    pub fn open_for(&self, access: Access) -> anyhow::Result<Store> {
        Store::open(&self.location()?, access, self.connect_timeout)
    }
}

/// The start of a measuring command's measurement: the machine-wide measurement lock, held
/// until the process exits (`crate::proc::measure_lock`: it waits while another measurement
/// runs, saying whose, unless `--allow-overlap`), then the fingerprint: the system, and the
/// noise check of `patchbench check` taken silently over a short sample
/// ([`crate::noise::RUN_SAMPLE`]) with `dir`, the directory the run works in, as the file
/// tests' directory. A run that overlapped another says whom in
/// [`crate::sysinfo::MEASURED_BESIDE`].
pub fn system_at_start(dir: &Path, output: &OutputOpts) -> anyhow::Result<SystemInfo> {
    let overlapped =
        crate::proc::measure_lock::hold_for_process(output.allow_overlap, &mut |line| {
            crate::safe_text::eprint_line(line)
        })?;
    let mut system = SystemInfo::collect();
    system.noise = Some(crate::noise::snapshot(dir, crate::noise::RUN_SAMPLE));
    if let Some(holder) = overlapped {
        system
            .extra
            .insert(crate::sysinfo::MEASURED_BESIDE.to_string(), holder);
    }
    Ok(system)
}

/// The sinks of a measuring command, in order: the store (opened and checked now, before any
/// work), the `--json` file, the command's other files, and the terminal last, so that results
/// are kept before they are shown.
pub fn sinks(
    store: &StoreOpts,
    json: Option<&Path>,
    announce_json: bool,
    files: Vec<FileSink>,
    terminal: TerminalSink,
) -> anyhow::Result<Sinks> {
    let mut sinks = Sinks::new();
    if !store.no_store {
        let location = crate::store::store_location(store.store.as_deref())?;
        sinks.add(crate::store::sink(
            &location,
            store.label.clone(),
            store.connect_timeout,
        )?);
    }
    if let Some(path) = json {
        sinks.add(FileSink::json(path, announce_json));
    }
    for f in files {
        sinks.add(f);
    }
    sinks.add(terminal);
    Ok(sinks)
}

/// The `--html FILE` page of a measuring command (none without one): the run's report
/// (`crate::report::html::run`), written atomically when the run ends, also after a failure
/// or a signal (then marked incomplete).
fn html_sinks(path: Option<&Path>) -> Vec<FileSink> {
    path.map(|p| {
        FileSink::new(
            "--html",
            p,
            false,
            true,
            Box::new(|r| Ok(Some(crate::report::html::run(None, r).into_bytes()))),
        )
    })
    .into_iter()
    .collect()
}

/// Ends a run: marks it incomplete (with the error) after a failure or signal, lets every sink
/// keep the final record, and returns the run's own failure before a sink's.
pub fn conclude(
    sinks: &mut Sinks,
    record: &mut RunRecord,
    outcome: anyhow::Result<()>,
) -> anyhow::Result<()> {
    record.incomplete = outcome.is_err();
    if let Err(e) = &outcome {
        record.error = Some(e.to_string());
    }
    record.finished_at = crate::clock::now_rfc3339();
    let kept = sinks.finished(record);
    match (outcome, kept) {
        (Err(e), Err(k)) => {
            if !crate::error::is_quiet(&k) {
                crate::safe_text::eprint_line(&format!("patchbench: error: {k:#}"));
            }
            Err(e)
        }
        (Err(e), Ok(())) => Err(e),
        (Ok(()), kept) => kept,
    }
}

/// Where the tasks of a harness-driven command (`scale`, `model`) run and with which
/// address-space layout. The defaults are will-it-scale's: task i bound to core i mod
/// (number of cores), ASLR off as under runtest.py's `setarch -R`.
#[derive(Debug, Clone, Args)]
pub struct PlacementOpts {
    /// Leave the tasks unbound. By default task i is bound to core i mod (number of cores),
    /// cores in socket order within the CPUs patchbench may use, as will-it-scale binds them.
    #[arg(long, conflicts_with_all = ["pin", "smt"])]
    pub no_pin: bool,
    /// Bind task i to hardware thread i mod (number of hardware threads) instead of to a
    /// whole core (will-it-scale's -m).
    #[arg(long)]
    pub smt: bool,
    /// Pin as by default (kept for older scripts).
    #[arg(long, hide = true)]
    pub pin: bool,
    /// Keep address-space randomisation. By default patchbench re-execs itself with ASLR off
    /// for the run, as will-it-scale's runtest.py runs every test under `setarch -R`.
    #[arg(long)]
    pub aslr: bool,
}

impl PlacementOpts {
    /// The layout of this run's tasks. Without `--aslr` this re-execs the process with
    /// `ADDR_NO_RANDOMIZE` when it is randomised, so call it first, before any work: nothing
    /// done before the re-exec survives it.
    pub fn fix_layout(&self) -> Aslr {
        if self.aslr {
            aslr::kept()
        } else {
            aslr::disable_by_reexec()
        }
    }

    /// Where each task runs.
    pub fn placement(&self) -> Placement {
        Placement::plan(if self.no_pin {
            Pinning::None
        } else if self.smt {
            Pinning::HwThreads
        } else {
            Pinning::Cores
        })
    }
}

/// Options of every harness-driven command (`scale`, `model`).
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
    #[arg(long, value_name = "SECS", value_parser = parse_duration_or_zero)]
    pub warmup: Option<f64>,
    /// Seconds per sample (1 as in will-it-scale; shorter for tests).
    #[arg(long, value_name = "SECS", value_parser = parse_duration, default_value = "1", hide = true)]
    pub sample_interval: f64,
    /// Per-operation performance counters (perf_event_open) where the kernel allows them.
    #[arg(long)]
    pub counters: bool,
    #[command(flatten)]
    pub dir: WorkDirOpt,
    #[command(flatten)]
    pub output: OutputOpts,
    #[command(flatten)]
    pub store: StoreOpts,
}

/// A command that names one campaign or bisection in a store (`stop`, bisect's `resume`).
#[derive(Debug, Clone, Args)]
pub struct NameArgs {
    #[arg(value_name = "NAME")]
    pub name: String,
    #[command(flatten)]
    pub store: StoreArg,
}

/// A run on the counter harness (`scale`, `model`) as it starts: its sinks, its record (not
/// yet started in them: a check may still refuse the run), the harness's session and the
/// work directory.
pub struct HarnessRun {
    pub sinks: Sinks,
    pub record: RunRecord,
    pub session: crate::counter_harness::session::Session,
    pub dir: PathBuf,
}

impl HarnessOpts {
    /// Starts a run of `kind` on the counter harness: the work directory checked for
    /// `needed` tasks (and `outputs` besides --json and --html), the sinks (the store,
    /// --json, `files`, --html and `terminal`), the record with `config` and the system as
    /// found (after the measurement lock, `system_at_start`), and the harness's session.
    pub fn start_run(
        &self,
        kind: crate::record::Kind,
        needed: usize,
        outputs: &[&Path],
        mut files: Vec<FileSink>,
        terminal: TerminalSink,
        config: &impl serde::Serialize,
    ) -> anyhow::Result<HarnessRun> {
        let dir = self.check(needed, outputs)?;
        files.extend(self.output.html_sinks());
        let sinks = sinks(
            &self.store,
            self.output.json.as_deref(),
            true,
            files,
            terminal,
        )?;
        let record = RunRecord {
            label: self.store.label.clone(),
            ..RunRecord::new(kind, system_at_start(&dir, &self.output)?, config)
        };
        let session = crate::counter_harness::session::Session::start(&dir)?;
        Ok(HarnessRun {
            sinks,
            record,
            session,
            dir,
        })
    }

    /// The task counts asked for, or will-it-scale's default 1..=online CPUs.
    pub fn task_counts(&self) -> Vec<usize> {
        match &self.tasks {
            Some(t) => t.0.clone(),
            None => (1..=crate::sysinfo::online_cpus().max(1) as usize).collect(),
        }
    }

    /// The sampling plan with the command's default warm-up and duration.
    pub fn plan(
        &self,
        default_warmup: f64,
        default_duration: f64,
    ) -> crate::counter_harness::session::Plan {
        crate::counter_harness::session::Plan::new(
            self.sample_interval,
            self.warmup.unwrap_or(default_warmup),
            self.duration.unwrap_or(default_duration),
        )
    }

    /// Checks the directory, the output files and the process limit for a run whose largest
    /// point creates `tasks_needed` processes or threads, before anything starts; returns the
    /// directory to work in.
    pub fn check(&self, tasks_needed: usize, outputs: &[&Path]) -> anyhow::Result<PathBuf> {
        let dir = crate::args::check_dir(&self.dir.or_temp())?;
        self.output.check()?;
        for o in outputs {
            crate::args::check_output("output", o)?;
        }
        // The message names the largest --tasks given; the count includes helpers and hosts.
        let asked = self.task_counts().into_iter().max().unwrap_or(1);
        let load = crate::proc::limits::Load {
            knob: "--tasks",
            asked: u32::try_from(asked).unwrap_or(u32::MAX),
            processes: tasks_needed as u64,
            driver_fds_per_task: 0,
        };
        if let Err(refusal) = crate::proc::limits::check_load(&load) {
            return crate::error::usage(refusal);
        }
        Ok(dir)
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
