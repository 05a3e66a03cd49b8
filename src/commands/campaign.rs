//! `patchbench campaign`: base and patched kernels (or settings) measured in alternation,
//! round after round, until the schedule is done; the state lives in the store.
//!
//! - `start NAME [sides] [schedule] [executor] -- WORKLOAD...`: checks everything (sides'
//!   images, the workload, the executor's needs) before anything is stored or started, stores
//!   the campaign with its first rounds, then runs it in the foreground.
//! - `resume NAME`: takes back steps whose owner died (Ctrl-C, SIGKILL, a crash) and goes on.
//! - `status [NAME]`: progress, ETA, the primary metric's paired interval so far.
//! - `report NAME`: the comparison of the two sides, the rounds, drift, and the failed steps.
//! - `stop NAME`: ends it after the current step.
//! - `resume --boot`: a kexec campaign's part of this boot (the boot hook runs it);
//!   `install-hook` / `remove-hook` write and remove the systemd unit that does.
//!
//! A kexec campaign reboots this machine: `start` checks everything first (each fault one
//! line, exit 2, nothing changed), then asks on a terminal or wants `--yes`.

use super::campaign_spec::{parse_scratch, parse_span, spec};
use super::shared::StoreArg;
use crate::campaign::executor::Executor;
use crate::campaign::{self, By, End, Resumed, Runner, Stopped, Summary};
use crate::error::usage;
use crate::progress::Progress;
use crate::record::campaign::spec::{
    CampaignSpec, ExecutorKind, LabSpec, Order, Schedule, Scratch,
};
use crate::record::campaign::state::{CampaignState, StepState};
use crate::store::db::Store;
use crate::store::{Access, Location};
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct CampaignArgs {
    #[command(subcommand)]
    pub command: CampaignCommand,
}

#[derive(Debug, Clone, Subcommand)]
pub enum CampaignCommand {
    /// Plan a campaign and run it: every round runs each side once, in random (or ABBA) order.
    Start(Box<StartArgs>),
    /// Continue a campaign after Ctrl-C, a crash or a reboot (re-runs only unfinished steps).
    Resume(ResumeArgs),
    /// Progress, ETA and the primary metric's interval so far (all campaigns without NAME).
    Status(StatusArgs),
    /// The comparison of the two sides (paired by round), the rounds, drift and failures.
    Report(ReportArgs),
    /// End a campaign after its current step (a kexec campaign: at its next boot, which
    /// returns to the kernel it started from).
    Stop(StopArgs),
    /// Write and enable the systemd unit that runs `campaign resume --boot` once per boot
    /// (kexec campaigns).
    InstallHook(HookArgs),
    /// Disable and remove the unit of install-hook.
    RemoveHook,
    /// A lab campaign: free the place of a box that is gone for good; its rounds not begun go
    /// to a free place another box takes, a round it left half done is recorded as failed.
    ReleaseBox(ReleaseBoxArgs),
}

