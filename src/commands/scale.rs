//! `patchbench scale`: will-it-scale's scaling curves. Every testcase runs at each task count,
//! as processes and/or threads; the result is ops/s summed over tasks and per task,
//! will-it-scale's own CSV and title files (read unchanged by its `postprocess.py` and LKP's
//! parser), an SVG plot, and a run record whose metrics carry LKP's names with every sample.
//! `--csv FILE` takes one testcase; `--csv DIR` gets `<test>.csv` and `<test>.title` for each,
//! as will-it-scale's `runalltests` leaves them for `postprocess.py`. As will-it-scale runs,
//! tasks are pinned (task i on core i mod cores; `--smt` for hardware threads, `--no-pin` for
//! none) and the address-space layout is fixed (the command re-execs itself with
//! `ADDR_NO_RANDOMIZE` first, as runtest.py runs every binary under `setarch -R`; `--aslr`
//! keeps randomisation).

use super::shared::{self, HarnessOpts, ModeChoice, PlacementOpts};
use crate::error::usage;
use crate::progress::Progress;
use crate::record::sink::{FileSink, Render};
use crate::record::Kind;
use crate::report::terminal::TerminalSink;
use crate::will_it_scale::testcases::{self, Testcase};
use crate::will_it_scale::{self, Config, Request, DEFAULT_DURATION, DEFAULT_WARMUP};
use anyhow::Result;
use clap::Args;
use std::path::{Path, PathBuf};

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
    /// Write will-it-scale's CSV exactly as its runtest.py does (integer ops/s, 0 for a mode
    /// not run). A FILE takes one testcase; an existing DIRECTORY gets <test>.csv and
    /// <test>.title for each testcase, as will-it-scale's runalltests leaves them for its
    /// postprocess.py.
    #[arg(long, value_name = "FILE|DIR")]
    pub csv: Option<PathBuf>,
    /// Plot ops/s against tasks, one line per mode and the linear line, as SVG.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    #[command(flatten)]
    pub place: PlacementOpts,
    #[command(flatten)]
    pub opts: HarnessOpts,
}

/// Runs `patchbench scale`; returns the exit status.
pub fn execute(args: &ScaleArgs) -> Result<i32> {
    if args.list {
        crate::report::print(&crate::report::list::testcases())?;
        return Ok(0);
    }
    // First, before any work: nothing done before the re-exec would survive it.
    let aslr = args.place.fix_layout();
    let tests = resolve(&args.tests)?;
    let tasks = args.opts.task_counts();
    let modes = args.mode.modes();
    let helpers = tests.iter().map(|t| t.helpers).max().unwrap_or(0);
    let needed = tasks.iter().max().copied().unwrap_or(1) * (1 + helpers) + 1;
    let csv = match &args.csv {
        Some(path) => Some(CsvTarget::choose(path, tests.len())?),
        None => None,
    };
    let plan = args.opts.plan(DEFAULT_WARMUP, DEFAULT_DURATION);
    let placement = args.place.placement();

    let mut files = csv.map(|c| c.sinks(&tests)).unwrap_or_default();
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
    let config = Config {
        tests: args.tests.clone(),
        tasks: tasks.clone(),
        modes: modes.iter().map(|m| m.plural()).collect(),
        sample_seconds: plan.interval.as_secs_f64(),
        warmup_samples: plan.warmup,
        samples: plan.samples,
        pin: placement.is_pinned(),
        placement: placement.clone(),
        aslr: aslr.clone(),
        counters: args.opts.counters,
    };
    let outputs: Vec<&Path> = args.svg.iter().map(|p| p.as_path()).collect();
    let shared::HarnessRun {
        mut sinks,
        mut record,
        session,
        dir,
    } = args.opts.start_run(
        Kind::WillItScale,
        needed,
        &outputs,
        files,
        terminal,
        &config,
    )?;
    let most = tasks.iter().max().copied().unwrap_or(1);
    if let Err(e) = will_it_scale::preflight(&tests, &session, most) {
        // Nothing was measured: no record, just the private directory to remove.
        let _ = session.finish();
        return Err(e);
    }
    sinks.started(&record)?;
    crate::safe_text::eprint_line(&format!(
        "patchbench scale: {} at tasks {:?}, {}; {}",
        tests.iter().map(|t| t.name).collect::<Vec<_>>().join(" "),
        tasks,
        crate::counter_harness::Mode::join(&modes),
        plan.describe(),
    ));
    crate::safe_text::eprint_line(&format!(
        "patchbench scale: {}; {}",
        placement.describe(),
        aslr.describe()
    ));
    let req = Request {
        tests: &tests,
        tasks: &tasks,
        modes: &modes,
        plan,
        placement: &placement,
        counters: args.opts.counters,
        monitoring: args.opts.output.monitoring()?,
        dir: &dir,
    };
    let mut progress = Progress::new();
    let outcome = will_it_scale::run(&req, &session, &mut record, &mut sinks, &mut progress);
    progress.finish();
    let outcome = outcome.and(session.finish());
    shared::conclude(&mut sinks, &mut record, outcome)?;
    Ok(0)
}

