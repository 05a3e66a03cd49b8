//! `patchbench model`: runs one of the user-space models (`model-setbit`, `model-isize`) on
//! the shared-memory counter harness and keeps every point.

use super::shared::{self, HarnessOpts, ModeChoice, PlacementOpts};
use crate::error::usage;
use crate::model::{isize, pick_variants, setbit, Request, DEFAULT_DURATION, DEFAULT_WARMUP};
use crate::progress::Progress;
use crate::record::Kind;
use crate::report::terminal::TerminalSink;
use anyhow::Result;
use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct ModelArgs {
    /// model-setbit or model-isize (`--list` describes them).
    #[arg(value_name = "MODEL")]
    pub model: Option<String>,
    /// List the models and their variants and exit.
    #[arg(long)]
    pub list: bool,
    /// Variants to run, comma separated (default: every correct variant of the model).
    /// model-setbit: always, test-first. model-isize: fence, acquire, seqcount, and
    /// publish-first (a deliberately wrong writer that publishes the size before the data).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub variants: Vec<String>,
    /// model-setbit: every iteration also reads a second word in the flags' cache line.
    #[arg(long)]
    pub read_mix: bool,
    /// model-isize: keep measuring each point until the readers made this many reads.
    #[arg(long, value_name = "N", default_value_t = 10_000_000)]
    pub reads: u64,
    /// Tasks as threads (default), processes sharing one mapping, or both.
    #[arg(short, long, value_enum, default_value_t = ModeChoice::Thread)]
    pub mode: ModeChoice,
    #[command(flatten)]
    pub place: PlacementOpts,
    /// For model-isize, --tasks counts the reader tasks (one writer runs besides them);
    /// its default is one reader per CPU but one.
    #[command(flatten)]
    pub opts: HarnessOpts,
}

/// Runs `patchbench model`; returns the exit status.
pub fn execute(args: &ModelArgs) -> Result<i32> {
    if args.list {
        crate::report::print(&crate::report::model::list())?;
        return Ok(0);
    }
    match which(args)? {
        Which::Setbit => run_setbit(args),
        Which::Isize => run_isize(args),
    }
}

/// The two models.
enum Which {
    Setbit,
    Isize,
}

/// The model named, or one line saying it is unknown or missing.
fn which(args: &ModelArgs) -> Result<Which> {
    match args.model.as_deref().map(str::trim) {
        Some("model-setbit") | Some("setbit") => Ok(Which::Setbit),
        Some("model-isize") | Some("isize") => Ok(Which::Isize),
        Some(other) => usage(format!(
            "unknown model {other:?}; the models are model-setbit and model-isize"
        )),
        None => usage("give a model: model-setbit or model-isize (`patchbench model --list`)"),
    }
}

/// Checks the model's name and variants without running anything (a campaign's or a
/// bisection's workload, before any build or step).
pub fn check(args: &ModelArgs) -> Result<()> {
    match which(args)? {
        Which::Setbit => {
            pick_variants(&args.variants, setbit::CHOICES, setbit::DEFAULT)?;
        }
        Which::Isize => {
            pick_variants(&args.variants, isize::CHOICES, isize::DEFAULT)?;
        }
    }
    Ok(())
}

/// A model run as it starts (`HarnessOpts::start_run`), its record started in the sinks.
fn start(
    args: &ModelArgs,
    needed: usize,
    config: &impl serde::Serialize,
) -> Result<shared::HarnessRun> {
    let terminal = TerminalSink::new(None, Some(Box::new(crate::report::model::table)));
    let mut run = args
        .opts
        .start_run(Kind::Model, needed, &[], Vec::new(), terminal, config)?;
    run.sinks.started(&run.record)?;
    Ok(run)
}

