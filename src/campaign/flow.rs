//! A campaign's flow from its spec to its end, callable from any command or library code:
//! [`runner_for`] is the one place that turns a spec into what runs its steps (an executor in
//! this process, a step per boot for kexec, or the lab's agents); [`create`] plans and stores a
//! campaign; [`run`] drives one in this process until it ends, is stopped or interrupted;
//! [`resume`] checks that a campaign may go on here and goes on; [`stop`] asks one to end;
//! [`find`] names a campaign or says which there are. Commands parse arguments, call these
//! and print what they return.

use super::driver::{Driver, End};
use super::executor::Executor;
use super::kexec::load::Authority;
use crate::error::{usage, Usage};
use crate::proc::signals::Signals;
use crate::progress::Progress;
use crate::record::campaign::plan;
use crate::record::campaign::spec::{CampaignSpec, ExecutorKind};
use crate::record::campaign::state::{Campaign, CampaignState, Owner, StepState};
use crate::store::db::Store;

/// Seconds the claim of a campaign run by one process holds without renewal; renewed every
/// third of it while a step runs, so a second process sees a live owner and is refused,
/// and a process that vanished without a trace on another host loses it after this long.
pub const LEASE_S: f64 = 30.0;

/// What runs a campaign's steps.
pub enum Runner {
    /// This process, with this executor.
    Here(Box<dyn Executor>),
    /// This machine, one step in each boot (kexec): `crate::campaign::kexec` drives it.
    StepPerBoot,
    /// Lab agents on the campaign's boxes (`patchbench agent`); starting it only plans it.
    Agents,
}

/// Who asks for a runner: the process that starts (or resumes) a campaign, or a lab agent
/// about to run one of its steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    Starter,
    Agent,
}

/// The executor kind a campaign gets when `--executor` is not given: a side that boots a
/// kernel (an image or command-line words) needs a guest, else the running kernel serves.
pub fn default_executor(a_side_boots: bool) -> ExecutorKind {
    if a_side_boots {
        ExecutorKind::Vm
    } else {
        ExecutorKind::Local
    }
}

/// What a campaign asks of the executor that runs its steps, as `campaign start` (or a
/// bisection) gathers it from its arguments, for [`supports`] to answer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Asks<'a> {
    /// Kernels built from a git tree, to boot (`--tree`).
    pub built_kernels: bool,
    /// The first side that names a kernel image, command-line words, an initrd or modules.
    pub side_kernel: Option<&'a str>,
    /// Both sides' guests at once (`--duet`).
    pub duet: bool,
    /// Lab agents run the steps (`--boxes`, `--tag`).
    pub agents: bool,
    /// A fresh scratch file system for every step (`--scratch`).
    pub scratch: bool,
    /// The workload keeps perf data files (`--profile-data`).
    pub perf_data_files: bool,
}

/// Whether an executor of `kind` can do what a campaign asks: the one place each executor's
/// abilities are written. `Err` is the line that says why not and what to use instead.
pub fn supports(kind: ExecutorKind, asks: &Asks) -> Result<(), String> {
    match kind {
        ExecutorKind::Local => {
            if asks.built_kernels {
                return Err(
                    "--tree builds kernels to boot: the local executor measures the \
                            running kernel; use --executor vm or kexec"
                        .to_string(),
                );
            }
            if let Some(side) = asks.side_kernel {
                return Err(format!(
                    "the local executor measures the running kernel: the {side} side cannot \
                     have a kernel image, command-line words, an initrd or modules (use \
                     --executor vm or kexec, or a --{side}-setup command)"
                ));
            }
            // SAFETY: geteuid has no preconditions.
            if asks.scratch && unsafe { libc::geteuid() } != 0 {
                return Err(
                    "--scratch with the local executor mounts a loop device: run as root"
                        .to_string(),
                );
            }
        }
        ExecutorKind::Vm => {
            if asks.perf_data_files {
                return Err(
                    "the workload's --profile-data would write inside each vm guest, \
                            whose root is the host's, read-only, and is gone with the guest; \
                            drop --profile-data (--profile's shares are still recorded per \
                            step), or use --executor kexec"
                        .to_string(),
                );
            }
        }
        ExecutorKind::Kexec => {
            if asks.agents {
                return Err(
                    "an agent runs local or vm steps; a kexec campaign runs on the \
                            machine that starts it (`campaign start --executor kexec`, without \
                            --boxes or --tag)"
                        .to_string(),
                );
            }
        }
    }
    if asks.duet && kind != ExecutorKind::Vm {
        return Err("--duet runs two guests at once: it needs --executor vm".to_string());
    }
    Ok(())
}

