//! A bisection's flow, from its spec to its answer, resumable at every point: the endpoints'
//! campaign, then one campaign per candidate the search picks, then the confirmations (the
//! culprit against its parent; the bad endpoint against itself with the culprit reverted).
//!
//! Each step of the path is stored before anything is built (state `building`), again when
//! its campaign exists (`running`, naming the campaign), and again when it is judged (`done`,
//! `skipped`, `failed`), each one transaction. So a bisection interrupted anywhere (Ctrl-C,
//! SIGTERM, a crash, a reboot) is continued by [`Bisector::run`] from what the store says: a
//! build found in the cache, a campaign resumed where it stopped, a judged step never run
//! again. The user's git tree is only read (`super::git`); kernels come from [`Kernels`]
//! (the build cache) and executors from [`Executors`] (`crate::campaign::runner_for`), so a
//! test drives the whole flow with scripted ones.

use super::git::{self, Commit};
use super::rule::{self, Endpoints, Spread, Verdict};
use super::search::{Answer, Mark, Next};
use super::state::{
    endpoints_of, search_of, BisectSpec, Conclusion, PathState, PathStep, Role, REVERT_OF,
};
use crate::campaign::executor::Executor;
use crate::campaign::{self, By, End, Runner};
use crate::error::{usage, Interrupted};
use crate::proc::signals::Signals;
use crate::progress::Progress;
use crate::record::campaign::plan;
use crate::record::campaign::spec::{
    CampaignBuild, CampaignSpec, KernelSpec, Schedule, SideBuild, SideSpec,
};
use crate::record::campaign::state::{CampaignState, Owner, StepState};
use crate::store::bisect::{BisectRow, BisectStepRow};
use crate::store::db::Store;
use std::path::{Path, PathBuf};

/// A kernel built for a bisection.
#[derive(Debug, Clone, PartialEq)]
pub struct Built {
    /// The build's id in the cache.
    pub id: String,
    /// What a campaign side boots.
    pub kernel: KernelSpec,
    /// What the side records of its build (commit, config, compiler, patches).
    pub side: Option<SideBuild>,
    /// What a campaign with this kernel as its patched side records of the builds (the tree,
    /// the config both sides were built with, what it changed at this commit).
    pub campaign: Option<CampaignBuild>,
}

/// Builds the kernels of a bisection (the build cache: one config for every commit,
/// incremental between them).
pub trait Kernels {
    /// Builds `commit` of `spec.tree` with `patches` applied (the revert of a confirmation).
    /// `Ok(Err(reason))` when it does not build (the step is skipped with the reason); an
    /// error for what ends the bisection (an interruption, a full disk, a missing tool).
    fn build(
        &mut self,
        spec: &BisectSpec,
        commit: &str,
        patches: &[PathBuf],
        progress: &Progress,
    ) -> anyhow::Result<Result<Built, String>>;
}

/// Makes the executor of a campaign of the bisection.
pub trait Executors {
    fn executor(&mut self, spec: &CampaignSpec) -> anyhow::Result<Box<dyn Executor>>;
}

/// The executors `campaign::runner_for` makes (the vm executor's guests, the local one).
pub struct CampaignExecutors;

impl Executors for CampaignExecutors {
    fn executor(&mut self, spec: &CampaignSpec) -> anyhow::Result<Box<dyn Executor>> {
        match campaign::runner_for(spec, By::Starter)? {
            Runner::Here(e) => Ok(e),
            Runner::StepPerBoot | Runner::Agents => usage(
                "a bisection runs its campaigns in this process (the vm or local executor); \
                 kexec and lab steps are not supported by bisect yet",
            ),
        }
    }
}

/// How a run of a bisection ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ended {
    /// The answer, and the confirmations, are stored.
    Finished(Conclusion),
    /// `bisect stop` (or `campaign stop` of its campaign) ended it.
    Stopped,
}

/// The longest bisection name: its campaigns are named `NAME.SEQ-ROLE-COMMIT`.
pub const NAME_MAX: usize = 40;