/// Options of one side.
#[derive(Debug, Clone, Args, Default)]
pub struct SideArgs {
    /// Kernel image and extra command-line words of the base side: IMAGE[:WORDS], or :WORDS for
    /// the running kernel's image (e.g. --base /boot/IMAGE:"pti=on"). With
    /// --tree: the git ref to build, REF[:WORDS] (e.g. --base v6.1).
    #[arg(long, value_name = "IMAGE[:WORDS]", allow_hyphen_values = true)]
    pub base: Option<String>,
    /// Kernel image and extra command-line words of the patched side (as --base). With --tree:
    /// REF[:WORDS] (default: the base side's ref).
    #[arg(long, value_name = "IMAGE[:WORDS]", allow_hyphen_values = true)]
    pub patched: Option<String>,
    /// With --tree: a patch applied on the base side's ref (mbox, series with cover letter,
    /// or diff); repeatable, in order.
    #[arg(long = "base-patch", value_name = "FILE", requires = "tree")]
    pub base_patches: Vec<PathBuf>,
    /// With --tree: a patch applied on the patched side's ref; repeatable, in order.
    #[arg(long = "patched-patch", value_name = "FILE", requires = "tree")]
    pub patched_patches: Vec<PathBuf>,
    /// Initrd to boot the base image with.
    #[arg(long, value_name = "FILE")]
    pub base_initrd: Option<PathBuf>,
    /// Initrd to boot the patched image with.
    #[arg(long, value_name = "FILE")]
    pub patched_initrd: Option<PathBuf>,
    /// The base image's modules (default: lib/modules/<release> beside its boot/).
    #[arg(long, value_name = "DIR")]
    pub base_modules: Option<PathBuf>,
    /// The patched image's modules (default: lib/modules/<release> beside its boot/).
    #[arg(long, value_name = "DIR")]
    pub patched_modules: Option<PathBuf>,
    /// Shell command run before each base step, in the shell that then execs the workload
    /// (`echo $$ > /sys/fs/cgroup/.../cgroup.procs` puts the workload in a cgroup).
    #[arg(long, value_name = "CMD")]
    pub base_setup: Option<String>,
    /// Shell command run before each patched step (as --base-setup).
    #[arg(long, value_name = "CMD")]
    pub patched_setup: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct StartArgs {
    /// The campaign's name; its runs are stored under the labels NAME/base and NAME/patched.
    #[arg(value_name = "NAME")]
    pub name: String,
    #[command(flatten)]
    pub sides: SideArgs,
    /// Build both sides' kernels from this git tree (never written): --base and --patched
    /// are refs, --base-patch and --patched-patch their patches; the config is resolved once,
    /// on the base side, and the patched side is built with it (docs/build.md).
    #[arg(long, value_name = "DIR")]
    pub tree: Option<PathBuf>,
    #[command(flatten)]
    pub build: super::build::BuildOpts,
    /// Rounds to run (each runs both sides once). Default: 5, unless --until is given.
    #[arg(long, value_name = "N", conflicts_with = "until",
          value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub rounds: Option<u32>,
    /// Run until the primary metric's paired interval is within ±PCT %: a pilot (3 rounds, or
    /// as many as fit in 2 minutes for short rounds, at most 30), then as many rounds as
    /// Stein's two-stage rule needs (decided once, from the pilot's spread, never from its
    /// difference), capped by --max-rounds and --max-time.
    #[arg(long, value_name = "PCT", value_parser = crate::args::parse_until)]
    pub until: Option<f64>,
    /// With --until: the most rounds.
    #[arg(long, value_name = "N", default_value_t = 30, requires = "until",
          value_parser = clap::value_parser!(u32).range(3..=10000))]
    pub max_rounds: u32,
    /// With --until: the most time for the whole campaign (e.g. 3600, 90m, 8h).
    #[arg(long, value_name = "D", requires = "until", value_parser = parse_span)]
    pub max_time: Option<f64>,
    /// Order of the sides in a round: random (a coin from the seed for each pair of rounds, the
    /// pair's second round the other way round) or abba.
    #[arg(long, value_enum, default_value = "random")]
    pub order: Order,
    /// Seed of the random order (default: a new one, recorded).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Where steps run: local (this kernel; sides differ by setup commands), vm (a QEMU guest
    /// per step booting the side's kernel), kexec (this machine, rebooted into each kernel).
    /// Default: vm when a side names a kernel or command-line words, else local.
    #[arg(long, value_enum)]
    pub executor: Option<ExecutorKind>,
    /// Run both sides' guests at once on disjoint CPU sets, each measured pass started together
    /// (vm only).
    #[arg(long)]
    pub duet: bool,
    /// A lab campaign: agents (`patchbench agent`) on N boxes run it, each box every round and
    /// both sides (a box is a block of the analysis); `start` only plans it. The store must be
    /// one the boxes share (--store postgres://...).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub boxes: Option<u32>,
    /// A lab campaign: only boxes whose agent has this tag run it (repeat for several: every
    /// one is needed). Without --boxes, one box.
    #[arg(long = "tag", value_name = "TAG", value_parser = crate::args::parse_tag)]
    pub tags: Vec<String>,
    /// A fresh file system for every step, given to the workload as its --dir: FS:SIZE, e.g.
    /// ext4:1G (a RAM disk in a guest, a loop device with local).
    #[arg(long, value_name = "FS:SIZE", value_parser = parse_scratch)]
    pub scratch: Option<Scratch>,
    /// vCPUs of each guest (vm). Default: 2, or 1 on a machine with fewer than 4 CPUs.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=512))]
    pub vcpus: Option<u32>,
    /// Memory of each guest in MiB (vm).
    #[arg(long, value_name = "MIB", default_value_t = 2048,
          value_parser = clap::value_parser!(u64).range(256..=1048576))]
    pub memory: u64,
    /// Host CPUs every QEMU thread is bound to (vm), e.g. 2-5 (default: the last vCPUs' worth
    /// of CPUs this process may use; a duet splits them).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Allow TCG (software emulation) when KVM is not usable: its numbers time the emulator,
    /// not the kernel; for testing the campaign only.
    #[arg(long)]
    pub allow_tcg: bool,
    /// The QEMU program (vm).
    #[arg(long, value_name = "PATH", default_value = "qemu-system-x86_64")]
    pub qemu: PathBuf,
    /// Seconds a step may take before it is stopped and counted as failed.
    #[arg(long, value_name = "SECS", default_value = "3600", value_parser = crate::args::parse_duration)]
    pub step_timeout: f64,
    /// kexec: the kernel image the last boot returns to (default: the running kernel's image
    /// in /boot).
    #[arg(long, value_name = "IMAGE")]
    pub return_to: Option<PathBuf>,
    /// kexec: the initrd of the kernel returned to (default: initrd.img-RELEASE beside it;
    /// `none` for none).
    #[arg(long, value_name = "FILE")]
    pub return_initrd: Option<PathBuf>,
    /// kexec: start without asking (the machine reboots into the first step's kernel).
    #[arg(long)]
    pub yes: bool,
    /// kexec: seconds between the start and the first reboot (Ctrl-C cancels meanwhile).
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = crate::args::parse_duration_or_zero)]
    pub reboot_in: f64,
    /// Seconds to wait before each step's workload (kexec: after the boot).
    #[arg(long, value_name = "SECS", default_value = "0", value_parser = crate::args::parse_duration_or_zero)]
    pub settle: f64,
    /// The metric the schedule and status follow, as a metric key (e.g.
    /// 'unixbench.score[copies=1,test=pipe]'); default: the workload's headline (the System
    /// Benchmarks Index at the fewest copies, AIM7 jobs/min at the highest load, ...).
    #[arg(long, value_name = "KEY")]
    pub primary: Option<String>,
    /// Two-sided confidence of the interval --until aims at and status shows.
    #[arg(long, value_name = "C", default_value = "0.95", value_parser = crate::args::parse_fraction)]
    pub confidence: f64,
    #[command(flatten)]
    pub store: StoreArg,
    /// The measuring command and its arguments, after `--`: run ..., aim7 ..., scale ...,
    /// model ... (without --json, --store, --label: the campaign stores each step itself).
    #[arg(last = true, required = true, value_name = "WORKLOAD")]
    pub workload: Vec<String>,
}