/// The testcases named, or one line saying which name is unknown or given twice.
pub fn resolve(names: &[String]) -> Result<Vec<&'static Testcase>> {
    if names.is_empty() {
        return usage(
            "give at least one testcase, e.g. `patchbench scale getppid1`; \
             `patchbench scale --list` shows them all",
        );
    }
    let mut out: Vec<&'static Testcase> = Vec::with_capacity(names.len());
    for n in names {
        let Some(t) = testcases::find(n.trim()) else {
            return usage(format!(
                "unknown testcase \"{}\"; `patchbench scale --list` shows the {} testcases",
                crate::safe_text::field(n),
                testcases::ALL.len()
            ));
        };
        if out.iter().any(|o| o.name == t.name) {
            return usage(format!(
                "testcase {} is given twice; a run records one curve per testcase, so give \
                 each once",
                t.name
            ));
        }
        out.push(t);
    }
    Ok(out)
}

/// Where `--csv` writes.
#[derive(Debug, Clone, PartialEq)]
enum CsvTarget {
    /// One testcase's CSV in this file.
    File(PathBuf),
    /// `<test>.csv` and `<test>.title` per testcase in this existing directory.
    Dir(PathBuf),
}

impl CsvTarget {
    /// What `--csv PATH` means for `tests` testcases: an existing directory takes any number;
    /// a file takes exactly one (will-it-scale's CSV has no testcase column). Checked before
    /// anything runs.
    fn choose(path: &Path, tests: usize) -> Result<CsvTarget> {
        if path.is_dir() {
            crate::args::check_dir(path)?;
            return Ok(CsvTarget::Dir(path.to_path_buf()));
        }
        if tests > 1 {
            return usage(format!(
                "--csv {}: will-it-scale's CSV holds one testcase and {tests} were given; give \
                 an existing directory instead (it gets <test>.csv and <test>.title for each, \
                 as will-it-scale's runalltests writes them)",
                path.display()
            ));
        }
        crate::args::check_output("--csv", path)?;
        Ok(CsvTarget::File(path.to_path_buf()))
    }

    /// The output files: each rewritten (atomically) after every point of its testcase, so an
    /// interrupted run keeps the rows that finished.
    fn sinks(&self, tests: &[&'static Testcase]) -> Vec<FileSink> {
        let file = |path: &Path, render: Render| FileSink::new("--csv", path, true, true, render);
        match self {
            CsvTarget::File(path) => tests.iter().map(|t| file(path, csv_of(t.name))).collect(),
            CsvTarget::Dir(dir) => tests
                .iter()
                .flat_map(|t| {
                    [
                        file(&dir.join(format!("{}.csv", t.name)), csv_of(t.name)),
                        file(&dir.join(format!("{}.title", t.name)), title_of(t.name)),
                    ]
                })
                .collect(),
        }
    }
}

/// Renders testcase `test`'s CSV from the record.
fn csv_of(test: &'static str) -> Render {
    Box::new(move |r| Ok(crate::report::scale::csv_of(r, test)))
}

/// Renders testcase `test`'s title file from the record.
fn title_of(test: &'static str) -> Render {
    Box::new(move |r| Ok(crate::report::scale::title_of(r, test)))
}