/// What runs the steps of a campaign of `spec`, for `by` (the one place an executor is
/// chosen). Making an executor checks what it needs (QEMU and the kernels for `vm`), each
/// fault a [`Usage`] error before anything starts.
pub fn runner_for(spec: &CampaignSpec, by: By) -> anyhow::Result<Runner> {
    if spec.lab.is_some() && by == By::Starter {
        return Ok(Runner::Agents);
    }
    Ok(match spec.executor {
        ExecutorKind::Local => Runner::Here(Box::new(super::local::Local::new()?)),
        ExecutorKind::Vm => Runner::Here(Box::new(super::vm::Vm::new(spec)?)),
        ExecutorKind::Kexec if by == By::Agent => {
            let asks = Asks {
                agents: true,
                ..Asks::default()
            };
            supports(spec.executor, &asks).map_err(Usage)?;
            Runner::StepPerBoot
        }
        ExecutorKind::Kexec => Runner::StepPerBoot,
    })
}

/// The executor kinds a lab agent may offer.
pub fn agent_may_offer(kind: ExecutorKind) -> bool {
    matches!(runner_kind(kind), RunnerKind::Here)
}

/// True when a campaign of `spec` is run by one process on this machine (`resume` continues
/// it after an interruption): not by lab agents, not one boot per step.
pub fn run_by_one_process(spec: &CampaignSpec) -> bool {
    spec.lab.is_none() && runner_kind(spec.executor) == RunnerKind::Here
}

#[derive(PartialEq)]
enum RunnerKind {
    Here,
    PerBoot,
}

fn runner_kind(kind: ExecutorKind) -> RunnerKind {
    match kind {
        ExecutorKind::Local | ExecutorKind::Vm => RunnerKind::Here,
        ExecutorKind::Kexec => RunnerKind::PerBoot,
    }
}

/// What the executor needs of this machine (a guest's QEMU, busybox and accelerator; kexec's
/// right to load a kernel), checked before the minutes of a build rather than after
/// (`campaign start --tree`, `bisect start`).
pub fn check_host_before_build(spec: &CampaignSpec) -> anyhow::Result<()> {
    match spec.executor {
        ExecutorKind::Vm => super::vm::checks::check_host(spec).map_err(Usage)?,
        ExecutorKind::Kexec => super::kexec::preflight::may_kexec().map_err(Usage)?,
        ExecutorKind::Local => {}
    }
    Ok(())
}

/// Plans a campaign (its first rounds: every round, or the pilot of `--until`; each box's
/// place for a lab campaign) and stores it; a name already used is refused.
pub fn create(store: &mut Store, spec: &CampaignSpec) -> anyhow::Result<Campaign> {
    let rounds = spec.schedule.initial_rounds();
    let steps = plan::steps(spec.order, spec.seed, 1, rounds);
    let steps = match &spec.lab {
        Some(lab) => plan::for_boxes(&steps, &plan::box_places(lab.boxes)),
        None => steps,
    };
    store.create_campaign(spec, rounds, &steps)?;
    find(store, &spec.name)
}

/// The campaign called `name`, or a [`Usage`] error naming the campaigns the store has.
pub fn find(store: &Store, name: &str) -> anyhow::Result<Campaign> {
    store.campaign(name)?.ok_or_else(|| {
        let known: Vec<String> = store
            .campaigns()
            .map(|cs| cs.into_iter().map(|c| c.name).collect())
            .unwrap_or_default();
        Usage(format!(
            "no campaign named {:?} in store {} (campaigns there: {})",
            crate::safe_text::field(name),
            store.location(),
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        ))
        .into()
    })
}

/// How a run of a campaign in this process ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub end: End,
    /// Steps done and failed in the whole campaign, at the end.
    pub done: usize,
    pub failed: usize,
}