/// What `bisect start` reads of the tree: the two endpoints and the candidates between them,
/// each fault one line (a ref that does not exist, good not an ancestor of bad, nothing
/// between them).
pub fn read_history(
    tree: &Path,
    good_ref: &str,
    bad_ref: &str,
) -> anyhow::Result<(Commit, Commit, Vec<Commit>)> {
    git::check_tree(tree)?;
    let good = git::resolve(tree, good_ref, "--good")?;
    let bad = git::resolve(tree, bad_ref, "--bad")?;
    if good == bad {
        return usage(format!(
            "--good {good_ref} and --bad {bad_ref} are the same commit {}: nothing to bisect",
            &good[..12]
        ));
    }
    if !git::is_ancestor(tree, &good, &bad)? {
        return usage(format!(
            "--good {good_ref} ({}) is not an ancestor of --bad {bad_ref} ({}): a bisection \
             looks for the change between a commit and a later one; swap them or pick another",
            &good[..12],
            &bad[..12]
        ));
    }
    let shas = git::first_parent_range(tree, &good, &bad)?;
    if shas.last() != Some(&bad) {
        return Err(anyhow::anyhow!(
            "git rev-list {good}..{bad} does not end at {bad}"
        ));
    }
    let mut all = git::commits(tree, &[good.clone(), bad.clone()])?;
    let candidates = git::commits(tree, &shas)?;
    let bad_commit = all
        .pop()
        .unwrap_or_else(|| candidates[candidates.len() - 1].clone());
    let good_commit = all
        .pop()
        .ok_or_else(|| anyhow::anyhow!("git show named no commit"))?;
    Ok((good_commit, bad_commit, candidates))
}

/// Stores a new bisection (refusing a name already used), owned by this process.
pub fn create(store: &mut Store, spec: &BisectSpec) -> anyhow::Result<i64> {
    crate::campaign::check_name("bisection", &spec.name, NAME_MAX)?;
    let json = serde_json::to_string(spec)?;
    store.create_bisect(&spec.name, &json, &Owner::me().to_string())
}

/// The bisection called `name`, or a one-line error naming those the store has.
pub fn find(store: &Store, name: &str) -> anyhow::Result<(BisectRow, BisectSpec)> {
    let Some(row) = store.bisect(name)? else {
        let known: Vec<String> = store
            .bisects()
            .map(|bs| bs.into_iter().map(|b| b.name).collect())
            .unwrap_or_default();
        return usage(format!(
            "no bisection named {:?} in store {} (bisections there: {})",
            crate::safe_text::field(name),
            store.location(),
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        ));
    };
    let spec: BisectSpec = serde_json::from_str(&row.spec_json)
        .map_err(|e| anyhow::anyhow!("bisection {name}: its stored spec is damaged: {e}"))?;
    Ok((row, spec))
}

/// The path of a bisection, in order.
pub fn path(store: &Store, bisect_id: i64) -> anyhow::Result<Vec<PathStep>> {
    store
        .bisect_steps(bisect_id)?
        .iter()
        .map(|r| {
            serde_json::from_str::<PathStep>(&r.detail_json)
                .map_err(|e| anyhow::anyhow!("step {} of a bisection is damaged: {e}", r.seq))
        })
        .collect()
}

/// The conclusion stored with a bisection, if it has one.
pub fn conclusion(row: &BisectRow) -> Option<Conclusion> {
    row.answer_json
        .as_deref()
        .and_then(|a| serde_json::from_str(a).ok())
}

fn put(store: &mut Store, bisect_id: i64, p: &PathStep) -> anyhow::Result<()> {
    store.put_bisect_step(
        bisect_id,
        &BisectStepRow {
            seq: p.seq,
            role: p.role.as_str().to_string(),
            commit: p.commit.clone(),
            campaign: p.campaign.clone(),
            state: p.state.as_str().to_string(),
            detail_json: serde_json::to_string(p)?,
            updated_at: String::new(),
        },
    )
}

/// What `bisect stop` did.
#[derive(Debug, Clone, PartialEq)]
pub enum StopSaid {
    /// It was over already, in this state.
    AlreadyOver(String),
    /// It stops after the current campaign step (a campaign was running: it is asked to stop).
    AfterCurrent,
    /// It is stopped.
    Now,
}

