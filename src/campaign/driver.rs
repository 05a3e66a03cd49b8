//! The campaign loop: claim the next planned step, run it with the executor, check it ran
//! under the kernel and command line its side asked for, store its run together with the
//! step's `done` (or record the failure: one retry, then failed, the campaign goes on), and
//! repeat until nothing is planned. After the pilot of `--until` it decides, once, how many
//! rounds to add. It stops after the current step when `campaign stop` was asked, and on
//! SIGINT/SIGTERM it stops the step at once and hands it back (planned again), so `resume`
//! re-runs only that step.

use super::executor::{check_kernel, Executor, Measured, StepOutcome, StepRequest};
use super::primary;
use crate::error::Usage;
use crate::proc::signals::Signals;
use crate::progress::Progress;
use crate::record::campaign::plan;
use crate::record::campaign::spec::Schedule;
use crate::record::campaign::state::{Campaign, CampaignState, Owner, Step, StepState};
use crate::record::campaign::StepInfo;
use crate::store::campaign::{AfterFailure, Claim, Claimer, Holder};

/// The most characters of a step's console line shown (escaped by `crate::safe_text`).
const CONSOLE_LINE_CHARS: usize = 100;
use crate::store::db::Store;
use crate::store::spool::Spool;

/// How a drive ended.
#[derive(Debug, Clone, PartialEq)]
pub enum End {
    /// Every planned step is done or failed.
    Finished,
    /// `campaign stop` ended it.
    Stopped,
    /// Nothing left for this process, but other owners still run steps (a lab).
    Idle,
    /// Another live owner runs the steps of this place (the campaign, or this lab box): this
    /// driver claimed nothing.
    Held(Holder),
}

/// What runs a campaign's steps.
pub struct Driver<'a> {
    pub store: &'a mut Store,
    pub executor: &'a mut dyn Executor,
    pub signals: &'a Signals,
    pub progress: &'a mut Progress,
    /// Who claims the steps (`Owner::me()` as text, or an agent's name).
    pub owner: String,
    /// How long a claim holds without renewal (seconds).
    pub lease_s: f64,
    /// Only this box's steps (a lab agent), or any.
    pub r#box: Option<String>,
    /// Where a finished step's run waits when the store cannot be reached (a lab agent).
    pub spool: Option<&'a mut Spool>,
}

/// Renews the lease of the steps a driver runs while they run: every third of the lease, and
/// after a failed renewal (the server away) it reconnects first, so a server that came back
/// keeps the step ours.
struct Renewal<'s> {
    store: &'s mut Store,
    owner: &'s str,
    lease_s: f64,
    steps: Vec<i64>,
    last: std::time::Instant,
    broken: bool,
}

impl<'s> Renewal<'s> {
    fn new(store: &'s mut Store, owner: &'s str, lease_s: f64, steps: Vec<i64>) -> Renewal<'s> {
        Renewal {
            store,
            owner,
            lease_s,
            steps,
            last: std::time::Instant::now(),
            broken: false,
        }
    }

    fn tick(&mut self) {
        if self.lease_s <= 0.0 || self.last.elapsed().as_secs_f64() < self.lease_s / 3.0 {
            return;
        }
        self.last = std::time::Instant::now();
        if self.broken && self.store.reconnect(None).is_err() {
            return;
        }
        self.broken = false;
        for &id in &self.steps {
            if let Err(e) = self.store.renew_lease(id, self.owner, self.lease_s) {
                self.broken = crate::error::is_unreachable(&e);
            }
        }
    }
}

