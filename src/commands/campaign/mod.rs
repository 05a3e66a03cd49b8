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

pub use args::*;
pub use spec::spec;

mod args;
mod build;
mod kexec;
mod spec;
use crate::campaign::executor::Executor;
use crate::campaign::{self, By, End, Resumed, Runner, Stopped, Summary};
use crate::error::usage;
use crate::progress::Progress;
use crate::record::campaign::spec::{CampaignSpec, LabSpec, Order, Schedule};
use crate::record::campaign::state::{CampaignState, StepState};
use crate::record::RunRecord;
use crate::store::db::Store;
use crate::store::{Access, Location};

/// Runs `patchbench campaign ...`.
pub fn execute(a: &CampaignArgs) -> anyhow::Result<i32> {
    match &a.command {
        CampaignCommand::Start(s) => start(s),
        CampaignCommand::Resume(r) => resume(r),
        CampaignCommand::Status(s) => status(s),
        CampaignCommand::Report(r) => report(r),
        CampaignCommand::Stop(s) => stop(s),
        CampaignCommand::InstallHook(h) => kexec::install_hook(&h.store),
        CampaignCommand::RemoveHook => kexec::remove_hook(),
        CampaignCommand::ReleaseBox(r) => release_box(r),
    }
}

fn start(a: &StartArgs) -> anyhow::Result<i32> {
    let mut spec = spec(a)?;
    if a.steps.tree.is_some() {
        // What the executor needs of this machine first: a missing QEMU is said before the
        // minutes of a build, not after.
        campaign::check_host_before_build(&spec)?;
        if let Some(name_taken) = existing_campaign(a, &spec.name)? {
            return usage(name_taken);
        }
        build::build_sides(a, &mut spec)?;
    }
    let mut executor = match campaign::runner_for(&spec, By::Starter)? {
        Runner::Here(e) => e,
        Runner::StepPerBoot => return kexec::start(a, spec),
        Runner::Agents => return plan_for_lab(a, &spec),
    };
    let mut store = a.steps.store.open_for(Access::Create)?;
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
    let Ok(store) = a.steps.store.open(false) else {
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
    let mut store = a.steps.store.open_for(Access::Create)?;
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
        return kexec::at_boot(&a.store);
    };
    let store = a.store.open_for(Access::Read)?;
    let location = store.location().clone();
    let signals = crate::proc::signals::Signals::install()?;
    let mut progress = Progress::new();
    let yes = a.yes;
    let resumed = campaign::resume(store, name, &signals, &mut progress, &mut |what| {
        kexec::confirm(yes, what)
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
    // Each run as a comparison keeps it (its monitors' values are its metrics).
    let runs: Vec<(i64, RunRecord)> = store
        .campaign_runs(c.id)?
        .into_iter()
        .map(|(id, r)| (id, crate::compare::lean(r)))
        .collect();
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
        details: true,
        why_rows: a.why.0,
    };
    let comparison = crate::compare::compare(&base, &patched, &settings)?;
    drop((base, patched));
    let records: Vec<RunRecord> = runs.into_iter().map(|(_, r)| r).collect();
    let view = crate::report::campaign::StatusView::of(c, steps, &records, store.location().hint());
    let text = crate::report::campaign::report_text(&view, &comparison)?;
    crate::report::print(&text)?;
    Ok(0)
}

fn stop(a: &crate::commands::shared::NameArgs) -> anyhow::Result<i32> {
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