/// The state shown for a bisection a signal interrupted: `bisect resume` goes on with it.
/// Stored as `running` with no owner and a reason that begins [`INTERRUPTED_BY`] (the
/// store's states are those of schema version 7).
pub const INTERRUPTED: &str = "interrupted";
/// How the stored reason of an interrupted bisection begins.
const INTERRUPTED_BY: &str = "interrupted by ";

/// The state to show for a stored state and reason: [`INTERRUPTED`] for a running
/// bisection that a signal interrupted, else the stored state.
pub fn shown_state<'a>(state: &'a str, reason: Option<&str>) -> &'a str {
    if state == "running" && reason.is_some_and(|r| r.starts_with(INTERRUPTED_BY)) {
        INTERRUPTED
    } else {
        state
    }
}

/// Asks bisection `name` to end: its running campaign stops after its current step, and the
/// bisection with it.
pub fn stop(store: &mut Store, name: &str) -> anyhow::Result<StopSaid> {
    let (row, _) = find(store, name)?;
    if row.state != "running" {
        return Ok(StopSaid::AlreadyOver(row.state));
    }
    let owned = row
        .owner
        .as_deref()
        .and_then(Owner::parse)
        .is_some_and(|o| !o.is_dead_here());
    let running = path(store, row.id)?
        .into_iter()
        .find(|p| p.state == PathState::Running)
        .and_then(|p| p.campaign);
    if let Some(c) = &running {
        if store.campaign(c)?.is_some_and(|c| c.state.is_open()) {
            campaign::stop(store, c)?;
        }
    }
    if owned {
        store.set_bisect_state(row.id, "stopping", Some("stopped by `bisect stop`"), None)?;
        Ok(StopSaid::AfterCurrent)
    } else {
        store.set_bisect_state(row.id, "stopped", Some("stopped by `bisect stop`"), None)?;
        Ok(StopSaid::Now)
    }
}

/// What runs a bisection.
pub struct Bisector<'a> {
    pub store: &'a mut Store,
    pub kernels: &'a mut dyn Kernels,
    pub executors: &'a mut dyn Executors,
    pub signals: &'a Signals,
    pub progress: &'a mut Progress,
}

/// The next thing a bisection does when no step is under way.
enum Plan {
    New(Box<PathStep>),
    Conclude(Conclusion, &'static str, Option<String>),
}

impl Bisector<'_> {
    /// Runs bisection `name` until it has its answer and confirmations, is stopped, or a signal
    /// interrupts it (then the error is [`Interrupted`] and `run` continues it later). A
    /// second live process is refused.
    pub fn run(&mut self, name: &str) -> anyhow::Result<Ended> {
        let (row, _) = find(self.store, name)?;
        let me = Owner::me().to_string();
        if let Some(o) = row.owner.as_deref().filter(|o| *o != me) {
            if Owner::parse(o).is_some_and(|o| !o.is_dead_here()) && row.state == "running" {
                return usage(format!(
                    "bisection {name} is being run by {}; wait for it, or `patchbench bisect \
                     stop {name}`",
                    Owner::describe(o)
                ));
            }
        }
        self.store.set_bisect_owner(row.id, Some(&me))?;
        if shown_state(&row.state, row.state_reason.as_deref()) == INTERRUPTED {
            self.store.set_bisect_state(row.id, "running", None, None)?;
        }
        let ended = self.drive(name);
        // Interrupted, it says so (not "running", which nobody then is) until resumed.
        let interrupted = ended
            .as_ref()
            .err()
            .and_then(|e| e.downcast_ref::<Interrupted>());
        let marked = match interrupted {
            Some(i) => self.store.set_bisect_state(
                row.id,
                "running",
                Some(&format!(
                    "{INTERRUPTED_BY}{}; `patchbench bisect resume {name}` goes on from where \
                     it was",
                    i.name
                )),
                None,
            ),
            None => Ok(()),
        };
        let released = self.store.set_bisect_owner(row.id, None);
        let ended = ended?;
        marked?;
        released?;
        Ok(ended)
    }