#[derive(Debug, Clone, Args)]
pub struct ResumeArgs {
    /// The campaign (not with --boot).
    #[arg(
        value_name = "NAME",
        required_unless_present = "boot",
        conflicts_with = "boot"
    )]
    pub name: Option<String>,
    /// Do this boot's part of the kexec campaign whose step it is (what the boot hook runs;
    /// quiet when there is none).
    #[arg(long)]
    pub boot: bool,
    /// kexec: continue without asking (it reboots into the next step's kernel).
    #[arg(long)]
    pub yes: bool,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Args)]
pub struct HookArgs {
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Args)]
pub struct StatusArgs {
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: StatusFormat,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum StatusFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Noise band of the verdicts, as in `compare`.
    #[arg(long, value_name = "PCT", default_value = "1", value_parser = crate::args::parse_pct)]
    pub noise: f64,
    /// Rows of the second table, "what changed with it" (the monitor rows that changed,
    /// largest change first, each with its interval and a q-value over the monitor rows
    /// alone): a number, or `all`.
    #[arg(long, value_name = "N|all", default_value = "20", value_parser = crate::args::parse_why)]
    pub why: crate::args::WhyRows,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Args)]
pub struct StopArgs {
    #[arg(value_name = "NAME")]
    pub name: String,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Args)]