impl Driver<'_> {
    /// Runs the campaign called `name` until it ends, is stopped, or this process is
    /// interrupted (then the error is [`crate::error::Interrupted`] and the step is handed back).
    pub fn drive(&mut self, name: &str) -> anyhow::Result<End> {
        loop {
            if let Some(end) = self.next_step(name)? {
                return Ok(end);
            }
        }
    }

    /// Claims and runs the campaign's next step (both steps of a round in a duet); None when
    /// one ran, or how the drive ends when there was none for this driver.
    pub fn next_step(&mut self, name: &str) -> anyhow::Result<Option<End>> {
        let campaign = match self.prepare(name)? {
            Ok(c) => c,
            Err(end) => return Ok(Some(end)),
        };
        let step = match self.claim(&campaign)? {
            Claim::Step(s) => s,
            Claim::Nothing => return self.nothing_planned(&campaign).map(Some),
            Claim::Held(h) => return Ok(Some(End::Held(h))),
        };
        if campaign.spec.duet {
            match self.claim(&campaign)? {
                Claim::Step(p) if p.round == step.round && p.r#box == step.r#box => {
                    self.run_pair(&campaign, step, p)?;
                    return Ok(None);
                }
                Claim::Step(p) => {
                    // Not the same round (its partner failed for good): hand it back.
                    self.store.release_step(p.id, &self.owner)?;
                }
                Claim::Nothing | Claim::Held(_) => {}
            }
        }
        self.run_one(&campaign, step)?;
        Ok(None)
    }

    /// What comes before each step: the campaign as stored now, or how it ended (a stop asked
    /// for becomes `stopped`; `--max-time` finishes it); the `--until` decision when due.
    /// Interrupted when a signal came.
    pub fn prepare(&mut self, name: &str) -> anyhow::Result<Result<Campaign, End>> {
        let campaign = self.load(name)?;
        match campaign.state {
            CampaignState::Running => {}
            CampaignState::Stopping => {
                self.store.set_campaign_state(
                    campaign.id,
                    CampaignState::Stopped,
                    Some("stopped by `campaign stop`"),
                )?;
                return Ok(Err(End::Stopped));
            }
            CampaignState::Stopped => return Ok(Err(End::Stopped)),
            CampaignState::Finished | CampaignState::Failed => return Ok(Err(End::Finished)),
        }
        self.signals.check()?;
        let campaign = if self.decide_if_due(&campaign)? {
            // The decision planned more rounds: the campaign as it is now.
            self.load(name)?
        } else {
            campaign
        };
        if self.max_time_passed(&campaign) {
            self.store.set_campaign_state(
                campaign.id,
                CampaignState::Finished,
                Some("--max-time reached"),
            )?;
            self.progress
                .line(&format!("campaign {name}: --max-time reached; finishing"));
            return Ok(Err(End::Finished));
        }
        Ok(Ok(campaign))
    }

    /// The step the next claim would take, without claiming it; None when nothing is planned
    /// (the campaign is then marked finished, unless steps still run elsewhere).
    pub fn peek_next(&mut self, c: &Campaign) -> anyhow::Result<Result<Step, End>> {
        let steps = self.store.steps(c.id)?;
        let next = steps
            .into_iter()
            .filter(|s| s.state == StepState::Planned)
            .find(|s| self.r#box.as_ref().is_none_or(|b| *b == s.r#box));
        match next {
            Some(s) => Ok(Ok(s)),
            None => Ok(Err(self.nothing_planned(c)?)),
        }
    }

    fn load(&self, name: &str) -> anyhow::Result<Campaign> {
        self.store.campaign(name)?.ok_or_else(|| {
            Usage(format!(
                "no campaign named {name:?} in store {}; `patchbench campaign status` lists them",
                self.store.location()
            ))
            .into()
        })
    }

    /// Claims the next planned step for this driver's owner, holding its place (the
    /// campaign, or a lab campaign's box, whatever campaign it runs) for one owner at a time.
    pub fn claim(&mut self, c: &Campaign) -> anyhow::Result<Claim> {
        let hold = hold_key(c, self.r#box.as_deref());
        self.store.claim_held(
            c.id,
            &Claimer {
                owner: &self.owner,
                lease_s: self.lease_s,
                r#box: self.r#box.as_deref(),
                hold: &hold,
                is_dead: &|o| Owner::parse(o).is_some_and(|o| o.is_dead_here()),
            },
        )
    }

    fn nothing_planned(&mut self, c: &Campaign) -> anyhow::Result<End> {
        let steps = self.store.steps(c.id)?;
        if steps.iter().any(|s| s.state == StepState::Running) {
            return Ok(End::Idle);
        }
        if steps.iter().any(|s| s.state == StepState::Planned) {
            // Planned for another box.
            return Ok(End::Idle);
        }
        let failed = steps
            .iter()
            .filter(|s| s.state == StepState::Failed)
            .count();
        let reason = (failed > 0).then(|| format!("{failed} of {} steps failed", steps.len()));
        self.store
            .set_campaign_state(c.id, CampaignState::Finished, reason.as_deref())?;
        Ok(End::Finished)
    }

    fn request<'s>(c: &'s Campaign, step: &'s Step) -> anyhow::Result<StepRequest<'s>> {
        let side = c.spec.side(&step.side).ok_or_else(|| {
            anyhow::anyhow!(
                "campaign {}: step {} names an unknown side {:?}",
                c.name,
                step.id,
                step.side
            )
        })?;
        Ok(StepRequest {
            spec: &c.spec,
            side,
            step,
        })
    }

    /// Runs a claimed step and records what became of it.
    pub fn run_one(&mut self, c: &Campaign, step: Step) -> anyhow::Result<()> {
        let req = Self::request(c, &step)?;
        self.announce(c, &step);
        let started = std::time::Instant::now();
        let progress = &*self.progress;
        let what = step_name(c, &step);
        let mut renewal = Renewal::new(self.store, &self.owner, self.lease_s, vec![step.id]);
        let outcome = self.executor.run_step(
            &req,
            self.signals,
            &mut console_shown(progress, &what),
            &mut || renewal.tick(),
        );
        self.settle(c, &step, outcome, started.elapsed().as_secs_f64(), false)
    }

    fn run_pair(&mut self, c: &Campaign, a: Step, b: Step) -> anyhow::Result<()> {
        let ra = Self::request(c, &a)?;
        let rb = Self::request(c, &b)?;
        self.announce(c, &a);
        self.announce(c, &b);
        let started = std::time::Instant::now();
        let progress = &*self.progress;
        let what = format!("{}: round {} (duet)", c.name, a.round);
        let mut renewal = Renewal::new(self.store, &self.owner, self.lease_s, vec![a.id, b.id]);
        let outcomes = self.executor.run_pair(
            [&ra, &rb],
            self.signals,
            &mut console_shown(progress, &what),
            &mut || renewal.tick(),
        );
        let Some([oa, ob]) = outcomes else {
            self.store.release_step(a.id, &self.owner)?;
            self.store.release_step(b.id, &self.owner)?;
            return Err(Usage(format!(
                "the {} executor cannot run a duet",
                self.executor.kind().as_str()
            ))
            .into());
        };
        let secs = started.elapsed().as_secs_f64();
        let first = self.settle(c, &a, oa, secs, true);
        let second = self.settle(c, &b, ob, secs, true);
        first.and(second)
    }

    fn announce(&self, c: &Campaign, step: &Step) {
        let retry = if step.attempts > 1 { " (retry)" } else { "" };
        let eta = self
            .eta(c)
            .map(|s| format!(", about {} left", crate::clock::human_secs(s)))
            .unwrap_or_default();
        self.progress
            .line(&format!("{}: starting{retry}{eta}", step_name(c, step)));
        self.progress.show(&step_name(c, step));
    }

    /// Seconds left (see [`crate::record::campaign::state::eta_s`]).
    fn eta(&self, c: &Campaign) -> Option<f64> {
        crate::record::campaign::state::eta_s(&self.store.steps(c.id).ok()?)
    }

    /// Records what became of a step.
    fn settle(
        &mut self,
        c: &Campaign,
        step: &Step,
        outcome: StepOutcome,
        secs: f64,
        duet: bool,
    ) -> anyhow::Result<()> {
        let name = step_name(c, step);
        match outcome {
            StepOutcome::Interrupted(i) => {
                match self.store.release_step(step.id, &self.owner) {
                    Ok(_) => {}
                    Err(e) if crate::error::is_unreachable(&e) => {
                        // Stopping is not held up by a store that does not answer.
                        self.progress.line(&format!(
                            "{name}: interrupted; the store cannot be reached to hand the step \
                             back ({e}), so it returns to the queue when its lease runs out"
                        ));
                        return Err(i.into());
                    }
                    Err(e) => return Err(e),
                }
                self.progress.line(&format!(
                    "{name}: interrupted; the step is planned again (`patchbench campaign resume \
                     {}{}` continues)",
                    c.name,
                    self.store.location().hint()
                ));
                Err(i.into())
            }
            StepOutcome::Failed { reason, console } => self.failed(c, step, &reason, &console),
            StepOutcome::Measured(m) => {
                let checked = match c.spec.side(&step.side) {
                    Some(side) => check_kernel(side, &m.kernel),
                    None => Err(format!("the campaign has no side {:?}", step.side)),
                };
                if let Err(reason) = checked {
                    return self.failed(c, step, &reason, "");
                }
                let record = crate::store::runs::with_uuid(&self.with_step_info(c, step, *m, duet));
                let finished = match self.store.finish_step(step.id, &self.owner, &record) {
                    Err(e) if crate::error::is_unreachable(&e) && self.spool.is_some() => {
                        return self.spool_run(c, step, &record, e);
                    }
                    other => other?,
                };
                let ended = record
                    .campaign
                    .as_ref()
                    .filter(|i| !i.leftovers.is_empty())
                    .map(|i| {
                        format!(
                            "; it ended what its setup or workload left running: {}",
                            i.leftovers.join(", ")
                        )
                    })
                    .unwrap_or_default();
                match finished {
                    Some(id) => {
                        self.progress.line(&format!(
                            "{name}: done in {secs:.1} s, stored as run {id}{ended}"
                        ));
                    }
                    None => self.progress.line(&format!(
                        "{name}: finished, but the step was no longer ours (taken back after its \
                         lease ran out); its run was not stored"
                    )),
                }
                Ok(())
            }
        }
    }

    /// Keeps a finished step's run in the spool when the store cannot be reached, then
    /// returns the store's error (the caller reconnects and uploads the spool).
    fn spool_run(
        &mut self,
        c: &Campaign,
        step: &Step,
        record: &crate::record::RunRecord,
        lost: anyhow::Error,
    ) -> anyhow::Result<()> {
        let shown = self.store.location().shown();
        let Some(spool) = self.spool.as_deref_mut() else {
            return Err(lost);
        };
        spool.keep(&shown, step.id, &c.name, record)?;
        self.progress.line(&format!(
            "{}: finished, but the store cannot be reached; the run waits in spool {} and is \
             uploaded when the store is back",
            step_name(c, step),
            spool.path().display()
        ));
        Err(lost)
    }

    fn failed(
        &mut self,
        c: &Campaign,
        step: &Step,
        reason: &str,
        console: &str,
    ) -> anyhow::Result<()> {
        let name = step_name(c, step);
        let after = self
            .store
            .fail_step(step.id, &self.owner, reason, console)?;
        let what = match after {
            AfterFailure::Retry => "failed; it will be retried once",
            AfterFailure::Failed => "failed again; recorded as failed, the campaign goes on",
            AfterFailure::NotOwned => "failed (the step was no longer ours)",
        };
        self.progress.line(&format!("{name}: {what}: {reason}"));
        for l in console
            .lines()
            .rev()
            .take(5)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
        {
            self.progress.line(&format!(
                "  | {}",
                crate::safe_text::field_cut(l, CONSOLE_LINE_CHARS)
            ));
        }
        Ok(())
    }

    fn with_step_info(
        &self,
        c: &Campaign,
        step: &Step,
        m: Measured,
        duet: bool,
    ) -> crate::record::RunRecord {
        let side = c.spec.side(&step.side);
        let mut kernel = m.kernel;
        // What the executor says it booted, else what the side names.
        if let Some(k) = side
            .and_then(|s| s.kernel.as_ref())
            .filter(|_| kernel.image.is_none())
        {
            kernel.image = Some(k.image.display().to_string());
            kernel.image_sha256 = Some(k.sha256.clone());
        }
        kernel.cmdline_words = side.map(|s| s.cmdline.clone()).unwrap_or_default();
        // Checked against the side's words already (check_kernel); stored without secrets.
        kernel.cmdline = crate::record::campaign::redact_cmdline(&kernel.cmdline);
        let mut record = m.record;
        let info = StepInfo {
            campaign: c.name.clone(),
            round: step.round,
            side: step.side.clone(),
            slot: step.slot,
            r#box: step.r#box.clone(),
            executor: self.executor.kind().as_str().to_string(),
            attempt: step.attempts,
            kernel,
            setup: side.and_then(|s| s.setup.clone()),
            scratch: m.scratch,
            guest: m.guest,
            boot: m.boot,
            duet,
            leftovers: m.leftovers,
            build: side.and_then(|s| s.build.as_ref()).map(|b| b.build.clone()),
        };
        record.label = Some(info.label());
        record.campaign = Some(info);
        record
    }

    /// The pilot of `--until` as `primary::pilot` says: grows it to its size once its first
    /// round's time is known, shows the estimate so far as each pilot round ends, and after it
    /// (every pilot step done or failed) decides once how many rounds the campaign needs and
    /// plans them; true when it planned rounds now.
    fn decide_if_due(&mut self, c: &Campaign) -> anyhow::Result<bool> {
        let Schedule::Until { .. } = &c.spec.schedule else {
            return Ok(false);
        };
        if c.decision.is_some() {
            return Ok(false);
        }
        let steps = self.store.steps(c.id)?;
        let pilot_rounds = match primary::pilot(&c.spec, c.planned_rounds, &steps) {
            primary::Pilot::Waiting => return Ok(false),
            primary::Pilot::Grow { rounds } => {
                let more = plan::steps(c.spec.order, c.spec.seed, c.planned_rounds + 1, rounds);
                self.store.grow_pilot(c.id, rounds, &more)?;
                self.progress.line(&format!(
                    "campaign {}: {}",
                    c.name,
                    primary::Pilot::grown(rounds)
                ));
                return Ok(true);
            }
            primary::Pilot::RoundEnded { round, rounds } => {
                let runs: Vec<_> = self.store.campaign_runs(c.id)?;
                let runs: Vec<_> = runs.into_iter().map(|(_, r)| r).collect();
                if let Some(f) = primary::firming(&c.spec, &runs) {
                    self.progress.line(&format!(
                        "campaign {} pilot {round}/{rounds}: {}",
                        c.name,
                        f.describe()
                    ));
                }
                return Ok(false);
            }
            primary::Pilot::Over { rounds } => rounds,
        };
        let pilot: Vec<&Step> = steps.iter().filter(|s| s.round <= pilot_rounds).collect();
        let runs: Vec<_> = self
            .store
            .campaign_runs(c.id)?
            .into_iter()
            .map(|(_, r)| r)
            .collect();
        let round_secs = {
            let times: Vec<f64> = pilot
                .iter()
                .filter_map(|s| {
                    crate::clock::secs_between(s.started_at.as_deref()?, s.finished_at.as_deref()?)
                })
                .collect();
            crate::stats::mean(&times).unwrap_or(0.0) * 2.0
        };
        let spent = crate::clock::secs_since(&c.created_at).unwrap_or(0.0);
        let decision = match primary::decide(&c.spec, &runs, pilot_rounds, round_secs, spent) {
            Some(d) => d,
            None => crate::record::campaign::state::Decision {
                primary: primary::primary_key(&c.spec, &runs).unwrap_or_default(),
                pilot_rounds,
                pilot_pairs: 0,
                pilot_sd: 0.0,
                rounds_needed: pilot_rounds,
                rounds: pilot_rounds,
                bound: Some("the pilot gave fewer than 2 complete rounds".to_string()),
                half_width_pct: f64::NAN,
            },
        };
        let more = plan::steps(c.spec.order, c.spec.seed, pilot_rounds + 1, decision.rounds);
        self.progress.line(&format!(
            "campaign {}: the pilot's spread (sd {:.2} % per round) needs {} rounds for ±{}; \
             planned {} in all{}",
            c.name,
            100.0 * decision.pilot_sd,
            decision.rounds_needed,
            match &c.spec.schedule {
                Schedule::Until { pct, .. } => format!("{pct} %"),
                _ => String::new(),
            },
            decision.rounds,
            decision
                .bound
                .as_ref()
                .map(|b| format!(" (bound by {b})"))
                .unwrap_or_default()
        ));
        self.store.extend_campaign(
            c.id,
            decision.rounds.max(c.planned_rounds),
            &decision,
            &more,
        )?;
        Ok(true)
    }

    fn max_time_passed(&self, c: &Campaign) -> bool {
        match &c.spec.schedule {
            Schedule::Until {
                max_time_s: Some(t),
                ..
            } => crate::clock::secs_since(&c.created_at).is_some_and(|s| s > *t),
            _ => false,
        }
    }
}

/// The place whose steps one owner runs at a time: a lab box (across its campaigns: a box
/// measures one thing at a time), else the campaign.
pub fn hold_key(c: &Campaign, r#box: Option<&str>) -> String {
    match (&c.spec.lab, r#box) {
        (Some(_), Some(b)) => format!("box:{b}"),
        _ => format!("campaign:{}", c.id),
    }
}

/// A step's console lines on the progress line, as `WHAT: LINE` (cut and escaped).
fn console_shown<'p>(progress: &'p Progress, what: &'p str) -> impl FnMut(&str) + 'p {
    move |line| {
        let shown = format!(
            "{what}: {}",
            crate::safe_text::field_cut(line, CONSOLE_LINE_CHARS)
        );
        // A step waiting for another measurement on this machine says so for good: the wait
        // is part of the campaign's story, not a passing status.
        if line.starts_with(crate::proc::measure_lock::WAITING) {
            progress.line(&shown)
        } else {
            progress.show(&shown)
        }
    }
}

/// `NAME round R/N SIDE`.
fn step_name(c: &Campaign, s: &Step) -> String {
    let boxed = if s.r#box.is_empty() {
        String::new()
    } else {
        format!(" box {}", s.r#box)
    };
    format!(
        "campaign {} round {}/{}{boxed} {}",
        c.name, s.round, c.planned_rounds, s.side
    )
}