    fn drive(&mut self, name: &str) -> anyhow::Result<Ended> {
        loop {
            let (row, spec) = find(self.store, name)?;
            match row.state.as_str() {
                "running" => {}
                "stopping" => {
                    self.store.set_bisect_state(
                        row.id,
                        "stopped",
                        row.state_reason.as_deref(),
                        None,
                    )?;
                    return Ok(Ended::Stopped);
                }
                "stopped" => return Ok(Ended::Stopped),
                "finished" => {
                    return Ok(Ended::Finished(
                        conclusion(&row).unwrap_or(Conclusion::NoChange),
                    ))
                }
                _ => {
                    return usage(format!(
                        "bisection {name} failed: {}",
                        row.state_reason.as_deref().unwrap_or("no reason stored")
                    ))
                }
            }
            self.signals.check()?;
            let path = path(self.store, row.id)?;
            if let Some(current) = path.iter().find(|p| !p.state.is_over()).cloned() {
                if let Some(end) = self.advance(&row, &spec, &path, current)? {
                    return Ok(end);
                }
                continue;
            }
            match self.plan(&spec, &path)? {
                Plan::New(step) => {
                    put(self.store, row.id, &step)?;
                }
                Plan::Conclude(c, state, reason) => {
                    let json = serde_json::to_string(&c)?;
                    self.store
                        .set_bisect_state(row.id, state, reason.as_deref(), Some(&json))?;
                    if state == "stopped" {
                        return Ok(Ended::Stopped);
                    }
                    return Ok(Ended::Finished(c));
                }
            }
        }
    }

    /// What comes after the path so far (no step under way).
    fn plan(&mut self, spec: &BisectSpec, path: &[PathStep]) -> anyhow::Result<Plan> {
        let seq = path.len() as u32 + 1;
        let new = |role: Role, commit: &str, base: &str, index: Option<usize>| {
            Box::new(PathStep {
                seq,
                role,
                commit: commit.to_string(),
                index,
                base: base.to_string(),
                campaign: None,
                state: PathState::Building,
                builds: Vec::new(),
                primary: None,
                endpoints: None,
                judgement: None,
                mark: None,
                reason: None,
                planned_rounds: 0,
                ratios: Vec::new(),
                extended: false,
            })
        };
        let Some(ep) = path.iter().find(|p| p.role == Role::Endpoints) else {
            return Ok(Plan::New(new(
                Role::Endpoints,
                &spec.bad.sha,
                &spec.good.sha,
                None,
            )));
        };
        let Some((_, e)) = endpoints_of(path) else {
            return usage(format!(
                "bisection {}: the endpoints could not be measured: {}",
                spec.name,
                ep.reason.as_deref().unwrap_or("no reason stored")
            ));
        };
        if !e.found() {
            return Ok(Plan::Conclude(
                Conclusion::NoChange,
                "finished",
                Some(format!(
                    "{} between the endpoints: {} [{}, {}], {}",
                    e.says(),
                    pct(e.mean),
                    pct(e.lower),
                    pct(e.upper),
                    e.why_nothing()
                )),
            ));
        }
        let search = search_of(spec, path);
        let answer = match search.next() {
            Next::Test(i) => {
                let tested = path.iter().filter(|p| p.role == Role::Step).count() as u32;
                if let Some(max) = spec.max_steps.filter(|m| tested >= *m) {
                    let (good, bad) = search.bracket();
                    return Ok(Plan::Conclude(
                        Conclusion::Unfinished {
                            first: good.map_or(0, |g| g + 1),
                            last: bad,
                        },
                        "stopped",
                        Some(format!("--max-steps {max} reached")),
                    ));
                }
                let c = &spec.candidates[i];
                return Ok(Plan::New(new(Role::Step, &c.sha, &spec.good.sha, Some(i))));
            }
            Next::Done(answer) => answer,
        };
        let (first, last) = match answer {
            Answer::FirstBad(i) => (i, i),
            Answer::Range { first, last } => (first, last),
        };
        let parent = if first == 0 {
            spec.good.sha.clone()
        } else {
            spec.candidates[first - 1].sha.clone()
        };
        let culprit = spec.candidates[last].sha.clone();
        if !path.iter().any(|p| p.role == Role::Parent) {
            return Ok(Plan::New(new(Role::Parent, &culprit, &parent, Some(last))));
        }
        if first == last && !path.iter().any(|p| p.role == Role::Revert) {
            return Ok(Plan::New(new(
                Role::Revert,
                &spec.bad.sha,
                &format!("{REVERT_OF}{culprit}"),
                Some(last),
            )));
        }
        Ok(Plan::Conclude(Conclusion::Found(answer), "finished", None))
    }