pub struct ReleaseBoxArgs {
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The box (as `campaign status` names it).
    #[arg(value_name = "BOX", value_parser = crate::args::parse_tag)]
    pub r#box: String,
    #[command(flatten)]
    pub store: StoreArg,
}

/// Runs `patchbench campaign ...`.
pub fn execute(a: &CampaignArgs) -> anyhow::Result<i32> {
    match &a.command {
        CampaignCommand::Start(s) => start(s),
        CampaignCommand::Resume(r) => resume(r),
        CampaignCommand::Status(s) => status(s),
        CampaignCommand::Report(r) => report(r),
        CampaignCommand::Stop(s) => stop(s),
        CampaignCommand::InstallHook(h) => super::campaign_kexec::install_hook(&h.store),
        CampaignCommand::RemoveHook => super::campaign_kexec::remove_hook(),
        CampaignCommand::ReleaseBox(r) => release_box(r),
    }
}

fn start(a: &StartArgs) -> anyhow::Result<i32> {
    let mut spec = spec(a)?;
    if a.tree.is_some() {
        // What the executor needs of this machine first: a missing QEMU is said before the
        // minutes of a build, not after.
        campaign::check_host_before_build(&spec)?;
        if let Some(name_taken) = existing_campaign(a, &spec.name)? {
            return usage(name_taken);
        }
        super::campaign_build::build_sides(a, &mut spec)?;
    }
    let mut executor = match campaign::runner_for(&spec, By::Starter)? {
        Runner::Here(e) => e,
        Runner::StepPerBoot => return super::campaign_kexec::start(a, spec),
        Runner::Agents => return plan_for_lab(a, &spec),
    };
    let mut store = a.store.open_for(Access::Create)?;
    let c = campaign::create(&mut store, &spec)?;
    crate::safe_text::eprint_line(&format!(
        "patchbench: campaign {} planned: {} of 2 steps ({} executor, {} order, seed {}) \
         in store {}",
        c.name,
        schedule_words(&spec.schedule),
        spec.executor.as_str(),
        match spec.order {
            Order::Random => "random",
            Order::Abba => "ABBA",
        },
        spec.seed,
        store.location()
    ));
    run_here(store, &c.name, executor.as_mut())
}

/// The message for a campaign name already in the store (checked before a build).
fn existing_campaign(a: &StartArgs, name: &str) -> anyhow::Result<Option<String>> {
    let Ok(store) = a.store.open(false) else {
        return Ok(None);
    };
    Ok(store.campaign(name)?.map(|_| {
        format!(
            "a campaign named {name:?} already exists in store {}; choose another name",
            store.location()
        )
    }))
}

/// `5 rounds`, or `a pilot of 3 or more rounds, then up to 30 rounds for ±2 %,` (for a start
/// line).
fn schedule_words(schedule: &Schedule) -> String {
    match schedule {
        Schedule::Rounds { rounds } => format!("{rounds} rounds"),
        Schedule::Until {
            pct, max_rounds, ..
        } => format!("a pilot of 3 or more rounds, then up to {max_rounds} rounds for ±{pct} %,"),
    }
}

