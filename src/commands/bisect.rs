//! `patchbench bisect`: which commit between a good and a bad one changed the metric, with a
//! paired campaign at every step (`crate::bisect` has the rule, the search and the flow).
//!
//! - `start NAME --tree DIR --good REF --bad REF [campaign options] -- WORKLOAD`: reads the
//!   history and checks everything (the refs, good an ancestor of bad, the workload, the
//!   executor's needs) before anything is stored or built, then runs the bisection in the
//!   foreground. It takes `campaign start`'s step options (`StepArgs`, the same definitions)
//!   and no side, lab or kexec option: clap itself refuses those.
//! - `resume NAME`: continues after Ctrl-C, a crash or a reboot.
//! - `status [NAME]`, `report NAME [--format text|markdown|json|html]`, `stop NAME`.

use super::campaign::{StartArgs, StepArgs};
use super::shared::{NameArgs, StoreArg};
use crate::bisect::flow::{self, Bisector, CampaignExecutors, Ended};
use crate::bisect::kernels::{BuildOptions, CacheKernels};
use crate::bisect::rule::Settings;
use crate::bisect::state::{BisectSpec, Conclusion};
use crate::error::{usage, Usage};
use crate::proc::signals::Signals;
use crate::progress::Progress;
use crate::report::bisect::BisectView;
use crate::store::Access;
use clap::{Args, Subcommand};

#[derive(Debug, Clone, Args)]
pub struct BisectArgs {
    #[command(subcommand)]
    pub command: BisectCommand,
}

#[derive(Debug, Clone, Subcommand)]
pub enum BisectCommand {
    /// Find the commit between --good and --bad that changed the workload's metric: the
    /// endpoints first (is there a change, how large), then a paired campaign per candidate,
    /// then confirmations of the culprit (against its parent, and reverted).
    #[command(
        mut_arg("tree", |a| a.required(true).help("The git tree of Linux to bisect (never \
            written: kernels are built in the build cache's private worktree)")),
        mut_arg("rounds", |a| a.help("Rounds of the endpoints' campaign (default: 5); each \
            step's rounds are sized by the rule from the endpoints' change and spread")),
        mut_arg("until", |a| a.help("Run the endpoints' campaign until its paired interval is \
            within ±PCT % (as campaign start --until); the steps are sized by the rule")),
        mut_arg("executor", |a| a.help("Where steps run: vm (a QEMU guest per step booting \
            the step's kernels; the default); kexec is not supported by bisect yet")),
    )]
    Start(Box<BisectStart>),
    /// Continue a bisection after Ctrl-C, a crash or a reboot (judged steps are not run again).
    Resume(NameArgs),
    /// Where a bisection stands: its answer so far and its path (all bisections without NAME).
    Status(StatusArgs),
    /// The answer and the whole path: every step's commit, verdict, interval and rounds.
    Report(ReportArgs),
    /// End a bisection after its current campaign step.
    Stop(NameArgs),
}

#[derive(Debug, Clone, Args)]
pub struct BisectStart {
    /// The bisection's name (1-40 letters, digits, '.', '_', '-'); its campaigns are named
    /// NAME.SEQ-ROLE-COMMIT.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The last commit known good (a branch, tag or hash of --tree).
    #[arg(long, value_name = "REF")]
    pub good: String,
    /// The first commit known bad (good must be its ancestor).
    #[arg(long, value_name = "REF")]
    pub bad: String,
    /// The most candidates to test; the bisection then stops with the range left.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub max_steps: Option<u32>,
    /// The first rounds of every step, instead of sizing them by the rule.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub step_rounds: Option<u32>,
    /// The fewest rounds of a step sized by the rule (1 is enough when the change is many
    /// times the spread: the spread is pooled over the bisection).
    #[arg(long, value_name = "N", default_value_t = 2,
          value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub min_step_rounds: u32,
    /// The most rounds of a step: a step still unsure there skips its candidate.
    #[arg(long, value_name = "N", default_value_t = 16,
          value_parser = clap::value_parser!(u32).range(2..=10000))]
    pub max_step_rounds: u32,
    /// What each step runs and where, as `campaign start` takes it (the sides are the
    /// bisection's own: the good endpoint against each candidate).
    #[command(flatten)]
    pub steps: StepArgs,
    /// The measuring command and its arguments, after `--` (as `campaign start` takes it).
    #[arg(last = true, required = true, value_name = "WORKLOAD")]
    pub workload: Vec<String>,
}

