//! `patchbench scale`: will-it-scale's scaling curves. Every testcase runs at each task count,
//! as processes and/or threads; the result is ops/s summed over tasks and per task, a CSV in
//! will-it-scale's columns, an SVG plot, and a run record whose metrics carry LKP's names.

use super::shared::{self, HarnessOpts, ModeChoice};
use crate::error::usage;
use crate::progress::Progress;
use crate::record::sink::FileSink;
use crate::record::{Kind, RunRecord};
use crate::report::terminal::TerminalSink;
use crate::will_it_scale::testcases::{self, Testcase};
use crate::will_it_scale::{self, Config, Request, DEFAULT_DURATION, DEFAULT_WARMUP};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct ScaleArgs {
    /// will-it-scale testcases, e.g. getppid1 open1 (`--list` shows them all).
    #[arg(value_name = "TEST", value_delimiter = ',')]
    pub tests: Vec<String>,
    /// List the testcases with their descriptions and exit.
    #[arg(long)]
    pub list: bool,
    /// Tasks as processes, threads, or both (processes then threads at each task count).
    #[arg(short, long, value_enum, default_value_t = ModeChoice::Both)]
    pub mode: ModeChoice,
    /// Write the curves as CSV (will-it-scale's columns, after a test column).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Plot ops/s against tasks, one line per mode and the linear line, as SVG.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    #[command(flatten)]
    pub opts: HarnessOpts,
}

/// Runs `patchbench scale`; returns the exit status.
pub fn execute(args: &ScaleArgs) -> Result<i32> {
    if args.list {
        crate::report::print(&crate::report::list::testcases())?;
        return Ok(0);
    }
    let tests = resolve(&args.tests)?;
    let tasks = args.opts.task_counts();
    let modes = args.mode.modes();
    let helpers = tests.iter().map(|t| t.helpers).max().unwrap_or(0);
    let needed = tasks.iter().max().copied().unwrap_or(1) * (1 + helpers) + 1;
    let outputs: Vec<&std::path::Path> = [&args.csv, &args.svg]
        .into_iter()
        .flatten()
        .map(|p| p.as_path())
        .collect();
    let dir = args.opts.check(needed, &outputs)?;
    let plan = args.opts.plan(DEFAULT_WARMUP, DEFAULT_DURATION);

    let mut files = Vec::new();
    if let Some(path) = &args.csv {
        files.push(FileSink::new(
            "--csv",
            path,
            true,
            true,
            Box::new(crate::report::scale::csv_of),
        ));
    }
    if let Some(path) = &args.svg {
        files.push(FileSink::new(
            "--svg",
            path,
            false,
            true,
            Box::new(crate::report::scale_svg::svg_of),
        ));
    }
    let terminal = TerminalSink::new(None, Some(Box::new(crate::report::scale::summary_of)));
    let mut sinks = shared::sinks(
        &args.opts.store,
        args.opts.json.as_deref(),
        true,
        files,
        terminal,
    )?;
    let config = Config {
        tests: args.tests.clone(),
        tasks: tasks.clone(),
        modes: modes.iter().map(|m| m.plural()).collect(),
        sample_seconds: plan.interval.as_secs_f64(),
        warmup_samples: plan.warmup,
        samples: plan.samples,
        pin: args.opts.pin,
        counters: args.opts.counters,
    };
    let mut record = RunRecord {
        label: args.opts.store.label.clone(),
        ..RunRecord::new(Kind::WillItScale, shared::system_at_start(&dir), &config)
    };
    sinks.started(&record)?;
    let session = crate::counter_harness::session::Session::start(&dir)?;
    eprintln!(
        "patchbench scale: {} at tasks {:?}, {}; {}",
        tests.iter().map(|t| t.name).collect::<Vec<_>>().join(" "),
        tasks,
        crate::counter_harness::Mode::join(&modes),
        plan.describe(),
    );
    let req = Request {
        tests: &tests,
        tasks: &tasks,
        modes: &modes,
        plan,
        pin: args.opts.pin,
        counters: args.opts.counters,
    };
    let mut progress = Progress::new();
    let outcome = will_it_scale::run(&req, &session, &mut record, &mut sinks, &mut progress);
    progress.finish();
    let outcome = outcome.and(session.finish());
    shared::conclude(&mut sinks, &mut record, outcome)?;
    Ok(0)
}

/// The testcases named, or one line saying which name is unknown.
fn resolve(names: &[String]) -> Result<Vec<&'static Testcase>> {
    if names.is_empty() {
        return usage(
            "give at least one testcase, e.g. `patchbench scale getppid1`; \
             `patchbench scale --list` shows them all",
        );
    }
    names
        .iter()
        .map(|n| match testcases::find(n.trim()) {
            Some(t) => Ok(t),
            None => usage(format!(
                "unknown testcase {n:?}; `patchbench scale --list` shows the {} testcases",
                testcases::ALL.len()
            )),
        })
        .collect()
}