/// Plans a lab campaign: every round for each of its boxes' places, which the first agents
/// of matching boxes take; nothing runs here.
fn plan_for_lab(a: &StartArgs, spec: &CampaignSpec) -> anyhow::Result<i32> {
    let mut store = a.store.open_for(Access::Create)?;
    let c = campaign::create(&mut store, spec)?;
    let lab = c.spec.lab.clone().unwrap_or(LabSpec {
        boxes: 1,
        tags: Vec::new(),
    });
    let tags = if lab.tags.is_empty() {
        String::new()
    } else {
        format!(" tagged {}", lab.tags.join(", "))
    };
    crate::safe_text::eprint_line(&format!(
        "patchbench: campaign {} planned for {} box{}{tags}: {} of 2 steps on each ({} \
         executor, seed {}) in store {}; agents run it: `patchbench agent --store {}{}` on each \
         box; `patchbench campaign status {}{}` follows it",
        c.name,
        lab.boxes,
        if lab.boxes == 1 { "" } else { "es" },
        schedule_words(&spec.schedule),
        spec.executor.as_str(),
        spec.seed,
        store.location(),
        store.location().as_arg(),
        lab.tags
            .iter()
            .map(|t| format!(" --tag {t}"))
            .collect::<String>(),
        c.name,
        store.location().hint(),
    ));
    Ok(0)
}

fn resume(a: &ResumeArgs) -> anyhow::Result<i32> {
    let Some(name) = a.name.as_deref().filter(|_| !a.boot) else {
        return super::campaign_kexec::at_boot(&a.store);
    };
    let store = a.store.open_for(Access::Read)?;
    let location = store.location().clone();
    let signals = crate::proc::signals::Signals::install()?;
    let mut progress = Progress::new();
    let yes = a.yes;
    let resumed = campaign::resume(store, name, &signals, &mut progress, &mut |what| {
        super::campaign_kexec::confirm(yes, what)
    });
    progress.finish();
    match resumed? {
        Resumed::Ran(summary) => Ok(said(name, &summary, &location)),
        Resumed::AlreadyOver(state) => {
            crate::safe_text::eprint_line(&format!(
                "patchbench: campaign {name} is {}; nothing to resume",
                state.as_str()
            ));
            Ok(0)
        }
        Resumed::PerBoot(code) => Ok(code),
    }
}

/// Runs a campaign in this process and says how it ended.
fn run_here(mut store: Store, name: &str, executor: &mut dyn Executor) -> anyhow::Result<i32> {
    let signals = crate::proc::signals::Signals::install()?;
    let mut progress = Progress::new();
    let summary = campaign::run(&mut store, name, executor, &signals, &mut progress);
    progress.finish();
    Ok(said(name, &summary?, store.location()))
}

/// The line that says how a run of a campaign ended; its exit status: 1 when it finished
/// with every step failed, else 0.
fn said(name: &str, summary: &Summary, location: &Location) -> i32 {
    let word = match summary.end {
        End::Finished => "finished",
        End::Stopped => "stopped",
        End::Idle | End::Held(_) => "has no step left for this process",
    };
    crate::safe_text::eprint_line(&format!(
        "patchbench: campaign {name} {word}: {} steps done, {} failed; \
         `patchbench campaign report {name}{}` compares the sides",
        summary.done,
        summary.failed,
        location.hint()
    ));
    // Nothing measured at all: a script that reads the exit status must not read success.
    if matches!(summary.end, End::Finished) && summary.done == 0 && summary.failed > 0 {
        crate::safe_text::eprint_line(&format!(
            "patchbench: error: campaign {name}: every step failed ({}); their errors and \
             console tails: `patchbench campaign status {name}{}`",
            summary.failed,
            location.hint()
        ));
        return 1;
    }
    0
}

fn status(a: &StatusArgs) -> anyhow::Result<i32> {
    let store = a.store.open_for(Access::Read)?;
    let campaigns = match &a.name {
        Some(n) => vec![campaign::find(&store, n)?],
        None => store.campaigns()?,
    };
    let mut views = Vec::new();
    for c in campaigns {
        let steps = store.steps(c.id)?;
        let runs: Vec<_> = store
            .campaign_runs(c.id)?
            .into_iter()
            .map(|(_, r)| r)
            .collect();
        views.push(crate::report::campaign::StatusView::of(
            c,
            steps,
            &runs,
            store.location().hint(),
        ));
    }
    let text = match a.format {
        StatusFormat::Text => crate::report::campaign::status_text(&views),
        StatusFormat::Json => crate::report::campaign::status_json(&views)?,
    };
    crate::report::print(&text)?;
    Ok(0)
}