    /// Takes the step under way one stage on: builds its kernels and creates its campaign,
    /// or runs its campaign and judges it. Some(end) when the bisection ended meanwhile.
    fn advance(
        &mut self,
        row: &BisectRow,
        spec: &BisectSpec,
        path: &[PathStep],
        mut p: PathStep,
    ) -> anyhow::Result<Option<Ended>> {
        match p.state {
            PathState::Building => {
                self.build_step(row, spec, path, &mut p)?;
                put(self.store, row.id, &p)?;
                Ok(None)
            }
            PathState::Running => self.run_step(row, spec, path, p),
            _ => Ok(None),
        }
    }

    fn say(&self, spec: &BisectSpec, p: &PathStep, what: &str) {
        self.progress.line(&format!(
            "patchbench: bisect {}: {}: {what}",
            spec.name,
            describe_step(spec, p)
        ));
    }

    /// Builds both kernels of a step and creates its campaign; a kernel that does not build
    /// skips the step (the endpoints': the bisection cannot start).
    fn build_step(
        &mut self,
        row: &BisectRow,
        spec: &BisectSpec,
        path: &[PathStep],
        p: &mut PathStep,
    ) -> anyhow::Result<()> {
        self.say(spec, p, "building its kernels");
        let mut revert_dir = None;
        let (base_commit, base_patches) = match p.base.strip_prefix(REVERT_OF) {
            Some(culprit) => {
                let dir = crate::private_dir::PrivateDir::create(
                    &std::env::temp_dir(),
                    "patchbench-revert-",
                )
                .map_err(|e| anyhow::anyhow!("cannot make a directory for the revert: {e}"))?;
                let file = dir.path().join(format!("revert-{}.diff", &culprit[..12]));
                git::reverse_diff(&spec.tree, culprit, &file)?;
                revert_dir = Some(dir);
                (spec.bad.sha.clone(), vec![file])
            }
            None => (p.base.clone(), Vec::new()),
        };
        let base = self
            .kernels
            .build(spec, &base_commit, &base_patches, self.progress);
        if let Some(dir) = revert_dir {
            let _ = dir.close();
        }
        let base = base?;
        let patched = match &base {
            Ok(_) => self.kernels.build(spec, &p.commit, &[], self.progress)?,
            Err(_) => Err(String::new()),
        };
        let (base, patched) = match (base, patched) {
            (Ok(b), Ok(pt)) => (b, pt),
            (b, pt) => {
                let reason = match (b, pt) {
                    (Err(why), _) => match p.role {
                        Role::Revert => format!(
                            "the bad endpoint with the culprit reverted does not build: {why}"
                        ),
                        Role::Parent => format!("the culprit's parent does not build: {why}"),
                        _ => format!("the good endpoint does not build: {why}"),
                    },
                    (_, Err(why)) => format!("does not build: {why}"),
                    _ => unreachable!("both built"),
                };
                if p.role == Role::Endpoints {
                    p.state = PathState::Failed;
                    p.reason = Some(reason.clone());
                    put(self.store, row.id, p)?;
                    self.store
                        .set_bisect_state(row.id, "failed", Some(&reason), None)?;
                    return usage(format!("bisection {}: {reason}", spec.name));
                }
                self.say(spec, p, &format!("skipped: {reason}"));
                p.state = PathState::Skipped;
                p.mark = (p.role == Role::Step).then(|| Mark::Skipped(reason.clone()));
                p.reason = Some(reason);
                return Ok(());
            }
        };
        p.builds = vec![base.id.clone(), patched.id.clone()];
        p.primary = endpoints_of(path).and_then(|(ep, _)| ep.primary.clone());
        let rounds = match p.role {
            Role::Endpoints => spec.endpoint_schedule.clone(),
            _ => {
                let (_, e) = endpoints_of(path).ok_or_else(|| anyhow::anyhow!("no endpoints"))?;
                Schedule::Rounds {
                    rounds: rule::first_rounds(&e, &pooled(path), &spec.settings),
                }
            }
        };
        p.planned_rounds = rounds.initial_rounds();
        let name = campaign_name(spec, p);
        let mut c = spec.template.clone();
        c.name = name.clone();
        c.schedule = rounds;
        c.seed = spec.template.seed.wrapping_add(u64::from(p.seq));
        c.primary = p.primary.clone().or_else(|| spec.template.primary.clone());
        c.build = patched.campaign.clone();
        c.sides = vec![
            side_of(&spec.template, "base", base),
            side_of(&spec.template, "patched", patched),
        ];
        if self.store.campaign(&name)?.is_none() {
            campaign::create(self.store, &c)?;
        }
        p.campaign = Some(name);
        p.state = PathState::Running;
        Ok(())
    }