#[derive(Debug, Clone, Args)]
pub struct StatusArgs {
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: super::store::TextOrJson,
    #[command(flatten)]
    pub store: StoreArg,
}

/// Formats of `bisect report`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ReportFormat {
    Text,
    Markdown,
    Json,
    Html,
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ReportFormat,
    /// Write the report to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub store: StoreArg,
}

/// Runs `patchbench bisect ...`.
pub fn execute(a: &BisectArgs) -> anyhow::Result<i32> {
    match &a.command {
        BisectCommand::Start(s) => start(s),
        BisectCommand::Resume(r) => resume(r),
        BisectCommand::Status(s) => status(s),
        BisectCommand::Report(r) => report(r),
        BisectCommand::Stop(s) => stop(s),
    }
}

/// Everything checked and read before anything is stored or built: the spec.
fn spec_of(a: &BisectStart) -> anyhow::Result<BisectSpec> {
    crate::campaign::check_name("bisection", &a.name, flow::NAME_MAX)?;
    // The campaigns' template: the bisection's step options, no side of its own.
    let c = &StartArgs {
        name: a.name.clone(),
        sides: Default::default(),
        steps: a.steps.clone(),
        lab: Default::default(),
        kexec: Default::default(),
        workload: a.workload.clone(),
    };
    let Some(tree) = &c.steps.tree else {
        return usage("--tree DIR: a bisection builds every kernel from a git tree");
    };
    if c.steps.build.include_uncommitted {
        return usage(
            "--include-uncommitted: a bisection builds the commits between --good and --bad as \
             committed, never the working tree; commit the change, or give it to campaign start",
        );
    }
    let template = super::campaign::spec(c)?;
    if !crate::campaign::run_by_one_process(&template) {
        return usage(format!(
            "--executor {}: a bisection runs its campaigns in this process, so its steps use \
             the vm executor (a guest per step); kexec bisections are not supported yet",
            template.executor.as_str()
        ));
    }
    crate::campaign::check_host_before_build(&template)?;
    let (good, bad, candidates) = flow::read_history(tree, &a.good, &a.bad)?;
    let tree = tree.canonicalize().unwrap_or_else(|_| tree.clone());
    if a.min_step_rounds > a.max_step_rounds || a.step_rounds.is_some_and(|n| n > a.max_step_rounds)
    {
        return usage(format!(
            "--min-step-rounds and --step-rounds must not exceed --max-step-rounds ({})",
            a.max_step_rounds
        ));
    }
    let settings = Settings {
        max_rounds: a.max_step_rounds,
        fixed_rounds: a.step_rounds,
        min_rounds: a.min_step_rounds,
        ..Settings::default()
    };
    let build = BuildOptions {
        config: c.steps.build.config.clone(),
        fragments: c.steps.build.fragments.clone(),
        jobs: c.steps.build.jobs.map(|j| j as usize),
        cache: c.steps.build.cache.clone(),
    };
    Ok(BisectSpec {
        name: c.name.clone(),
        tree,
        good_ref: a.good.clone(),
        bad_ref: a.bad.clone(),
        good,
        bad,
        candidates,
        endpoint_schedule: template.schedule.clone(),
        template,
        settings,
        max_steps: a.max_steps,
        build: serde_json::to_value(build)?,
    })
}

fn start(a: &BisectStart) -> anyhow::Result<i32> {
    let spec = spec_of(a)?;
    let signals = Signals::install()?;
    // The good endpoint's build checked (a Linux tree at that commit, the config, the
    // fragments, the build tools) before anything is stored: one line, exit status 2.
    let opts: BuildOptions = serde_json::from_value(spec.build.clone())?;
    let mut progress = Progress::new();
    let checked = crate::bisect::kernels::check_good(&spec, &opts, &progress, &signals);
    progress.finish();
    checked?;
    let mut store = a.steps.store.open_for(Access::Create)?;
    flow::create(&mut store, &spec)?;
    crate::safe_text::eprint_line(&format!(
        "patchbench: bisect {}: {} candidates between {} ({}) and {} ({}); a plain bisection \
         needs at most {} steps; in store {}",
        spec.name,
        spec.candidates.len(),
        spec.good.short(),
        crate::safe_text::field(&spec.good_ref),
        spec.bad.short(),
        crate::safe_text::field(&spec.bad_ref),
        crate::bisect::search::Search::plain_steps(spec.candidates.len()),
        store.location()
    ));
    run(store, &spec.name, &signals)
}