fn report(a: &ReportArgs) -> anyhow::Result<i32> {
    let store = a.store.open_for(Access::Read)?;
    let c = campaign::find(&store, &a.name)?;
    let steps = store.steps(c.id)?;
    let runs = store.campaign_runs(c.id)?;
    let side = |name: &str| {
        crate::compare::Side::new(
            format!("{}/{name}", c.name),
            runs.iter()
                .filter(|(_, r)| r.campaign.as_ref().is_some_and(|s| s.side == name))
                .map(|(id, r)| (id.to_string(), r.clone()))
                .collect(),
        )
    };
    let (base, patched) = (side("base"), side("patched"));
    if base.runs.is_empty() || patched.runs.is_empty() {
        let lost = steps
            .iter()
            .filter(|s| s.state == StepState::Done)
            .filter(|s| {
                !runs
                    .iter()
                    .any(|(_, r)| r.uuid.is_some() && r.uuid == s.run_uuid)
            })
            .count();
        let why = if lost > 0 {
            format!(
                " ({lost} done step(s) lost their runs, removed from the store: `patchbench \
                 campaign resume {}{}` runs them again)",
                c.name,
                store.location().hint()
            )
        } else {
            String::new()
        };
        return usage(format!(
            "campaign {} has no stored run of {}{why}; `patchbench campaign status {}` shows \
             where it is",
            c.name,
            if base.runs.is_empty() {
                "the base side"
            } else {
                "the patched side"
            },
            c.name
        ));
    }
    let settings = crate::compare::verdict::Settings {
        rule: crate::compare::verdict::Rule::Welch,
        confidence: c.spec.confidence,
        noise_pct: a.noise,
        plan_pct: vec![1.0, 2.0],
        sensitivity: true,
        why_rows: a.why.0,
    };
    let comparison = crate::compare::compare(&base, &patched, &settings)?;
    let records: Vec<_> = runs.iter().map(|(_, r)| r.clone()).collect();
    let view = crate::report::campaign::StatusView::of(c, steps, &records, store.location().hint());
    let text = crate::report::campaign::report_text(&view, &comparison)?;
    crate::report::print(&text)?;
    Ok(0)
}

fn stop(a: &StopArgs) -> anyhow::Result<i32> {
    let mut store = a.store.open_for(Access::Read)?;
    let line = match campaign::stop(&mut store, &a.name)? {
        Stopped::AlreadyOver(state) => {
            format!("campaign {} is already {}", a.name, state.as_str())
        }
        Stopped::AtNextBoot(home) => format!(
            "campaign {} stops at its next boot (or once this boot's step is stored) and \
             returns to {home}",
            a.name
        ),
        Stopped::Now(state, removed) => {
            if let Some(line) = crate::campaign::flow::removed_line(&removed) {
                crate::safe_text::eprint_line(&line);
            }
            format!(
                "campaign {} {}; `patchbench campaign report {}{}` compares what it has",
                a.name,
                if state == CampaignState::Stopping {
                    "will stop after its current step"
                } else {
                    "is stopped"
                },
                a.name,
                store.location().hint()
            )
        }
    };
    crate::safe_text::eprint_line(&format!("patchbench: {line}"));
    Ok(0)
}

/// Frees a lost box's place in a lab campaign.
fn release_box(a: &ReleaseBoxArgs) -> anyhow::Result<i32> {
    let mut store = a.store.open_for(Access::Write)?;
    let c = campaign::find(&store, &a.name)?;
    if c.spec.lab.is_none() {
        return usage(format!(
            "campaign {} is not a lab campaign (started without --boxes/--tag): it has no box \
             places",
            c.name
        ));
    }
    let released = store.release_place(c.id, &a.r#box)?;
    crate::safe_text::eprint_line(&format!(
        "patchbench: campaign {}: box {} released; {} round(s) it had not begun go to place {} \
         (the next agent of a box without a place takes it){}",
        c.name,
        a.r#box,
        released.rounds_moved,
        released.place,
        if released.steps_failed > 0 {
            format!(
                "; {} step(s) of rounds it left half done are recorded as failed",
                released.steps_failed
            )
        } else {
            String::new()
        }
    ));
    Ok(0)
}