    /// Runs a step's campaign to its end, judges it, and records the verdict (or adds rounds
    /// when unsure).
    fn run_step(
        &mut self,
        row: &BisectRow,
        spec: &BisectSpec,
        path: &[PathStep],
        mut p: PathStep,
    ) -> anyhow::Result<Option<Ended>> {
        let name = p
            .campaign
            .clone()
            .ok_or_else(|| anyhow::anyhow!("a running step names no campaign"))?;
        let c = campaign::find(self.store, &name)?;
        match c.state {
            CampaignState::Running | CampaignState::Stopping => {
                self.say(
                    spec,
                    &p,
                    &format!("campaign {name}, {} rounds", c.planned_rounds),
                );
                match self.run_campaign(&name) {
                    Ok(End::Stopped) => return self.stopped_by_campaign(row, &name),
                    Ok(_) => {}
                    Err(e) if e.is::<Interrupted>() || crate::error::is_unreachable(&e) => {
                        return Err(e)
                    }
                    Err(e) => {
                        let reason = format!("its campaign {name} could not run: {}", one_line(&e));
                        self.say(spec, &p, &format!("failed: {reason}"));
                        p.state = PathState::Failed;
                        p.mark = (p.role == Role::Step).then(|| Mark::Skipped(reason.clone()));
                        p.reason = Some(reason.clone());
                        put(self.store, row.id, &p)?;
                        if p.role == Role::Endpoints {
                            self.store
                                .set_bisect_state(row.id, "failed", Some(&reason), None)?;
                            return usage(format!("bisection {}: {reason}", spec.name));
                        }
                        return Ok(None);
                    }
                }
            }
            CampaignState::Stopped => return self.stopped_by_campaign(row, &name),
            CampaignState::Finished | CampaignState::Failed => {}
        }
        self.judge_step(row, spec, path, &mut p)?;
        put(self.store, row.id, &p)?;
        Ok(None)
    }

    fn run_campaign(&mut self, name: &str) -> anyhow::Result<End> {
        let c = campaign::find(self.store, name)?;
        campaign::flow::take_back_dead(self.store, &c, self.progress)?;
        let mut executor = self.executors.executor(&c.spec)?;
        let summary = campaign::run(
            self.store,
            name,
            executor.as_mut(),
            self.signals,
            self.progress,
        )?;
        Ok(summary.end)
    }

    fn stopped_by_campaign(
        &mut self,
        row: &BisectRow,
        name: &str,
    ) -> anyhow::Result<Option<Ended>> {
        let (now, _) = find(self.store, &row.name)?;
        let reason = if now.state == "stopping" {
            now.state_reason
                .unwrap_or_else(|| "stopped by `bisect stop`".into())
        } else {
            format!("its campaign {name} was stopped")
        };
        self.store
            .set_bisect_state(row.id, "stopped", Some(&reason), None)?;
        Ok(Some(Ended::Stopped))
    }