/// Runs campaign `name` in this process with `executor` until it ends, is stopped, or a signal
/// interrupts it (then the error is [`crate::error::Interrupted`] and the step it ran is
/// planned again).
pub fn run(
    store: &mut Store,
    name: &str,
    executor: &mut dyn Executor,
    signals: &Signals,
    progress: &mut Progress,
) -> anyhow::Result<Summary> {
    crate::store::interrupt_when(signals.flag());
    // A step whose run cannot be stored is a step lost: say so before it runs.
    store.check_writable()?;
    let owner = Owner::me().to_string();
    let mut driver = Driver {
        store,
        executor,
        signals,
        progress,
        owner: owner.clone(),
        lease_s: LEASE_S,
        r#box: None,
        spool: None,
    };
    let end = driver.drive(name);
    // Whatever ended the drive, the campaign is free for another process now.
    let released = store.release_holds(&owner);
    let end = end?;
    released?;
    if let End::Held(h) = &end {
        return usage(format!(
            "campaign {name} is being run by {} ({}); wait for it, or `patchbench campaign \
             stop {name}{}`",
            Owner::describe(&h.owner),
            h.what,
            store.location().hint()
        ));
    }
    let campaign = find(store, name)?;
    let steps = store.steps(campaign.id)?;
    let count = |state| steps.iter().filter(|s| s.state == state).count();
    Ok(Summary {
        end,
        done: count(StepState::Done),
        failed: count(StepState::Failed),
    })
}

/// What a resume did.
#[derive(Debug, Clone, PartialEq)]
pub enum Resumed {
    /// The campaign ran here until this end.
    Ran(Summary),
    /// It is over already (finished or stopped); nothing ran.
    AlreadyOver(CampaignState),
    /// A kexec campaign: this boot's step ran or the machine is to reboot into the next one;
    /// the exit status of the boot's work.
    PerBoot(i32),
}

/// Continues campaign `name` in this process: refused (one line) for a lab campaign and while
/// a live process runs it; steps whose owner died (Ctrl-C, SIGKILL, a crash) are planned again,
/// each said on `progress`, then it runs as [`run`] does. A kexec campaign goes on through
/// `crate::campaign::kexec` (it reboots, so `confirm` is asked first).
pub fn resume(
    mut store: Store,
    name: &str,
    signals: &Signals,
    progress: &mut Progress,
    confirm: &mut dyn FnMut(&str) -> anyhow::Result<Authority>,
) -> anyhow::Result<Resumed> {
    let campaign = find(&store, name)?;
    if let Some(lab) = &campaign.spec.lab {
        return usage(format!(
            "campaign {} is run by lab agents on {} box(es) (`patchbench agent --store ...` on \
             each); `campaign status {}` shows where it stands",
            campaign.name, lab.boxes, campaign.name
        ));
    }
    let campaign = if matches!(
        campaign.state,
        CampaignState::Running | CampaignState::Finished
    ) {
        // Steps whose run was removed (`patchbench rm`) are not done any more: they run again.
        let lost = store.replan_lost_runs(campaign.id)?;
        for s in &lost {
            progress.line(&format!(
                "patchbench: campaign {}: round {} {}: its run is gone from the store \
                 (removed?); it runs again",
                campaign.name, s.round, s.side
            ));
        }
        if lost.is_empty() {
            campaign
        } else {
            find(&store, name)?
        }
    } else {
        campaign
    };
    if matches!(
        campaign.state,
        CampaignState::Stopped | CampaignState::Finished
    ) {
        return Ok(Resumed::AlreadyOver(campaign.state));
    }
    if runner_kind(campaign.spec.executor) == RunnerKind::PerBoot {
        return super::kexec::flow::resume(store, campaign, signals, progress, confirm)
            .map(Resumed::PerBoot);
    }
    take_back_dead(&mut store, &campaign, progress)?;
    if let Some(line) = removed_line(&sweep_dead_leftovers(&campaign.spec)) {
        progress.line(&line);
    }
    let Runner::Here(mut executor) = runner_for(&campaign.spec, By::Starter)? else {
        return usage(format!("campaign {name} cannot be run by this process"));
    };
    run(&mut store, name, executor.as_mut(), signals, progress).map(Resumed::Ran)
}