fn resume(a: &NameArgs) -> anyhow::Result<i32> {
    let store = a.store.open_for(Access::Write)?;
    let (row, _) = flow::find(&store, &a.name)?;
    if row.state != "running" && row.state != "stopping" {
        crate::safe_text::eprint_line(&format!(
            "patchbench: bisect {} is {}; nothing to resume (`patchbench bisect report {}{}`)",
            row.name,
            row.state,
            row.name,
            store.location().hint()
        ));
        return Ok(0);
    }
    run(store, &a.name, &Signals::install()?)
}

/// Runs the bisection in this process and says how it ended.
fn run(mut store: crate::store::db::Store, name: &str, signals: &Signals) -> anyhow::Result<i32> {
    let mut progress = Progress::new();
    let mut kernels = CacheKernels::new(signals);
    let mut executors = CampaignExecutors;
    let ended = Bisector {
        store: &mut store,
        kernels: &mut kernels,
        executors: &mut executors,
        signals,
        progress: &mut progress,
    }
    .run(name);
    progress.finish();
    let ended = ended?;
    let view = view_of(&store, name)?;
    crate::report::print(&crate::report::bisect::text(&view, false))?;
    match ended {
        Ended::Finished(Conclusion::NoChange) => {
            let inconclusive = view
                .answer
                .as_ref()
                .is_some_and(|a| a.kind == "inconclusive");
            Err(Usage(format!(
                "bisect {name}: the endpoints' campaign {} ({}); nothing to bisect: {}",
                if inconclusive {
                    "is inconclusive"
                } else {
                    "finds no change"
                },
                view.endpoints
                    .map(|e| format!("{} in {} rounds", e.words(), e.rounds))
                    .unwrap_or_default(),
                crate::bisect::rule::nothing_to_bisect(!inconclusive)
            ))
            .into())
        }
        _ => Ok(0),
    }
}

fn view_of(store: &crate::store::db::Store, name: &str) -> anyhow::Result<BisectView> {
    let (row, spec) = flow::find(store, name)?;
    let path = flow::path(store, row.id)?;
    let conclusion = flow::conclusion(&row);
    Ok(BisectView::of(
        &spec,
        &row.state,
        row.state_reason.as_deref(),
        conclusion.as_ref(),
        &path,
        &store.location().hint(),
    ))
}

fn status(a: &StatusArgs) -> anyhow::Result<i32> {
    let store = a.store.open_for(Access::Read)?;
    let names: Vec<String> = match &a.name {
        Some(n) => vec![flow::find(&store, n)?.0.name],
        None => store.bisects()?.into_iter().map(|b| b.name).collect(),
    };
    let views = names
        .iter()
        .map(|n| view_of(&store, n))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let text = match a.format {
        super::store::TextOrJson::Json => serde_json::to_string_pretty(&views)? + "\n",
        super::store::TextOrJson::Text if views.is_empty() => {
            format!("no bisections in store {}\n", store.location())
        }
        super::store::TextOrJson::Text => views
            .iter()
            .map(|v| crate::report::bisect::text(v, a.name.is_some()))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    crate::report::print(&text)?;
    Ok(0)
}

fn report(a: &ReportArgs) -> anyhow::Result<i32> {
    let store = a.store.open_for(Access::Read)?;
    let v = view_of(&store, &a.name)?;
    let text = match a.format {
        ReportFormat::Text => crate::report::bisect::text(&v, true),
        ReportFormat::Markdown => crate::report::bisect::markdown(&v),
        ReportFormat::Json => crate::report::bisect::json(&v)?,
        ReportFormat::Html => crate::report::bisect::html(&v),
    };
    match &a.output {
        Some(p) => {
            crate::record::output_file::write("--output", p, text.as_bytes())?;
            crate::safe_text::eprint_line(&format!(
                "patchbench: bisect {}: report written to {}",
                v.name,
                p.display()
            ));
        }
        None => crate::report::print(&text)?,
    }
    Ok(0)
}

fn stop(a: &NameArgs) -> anyhow::Result<i32> {
    let mut store = a.store.open_for(Access::Write)?;
    let line = match flow::stop(&mut store, &a.name)? {
        flow::StopSaid::AlreadyOver(s) => format!("bisect {} is already {s}", a.name),
        flow::StopSaid::AfterCurrent => {
            format!("bisect {} stops after its current campaign step", a.name)
        }
        flow::StopSaid::Now => format!("bisect {} is stopped", a.name),
    };
    crate::safe_text::eprint_line(&format!("patchbench: {line}"));
    Ok(0)
}
