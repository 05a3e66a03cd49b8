//! `patchbench run`: the UnixBench System Benchmarks Index (or chosen tests) at 1..N copies.
//! The arguments, the plan they make (defaults and profiles applied), the checks made before
//! anything starts, and the run of `crate::unixbench::runner`.

use super::shared::{self, OutputOpts, StoreOpts, WorkDirOpt};
use crate::args::{check_dir, parse_duration, parse_precision};
use crate::error::usage;
use crate::progress::Progress;
use crate::record::sink::FileSink;
use crate::report::terminal::TerminalSink;
use crate::unixbench::catalog;
use crate::unixbench::runner::{self, Plan};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Tests or aliases to run (comma separated or repeated): index (default), system, fs,
    /// arithmetic, misc, shell, speed, all, ..., or test ids such as pipe,syscall (UnixBench's,
    /// graphics excepted). `patchbench list` shows them all.
    #[arg(value_name = "TEST")]
    pub tests: Vec<String>,
    /// The same as the positional TEST arguments.
    #[arg(short = 't', long = "tests", value_name = "LIST")]
    pub tests_opt: Vec<String>,
    /// Copy counts, each a complete run of the selection: e.g. 1,4. Default: 1, then the number
    /// of online CPUs if above 1.
    #[arg(short, long, value_name = "LIST", value_delimiter = ',',
          value_parser = clap::value_parser!(u32).range(1..))]
    pub copies: Vec<u32>,
    /// Passes of every test (default: UnixBench's 10 for long tests, 3 for short ones; the
    /// lowest third by count is dropped).
    #[arg(short = 'i', long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub passes: Option<u32>,
    /// Seconds each test runs, replacing every test's default (10, 30 or 60 s).
    #[arg(short, long, value_name = "SECS", value_parser = parse_duration)]
    pub duration: Option<f64>,
    /// A first look in about two minutes: 1 pass, 2 s per test, no settle pauses before the
    /// passes (the file tests keep fstime's own pauses). Numbers are noisier than a default
    /// run; the report says which profile ran.
    #[arg(long)]
    pub quick: bool,
    /// Skip UnixBench's `sync; sleep 1; sync; sleep 2` before every pass. (The file tests
    /// still make fstime's own pauses between their phases, as UnixBench's program always does.)
    #[arg(long)]
    pub no_settle: bool,
    /// Adaptive passes: keep adding passes of each test (at least 3) until the 95% confidence
    /// interval of its mean pass rate is within ±PCT % (e.g. 1), or the test has used the time
    /// UnixBench's fixed passes would take (`--max-time` overrides). The report shows the
    /// precision reached.
    #[arg(long, value_name = "PCT", value_parser = parse_precision)]
    pub precision: Option<f64>,
    /// With --precision: seconds of passes allowed per test (default: what UnixBench's fixed
    /// passes take: 10 or 3 passes of the test's duration).
    #[arg(long, value_name = "SECS", value_parser = parse_duration, requires = "precision")]
    pub max_time: Option<f64>,
    #[command(flatten)]
    pub dir: WorkDirOpt,
    #[command(flatten)]
    pub output: OutputOpts,
    /// Write UnixBench's CSV (one row of scores per copy count) to FILE.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreOpts,
}