/// Before a campaign goes on in this process: refused (one line) while a live process of
/// this host runs one of its steps; the steps whose owner died (Ctrl-C, SIGKILL, a crash) are
/// planned again, each said on `progress`.
pub fn take_back_dead(
    store: &mut Store,
    campaign: &Campaign,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    // One process runs a campaign at a time: two would measure each other.
    let steps = store.steps(campaign.id)?;
    if let Some(live) = steps.iter().find(|s| {
        s.state == StepState::Running
            && s.owner
                .as_deref()
                .and_then(Owner::parse)
                .is_some_and(|o| o.host == crate::sysinfo::hostname() && !o.is_dead_here())
    }) {
        return usage(format!(
            "campaign {} is being run by {} (round {} {} of campaign {}); wait for it, or \
             `patchbench campaign stop {}{}`",
            campaign.name,
            Owner::describe(live.owner.as_deref().unwrap_or_default()),
            live.round,
            live.side,
            campaign.name,
            campaign.name,
            store.location().hint()
        ));
    }
    let taken = store.reclaim_steps(
        campaign.id,
        &|owner| Owner::parse(owner).is_none_or(|o| o.is_dead_here()),
        false,
    )?;
    for s in &taken {
        progress.line(&format!(
            "patchbench: campaign {}: round {} {} was left unfinished; it runs again",
            campaign.name, s.round, s.side
        ));
    }
    Ok(())
}

/// Removes what patchbench processes gone from this host (a SIGKILL) left of a campaign's
/// steps: their private directories (in the temp dir, and in the workload's `--dir`), and
/// their step cgroups with whatever still ran in them. Only directories patchbench made,
/// whose process is dead; returns what it removed.
pub fn sweep_dead_leftovers(spec: &CampaignSpec) -> Vec<std::path::PathBuf> {
    let mut places = vec![std::env::temp_dir()];
    let own = &spec.workload[..super::executor::own_words(&spec.workload)];
    if let Some(i) = own.iter().position(|w| w == "--dir") {
        if let Some(d) = own.get(i + 1) {
            places.push(std::path::PathBuf::from(d));
        }
    }
    let mut removed: Vec<std::path::PathBuf> = places
        .iter()
        .flat_map(|p| crate::private_dir::sweep_dead(p))
        .collect();
    removed.extend(crate::proc::contain::sweep_dead());
    removed
}

/// The line that says what [`sweep_dead_leftovers`] removed; None when it removed nothing.
pub fn removed_line(removed: &[std::path::PathBuf]) -> Option<String> {
    (!removed.is_empty()).then(|| {
        format!(
            "patchbench: removed what killed patchbench processes left behind: {}",
            removed
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// What `stop` did.
#[derive(Debug, Clone, PartialEq)]
pub enum Stopped {
    /// It was over already, in this state.
    AlreadyOver(CampaignState),
    /// It stops after the step running now (`Stopping`), or is stopped (`Stopped`); with
    /// what dead processes of its steps had left and was removed.
    Now(CampaignState, Vec<std::path::PathBuf>),
    /// A kexec campaign: it stops at its next boot (or once this boot's step is stored) and
    /// returns to this kernel (its image).
    AtNextBoot(String),
}

/// Asks campaign `name` to end: after its current step, or now when no step runs.
pub fn stop(store: &mut Store, name: &str) -> anyhow::Result<Stopped> {
    let c = find(store, name)?;
    if !c.state.is_open() {
        return Ok(Stopped::AlreadyOver(c.state));
    }
    // A step whose process died on this host (a SIGKILL, a crash) runs nowhere: it is
    // planned again, so the campaign stops now, and what the dead process left is removed.
    // Not a lab campaign's: a restarted agent may still push the run it spooled for its step,
    // which its lease keeps for it.
    let mut removed = Vec::new();
    if run_by_one_process(&c.spec) {
        for s in store.steps(c.id)? {
            let Some(owner) = s.owner.as_deref() else {
                continue;
            };
            let dead = Owner::parse(owner).is_some_and(|o| o.is_dead_here());
            if s.state == StepState::Running && dead {
                store.release_step(s.id, owner)?;
            }
        }
        removed = sweep_dead_leftovers(&c.spec);
    }
    let steps = store.steps(c.id)?;
    let running = steps.iter().any(|s| s.state == StepState::Running);
    let state = if running {
        CampaignState::Stopping
    } else {
        CampaignState::Stopped
    };
    store.set_campaign_state(c.id, state, Some("stopped by `campaign stop`"))?;
    if runner_kind(c.spec.executor) == RunnerKind::PerBoot {
        return Ok(Stopped::AtNextBoot(
            c.spec
                .kexec
                .as_ref()
                .map_or("the kernel it started from".to_string(), |k| {
                    k.return_to.image.display().to_string()
                }),
        ));
    }
    Ok(Stopped::Now(state, removed))
}