    /// Judges a step whose campaign ended: its verdict, more rounds, or a skip.
    fn judge_step(
        &mut self,
        row: &BisectRow,
        spec: &BisectSpec,
        path: &[PathStep],
        p: &mut PathStep,
    ) -> anyhow::Result<()> {
        let name = p.campaign.clone().unwrap_or_default();
        let c = campaign::find(self.store, &name)?;
        let runs: Vec<_> = self
            .store
            .campaign_runs(c.id)?
            .into_iter()
            .map(|(_, r)| r)
            .collect();
        let key = p
            .primary
            .clone()
            .or_else(|| campaign::primary::primary_key(&c.spec, &runs));
        let x = key
            .as_deref()
            .map(|k| campaign::primary::log_ratios(&runs, k))
            .unwrap_or_default();
        p.primary = key;
        p.ratios = x.clone();
        let why_none = || {
            let steps = self.store.steps(c.id).unwrap_or_default();
            let first = steps
                .iter()
                .filter(|s| s.state == StepState::Failed)
                .find_map(|s| s.error.clone());
            match first {
                Some(e) => format!(
                    "no round of campaign {name} completed: {}",
                    crate::safe_text::field(&e)
                ),
                None => format!("no round of campaign {name} measured the metric followed"),
            }
        };
        if p.role == Role::Endpoints {
            let Some(e) = Endpoints::of(&x, spec.template.confidence) else {
                let reason = if x.is_empty() {
                    why_none()
                } else {
                    format!(
                        "campaign {name} has only {} complete round(s); 2 are needed",
                        x.len()
                    )
                };
                p.state = PathState::Failed;
                p.reason = Some(reason.clone());
                put(self.store, row.id, p)?;
                self.store
                    .set_bisect_state(row.id, "failed", Some(&reason), None)?;
                return usage(format!("bisection {}: the endpoints: {reason}", spec.name));
            };
            if e.found() && !p.extended {
                if let Some(all) =
                    rule::endpoint_rounds(&e, &Spread::default().with(&x), &spec.settings)
                        .filter(|all| *all > c.planned_rounds)
                {
                    self.say(
                        spec,
                        p,
                        &format!(
                            "a change of {} found, measured too loosely to place its midpoint: \
                             {all} rounds in all",
                            pct(e.mean)
                        ),
                    );
                    self.add_rounds(&name, c.planned_rounds, all)?;
                    p.planned_rounds = all;
                    p.extended = true;
                    return Ok(());
                }
            }
            self.say(
                spec,
                p,
                &format!(
                    "{}{} {} [{}, {}] in {} rounds{}",
                    e.says(),
                    if e.found() { "" } else { ":" },
                    pct(e.mean),
                    pct(e.lower),
                    pct(e.upper),
                    e.rounds,
                    if e.found() {
                        String::new()
                    } else {
                        format!(", {}; nothing to bisect", e.why_nothing())
                    }
                ),
            );
            p.endpoints = Some(e);
            p.state = PathState::Done;
            return Ok(());
        }
        let (_, e) = endpoints_of(path).ok_or_else(|| anyhow::anyhow!("no endpoints"))?;
        let before = pooled(path);
        let Some(j) = rule::judge(&x, &e, &before, &spec.settings) else {
            let reason = why_none();
            self.say(spec, p, &format!("skipped: {reason}"));
            p.state = PathState::Skipped;
            p.mark = (p.role == Role::Step).then(|| Mark::Skipped(reason.clone()));
            p.reason = Some(reason);
            return Ok(());
        };
        p.judgement = Some(j);
        if j.verdict == Verdict::Unsure {
            let want = j
                .more
                .unwrap_or(0)
                .max((c.planned_rounds * 2).min(spec.settings.max_rounds));
            if want > c.planned_rounds {
                self.say(
                    spec,
                    p,
                    &format!(
                        "unsure ({} [{}, {}] against the midpoint {}): {want} rounds in all",
                        pct(j.mean),
                        pct(j.lower),
                        pct(j.upper),
                        pct(j.threshold)
                    ),
                );
                self.add_rounds(&name, c.planned_rounds, want)?;
                p.planned_rounds = want;
                return Ok(());
            }
        }
        let words = format!(
            "{} [{}, {}] against the good endpoint, midpoint {}, {} rounds",
            pct(j.mean),
            pct(j.lower),
            pct(j.upper),
            pct(j.threshold),
            j.rounds
        );
        match (p.role, j.verdict) {
            (Role::Step, Verdict::Unsure) => {
                let reason = format!("still unsure at {} rounds: {words}", j.rounds);
                self.say(spec, p, &format!("skipped: {reason}"));
                p.state = PathState::Skipped;
                p.mark = Some(Mark::Skipped(reason.clone()));
                p.reason = Some(reason);
            }
            (Role::Step, v) => {
                self.say(spec, p, &format!("{}: {words}", v.as_str()));
                p.state = PathState::Done;
                p.mark = Some(if v == Verdict::Bad {
                    Mark::Bad
                } else {
                    Mark::Good
                });
            }
            (_, v) => {
                let said = confirmation_words(p.role, v);
                self.say(spec, p, &format!("{said}: {words}"));
                p.state = PathState::Done;
                p.reason = Some(said.to_string());
            }
        }
        Ok(())
    }