/// Builds the plan from the command line, rejecting bad input before anything starts.
pub fn plan(args: &RunArgs) -> anyhow::Result<Plan> {
    let words: Vec<String> = args.tests.iter().chain(&args.tests_opt).cloned().collect();
    let selection = if words.is_empty() {
        "index".to_string()
    } else {
        words.join(",")
    };
    let tests = match catalog::select(&selection) {
        Ok(t) => t,
        Err(msg) => return usage(msg),
    };
    let (tests, skipped) = runner::tools::split(tests);
    if tests.is_empty() {
        let why: Vec<String> = skipped
            .iter()
            .map(|s| format!("{}: {}", s.test, s.reason))
            .collect();
        return usage(format!(
            "no selected test can run here ({})",
            why.join("; ")
        ));
    }
    let copies = if args.copies.is_empty() {
        let cpus = crate::sysinfo::online_cpus();
        if cpus > 1 {
            vec![1, cpus]
        } else {
            vec![1]
        }
    } else {
        args.copies.clone()
    };
    if let Some(again) = repeated(&copies) {
        return usage(format!(
            "copy count {again} is given twice in --copies; a run records one result per copy \
             count and test, so give each once (e.g. --copies 1,2), and repeat the run for more \
             samples"
        ));
    }
    // The real directory (links among its parents resolved): what the run works in and names.
    // Tests that write there are refused a full or unusable one up front, before a run is
    // opened in the store.
    let given = args.dir.or_temp();
    let dir = if tests.iter().any(|t| t.params.writes_files()) {
        crate::args::check_work_dir(&given)?.0
    } else {
        check_dir(&given)?
    };
    let (mut passes, mut duration, mut settle, mut profile) =
        (None, None, !args.no_settle, "unixbench");
    if args.quick {
        passes = Some(1);
        duration = Some(2.0);
        settle = false;
        profile = "quick";
    }
    if args.passes.is_some() {
        passes = args.passes;
    }
    if args.duration.is_some() {
        duration = args.duration;
    }
    if profile == "unixbench" && (passes.is_some() || duration.is_some() || !settle) {
        profile = "custom";
    }
    let monitoring = args.output.monitoring()?;
    if args.precision.is_some() {
        if args.passes.is_some() {
            return usage("--precision chooses the number of passes itself; drop --passes");
        }
        passes = None;
        profile = "precision";
    }
    Ok(Plan {
        tests,
        copies,
        passes,
        duration,
        settle,
        profile,
        dir,
        precision: args.precision,
        max_time: args.max_time,
        skipped,
        monitoring,
    })
}

/// The first value given a second time, if any.
fn repeated(values: &[u32]) -> Option<u32> {
    let mut seen = std::collections::BTreeSet::new();
    values.iter().copied().find(|v| !seen.insert(*v))
}

/// Runs `patchbench run`; returns the exit status.
pub fn execute(args: &RunArgs) -> anyhow::Result<i32> {
    let plan = plan(args)?;
    args.output.check()?;
    if let Some(csv) = &args.csv {
        crate::args::check_output("--csv", csv)?;
    }
    let worker = runner::worker_program()?;
    let max_copies = plan.copies.iter().copied().max().unwrap_or(1);
    let max_procs = plan
        .tests
        .iter()
        .map(|t| t.procs_per_copy)
        .max()
        .unwrap_or(1);
    let load = crate::proc::limits::Load {
        knob: "--copies",
        asked: max_copies,
        processes: u64::from(max_copies) * u64::from(max_procs),
        // The runner reads every copy's stdout and stderr through pipes of its own.
        driver_fds_per_task: 2,
    };
    if let Err(refusal) = crate::proc::limits::check_load(&load) {
        return usage(refusal);
    }
    let mut files = Vec::new();
    if let Some(csv) = &args.csv {
        files.push(FileSink::new(
            "--csv",
            csv,
            false,
            false,
            Box::new(|r| Ok(Some(crate::report::unixbench_csv::render(r).into_bytes()))),
        ));
    }
    files.extend(args.output.html_sinks());
    let terminal = TerminalSink::new(
        None,
        Some(Box::new(|r| {
            if r.tests.is_empty() {
                String::new()
            } else {
                crate::report::unixbench_text::render(r)
            }
        })),
    );
    let mut sinks = shared::sinks(
        &args.store,
        args.output.json.as_deref(),
        false,
        files,
        terminal,
    )?;
    let system = shared::system_at_start(&plan.dir, &args.output)?;
    let mut record = runner::record::new_record(&plan, args.store.label.clone(), system);
    sinks.started(&record)?;
    let signals = crate::proc::signals::Signals::install()?;
    let mut progress = Progress::new();
    for s in &plan.skipped {
        progress.line(&format!("patchbench: skipping {}: {}", s.test, s.reason));
    }
    let outcome = runner::run(
        &plan,
        &worker,
        &signals,
        &mut record,
        &mut sinks,
        &mut progress,
    );
    shared::conclude(&mut sinks, &mut record, outcome)?;
    Ok(0)
}