fn run_setbit(args: &ModelArgs) -> Result<i32> {
    let variants = pick_variants(&args.variants, setbit::CHOICES, setbit::DEFAULT)?;
    // Before any work: nothing done before the re-exec would survive it.
    let aslr = args.place.fix_layout();
    let tasks = args.opts.task_counts();
    let modes = args.mode.modes();
    let plan = args.opts.plan(DEFAULT_WARMUP, DEFAULT_DURATION);
    let placement = args.place.placement();
    let config = setbit::Config {
        model: "model-setbit",
        tasks: tasks.clone(),
        modes: modes.iter().map(|m| m.plural()).collect(),
        pin: placement.is_pinned(),
        placement: placement.clone(),
        aslr: aslr.clone(),
        read_mix: args.read_mix,
        variants: variants.iter().map(|v| v.name()).collect(),
    };
    let needed = tasks.iter().max().copied().unwrap_or(1) + 1;
    let shared::HarnessRun {
        mut sinks,
        mut record,
        session,
        dir,
    } = start(args, needed, &config)?;
    crate::safe_text::eprint_line(&format!(
        "patchbench model-setbit: tasks {tasks:?}, {}, read mix {}; {}",
        crate::counter_harness::Mode::join(&modes),
        if args.read_mix { "on" } else { "off" },
        plan.describe()
    ));
    crate::safe_text::eprint_line(&format!(
        "patchbench model-setbit: {}; {}",
        placement.describe(),
        aslr.describe()
    ));
    let req = Request {
        variants: &variants,
        tasks: &tasks,
        modes: &modes,
        plan,
        placement: &placement,
        counters: args.opts.counters,
        monitoring: args.opts.output.monitoring()?,
        dir: &dir,
    };
    let mut progress = Progress::new();
    let outcome = setbit::run(
        &req,
        args.read_mix,
        &session,
        &mut record,
        &mut sinks,
        &mut progress,
    );
    progress.finish();
    let outcome = outcome.and(session.finish());
    shared::conclude(&mut sinks, &mut record, outcome)?;
    Ok(0)
}

fn run_isize(args: &ModelArgs) -> Result<i32> {
    let variants = pick_variants(&args.variants, isize::CHOICES, isize::DEFAULT)?;
    // Before any work: nothing done before the re-exec would survive it.
    let aslr = args.place.fix_layout();
    let readers = match &args.opts.tasks {
        Some(t) => t.0.clone(),
        None => vec![(crate::sysinfo::online_cpus() as usize)
            .saturating_sub(1)
            .max(1)],
    };
    let modes = args.mode.modes();
    let plan = args.opts.plan(DEFAULT_WARMUP, DEFAULT_DURATION);
    let placement = args.place.placement();
    let config = isize::Config {
        model: "model-isize",
        tasks: readers.clone(),
        modes: modes.iter().map(|m| m.plural()).collect(),
        pin: placement.is_pinned(),
        placement: placement.clone(),
        aslr: aslr.clone(),
        min_reads: args.reads,
        variants: variants.iter().map(|v| v.name()).collect(),
    };
    let needed = readers.iter().max().copied().unwrap_or(1) + 2;
    let shared::HarnessRun {
        mut sinks,
        mut record,
        session,
        dir,
    } = start(args, needed, &config)?;
    crate::safe_text::eprint_line(&format!(
        "patchbench model-isize: 1 writer + readers {readers:?}, {}; at least {} × {:.3} s \
         samples and {} reads after {} warm-up samples",
        crate::counter_harness::Mode::join(&modes),
        plan.samples,
        plan.interval.as_secs_f64(),
        args.reads,
        plan.warmup
    ));
    crate::safe_text::eprint_line(&format!(
        "patchbench model-isize: {}; {}",
        placement.describe(),
        aslr.describe()
    ));
    let req = Request {
        variants: &variants,
        tasks: &readers,
        modes: &modes,
        plan,
        placement: &placement,
        counters: args.opts.counters,
        monitoring: args.opts.output.monitoring()?,
        dir: &dir,
    };
    let mut progress = Progress::new();
    let outcome = isize::run(
        &req,
        args.reads,
        &session,
        &mut record,
        &mut sinks,
        &mut progress,
    );
    progress.finish();
    let (outcome, bad) = match outcome {
        Ok(bad) => (Ok(()), bad),
        Err(e) => (Err(e), Vec::new()),
    };
    let outcome = outcome.and(session.finish());
    shared::conclude(&mut sinks, &mut record, outcome)?;
    match isize::violations_error(&bad) {
        Some(e) => Err(e),
        None => Ok(0),
    }
}