    fn add_rounds(&mut self, name: &str, have: u32, all: u32) -> anyhow::Result<()> {
        let c = campaign::find(self.store, name)?;
        let steps = plan::steps(c.spec.order, c.spec.seed, have + 1, all);
        self.store.add_campaign_rounds(c.id, all, &steps)
    }
}

/// What a confirmation's verdict says.
pub fn confirmation_words(role: Role, v: Verdict) -> &'static str {
    match (role, v) {
        (Role::Parent, Verdict::Bad) => {
            "confirmed: the culprit carries the change against its parent"
        }
        (Role::Parent, Verdict::Good) => "not confirmed: the culprit measures like its parent",
        (Role::Parent, Verdict::Unsure) => "partly: the culprit carries part of the change",
        (Role::Revert, Verdict::Bad) => "confirmed: reverting the culprit undoes the change",
        (Role::Revert, Verdict::Good) => "not confirmed: the revert leaves the change",
        (Role::Revert, Verdict::Unsure) => "partly: the revert undoes part of the change",
        _ => "",
    }
}

/// The spread pooled over every judged campaign of the path.
pub fn pooled(path: &[PathStep]) -> Spread {
    let mut s = Spread::default();
    for p in path.iter().filter(|p| p.state.is_over()) {
        s.add(&p.ratios);
    }
    s
}

/// `NAME.SEQ-ROLE-COMMIT` (at most 64 characters: a campaign name).
pub fn campaign_name(spec: &BisectSpec, p: &PathStep) -> String {
    format!(
        "{}.{:02}-{}-{}",
        spec.name,
        p.seq,
        p.role.as_str(),
        &p.commit[..p.commit.len().min(12)]
    )
}

/// One side of a step's campaign: the template's command-line words and setup, this kernel.
fn side_of(template: &CampaignSpec, name: &str, built: Built) -> SideSpec {
    let t = template.side(name);
    SideSpec {
        name: name.to_string(),
        kernel: Some(built.kernel),
        cmdline: t.map(|s| s.cmdline.clone()).unwrap_or_default(),
        setup: t.and_then(|s| s.setup.clone()),
        build: built.side,
    }
}

/// A log ratio as a signed % change.
pub fn pct(log: f64) -> String {
    format!("{:+.2} %", 100.0 * log.exp_m1())
}

fn one_line(e: &anyhow::Error) -> String {
    crate::safe_text::field(&e.to_string())
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

/// `candidate 3/12 1a2b3c4d5e6f "subject"`, `endpoints`, `confirmation against the parent`.
pub fn describe_step(spec: &BisectSpec, p: &PathStep) -> String {
    let commit = |i: usize| {
        let c = &spec.candidates[i];
        format!("{} {:?}", c.short(), crate::safe_text::field(&c.subject))
    };
    match (p.role, p.index) {
        (Role::Endpoints, _) => format!("endpoints {}..{}", spec.good.short(), spec.bad.short()),
        (Role::Step, Some(i)) => format!(
            "step {}: candidate {}/{} {}",
            p.seq - 1,
            i + 1,
            spec.candidates.len(),
            commit(i)
        ),
        (Role::Parent, Some(i)) => format!("confirmation: {} against its parent", commit(i)),
        (Role::Revert, Some(i)) => format!(
            "confirmation: the bad endpoint against {} reverted",
            commit(i)
        ),
        _ => format!("step {}", p.seq),
    }
}
