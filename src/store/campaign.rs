//! The campaign tables of the store (schema version 3): a campaign's spec and state, and every
//! step's state (`crate::record::campaign::state` says what the states mean), on either database.
//! Every change is one transaction; a step's run is inserted in the same transaction that marks
//! the step done, and only while the caller still owns the step, so a run is never stored
//! without its step, nor twice. A claim is the queue pattern of lab.md §2: on PostgreSQL the
//! next planned step is locked with `FOR UPDATE SKIP LOCKED`, so many agents claim at once
//! without waiting for each other, and the claim holds for a lease (by the database's clock,
//! one clock for every box) that its owner renews.
//!
//! Rounds are added to a campaign in one place (`add_rounds`), whoever adds them: the pilot of
//! `--until` growing, its decision, or a bisection step judged unsure, which opens its ended
//! campaign again.

use super::db::Store;
use super::sql::{params, Db, DbError, Row, Value};
use crate::error::Usage;
use crate::record::campaign::plan::PlannedStep;
use crate::record::campaign::spec::CampaignSpec;
use crate::record::campaign::state::{
    Campaign, CampaignState, Decision, Step, StepState, MAX_ATTEMPTS,
};
use crate::record::RunRecord;

const CAMPAIGN_COLUMNS: &str = "id, name, spec_json, state, state_reason, planned_rounds, \
                                decision_json, created_at, updated_at";
const STEP_COLUMNS: &str = "id, campaign_id, round, slot, side, box, state, attempts, owner, \
                            lease_until, started_at, finished_at, run_uuid, error, console_tail";

/// Seconds since the epoch, now.
pub fn epoch_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

fn small(r: &Row, i: usize) -> Result<u32, DbError> {
    u32::try_from(r.int(i)?).map_err(|_| DbError::other(format!("column {i} is out of range")))
}

fn campaign_row(r: &Row) -> Result<Campaign, DbError> {
    let spec_json = r.text(2)?;
    let spec = serde_json::from_str(&spec_json)
        .map_err(|e| DbError::other(format!("a campaign's spec is damaged: {e}")))?;
    let state = r.text(3)?;
    let decision = r.opt_text(6)?;
    Ok(Campaign {
        id: r.int(0)?,
        name: r.text(1)?,
        spec,
        state: CampaignState::parse(&state).unwrap_or(CampaignState::Failed),
        state_reason: r.opt_text(4)?,
        planned_rounds: small(r, 5)?,
        decision: decision.and_then(|d| serde_json::from_str::<Decision>(&d).ok()),
        created_at: r.text(7)?,
        updated_at: r.text(8)?,
    })
}

fn step_row(r: &Row) -> Result<Step, DbError> {
    let state = r.text(6)?;
    Ok(Step {
        id: r.int(0)?,
        campaign_id: r.int(1)?,
        round: small(r, 2)?,
        slot: small(r, 3)?,
        side: r.text(4)?,
        r#box: r.text(5)?,
        state: StepState::parse(&state).unwrap_or(StepState::Failed),
        attempts: small(r, 7)?,
        owner: r.opt_text(8)?,
        lease_until: r.opt_real(9)?,
        started_at: r.opt_text(10)?,
        finished_at: r.opt_text(11)?,
        run_uuid: r.opt_text(12)?,
        error: r.opt_text(13)?,
        console_tail: r.opt_text(14)?,
    })
}

/// Who holds the right to run steps at a place (a campaign, a lab box), and what it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Holder {
    /// Its owner (`host:pid:boot`).
    pub owner: String,
    /// What it claimed last: `round R SIDE of campaign NAME`.
    pub what: String,
    /// Seconds its lease has left (by the database's clock).
    pub lease_left_s: f64,
}

/// What a claim found.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// This step is the claimer's now.
    Step(Step),
    /// Nothing planned for the claimer.
    Nothing,
    /// Another live owner holds the place; nothing was claimed.
    Held(Holder),
}

/// How a claimer claims: as whom, for how long, at which box, holding which place (see
/// [`Store::claim_held`]), and how it tells a holder that is gone for good.
pub struct Claimer<'a> {
    pub owner: &'a str,
    pub lease_s: f64,
    pub r#box: Option<&'a str>,
    /// `campaign:ID` for a campaign one process runs, `box:NAME` for a lab box.
    pub hold: &'a str,
    /// True for an owner known to be dead (a process of this host that is gone); a holder
    /// not known so keeps its hold until its lease runs out.
    pub is_dead: &'a dyn Fn(&str) -> bool,
}

/// What happened to a step whose attempt failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterFailure {
    /// Back to planned: it gets another attempt.
    Retry,
    /// Failed for good (its attempts are used up).
    Failed,
    /// The caller no longer owned the step; nothing changed.
    NotOwned,
}

impl Store {
    /// Creates a campaign with its first steps; refuses a name already used.
    pub fn create_campaign(
        &mut self,
        spec: &CampaignSpec,
        planned_rounds: u32,
        steps: &[PlannedStep],
    ) -> anyhow::Result<i64> {
        let json = serde_json::to_string(spec)?;
        let now = crate::clock::now_rfc3339();
        let name = spec.name.clone();
        let shown = self.location().shown();
        let result = self.writing(|db| {
            let id = db.query_opt(
                "INSERT INTO campaigns (name, spec_json, state, planned_rounds, created_at,
                                        updated_at)
                 VALUES ($1, $2, 'running', $3, $4, $4)
                 ON CONFLICT (name) DO NOTHING RETURNING id",
                params![name.as_str(), json, planned_rounds, now],
            )?;
            let Some(id) = id else { return Ok(None) };
            let id = id.int(0)?;
            insert_steps(db, id, steps)?;
            Ok(Some(id))
        })?;
        result.ok_or_else(|| {
            Usage(format!(
                "a campaign named {name:?} already exists in store {shown}; choose another name \
                 (or `campaign resume {name}` to continue it)"
            ))
            .into()
        })
    }

    /// The campaign called `name`.
    pub fn campaign(&self, name: &str) -> anyhow::Result<Option<Campaign>> {
        self.reading(|db| {
            db.query_opt(
                &format!("SELECT {CAMPAIGN_COLUMNS} FROM campaigns WHERE name=$1"),
                params![name],
            )?
            .as_ref()
            .map(campaign_row)
            .transpose()
        })
    }

    /// Every campaign, oldest first.
    pub fn campaigns(&self) -> anyhow::Result<Vec<Campaign>> {
        self.reading(|db| {
            db.query(
                &format!("SELECT {CAMPAIGN_COLUMNS} FROM campaigns ORDER BY id"),
                &[],
            )?
            .iter()
            .map(campaign_row)
            .collect()
        })
    }

    /// A campaign's steps in schedule order (round, slot, box).
    pub fn steps(&self, campaign_id: i64) -> anyhow::Result<Vec<Step>> {
        self.reading(|db| steps_of(db, campaign_id))
    }

    /// One step.
    pub fn step(&self, step_id: i64) -> anyhow::Result<Option<Step>> {
        self.reading(|db| {
            db.query_opt(
                &format!("SELECT {STEP_COLUMNS} FROM campaign_steps WHERE id=$1"),
                params![step_id],
            )?
            .as_ref()
            .map(step_row)
            .transpose()
        })
    }

    /// Claims the next planned step of an open campaign (for `box_name`'s steps when given):
    /// marks it running for `owner` until `lease_s` seconds from now, counting an attempt.
    pub fn claim_step(
        &mut self,
        campaign_id: i64,
        owner: &str,
        lease_s: f64,
        box_name: Option<&str>,
    ) -> anyhow::Result<Option<Step>> {
        let now = crate::clock::now_rfc3339();
        self.writing(|db| {
            let d = db.dialect();
            let sql = format!(
                "UPDATE campaign_steps SET state='running', attempts=attempts+1, owner=$2,
                        lease_until={} + $3, started_at=$4, finished_at=NULL
                 WHERE id = (SELECT s.id FROM campaign_steps s
                             JOIN campaigns c ON c.id = s.campaign_id
                             WHERE s.campaign_id=$1 AND c.state='running'
                               AND s.state='planned' AND ($5 = '' OR s.box=$5)
                             ORDER BY s.round, s.box, s.slot LIMIT 1 {})
                 RETURNING {STEP_COLUMNS}",
                d.now_epoch(),
                d.skip_locked("s")
            );
            db.query_opt(
                &sql,
                params![campaign_id, owner, lease_s, now, box_name.unwrap_or("")],
            )?
            .as_ref()
            .map(step_row)
            .transpose()
        })
    }

    /// Claims the next planned step as [`Store::claim_step`] does, in one transaction with
    /// taking (or renewing) the hold of `who.hold`: refused, with who holds it, while another
    /// owner's hold is live (its lease not run out, its owner not known dead). So one owner at
    /// a time runs the steps of a place, whatever the number of processes or agents that try:
    /// the check and the claim are one act.
    pub fn claim_held(&mut self, campaign_id: i64, who: &Claimer) -> anyhow::Result<Claim> {
        let now_text = crate::clock::now_rfc3339();
        self.writing(|db| {
            let d = db.dialect();
            let now = db.query_one(&format!("SELECT {}", d.now_epoch()), &[])?.real(0)?;
            let held = db.query_opt(
                &format!(
                    "SELECT owner, lease_until, what FROM holds WHERE key=$1 {}",
                    d.for_update()
                ),
                params![who.hold],
            )?;
            // The holder this claim may replace: itself, one whose lease ran out, or a dead one.
            let mut replaces = who.owner.to_string();
            if let Some(h) = &held {
                let (owner, until) = (h.text(0)?, h.real(1)?);
                if owner != who.owner {
                    if until >= now && !(who.is_dead)(&owner) {
                        return Ok(Claim::Held(Holder {
                            owner,
                            what: h.text(2)?,
                            lease_left_s: until - now,
                        }));
                    }
                    replaces = owner;
                }
            }
            let next = db.query_opt(
                &format!(
                    "SELECT s.id, s.round, s.side, c.name FROM campaign_steps s
                     JOIN campaigns c ON c.id = s.campaign_id
                     WHERE s.campaign_id=$1 AND c.state='running'
                       AND s.state='planned' AND ($2 = '' OR s.box=$2)
                     ORDER BY s.round, s.box, s.slot LIMIT 1 {}",
                    d.skip_locked("s")
                ),
                params![campaign_id, who.r#box.unwrap_or("")],
            )?;
            let Some(next) = next else {
                return Ok(Claim::Nothing);
            };
            let what = format!(
                "round {} {} of campaign {}",
                next.int(1)?,
                next.text(2)?,
                next.text(3)?
            );
            let took = db.query_opt(
                &format!(
                    "INSERT INTO holds (key, owner, lease_until, what) VALUES ($1, $2, {now} + $3, $4)
                     ON CONFLICT (key) DO UPDATE SET owner=excluded.owner,
                         lease_until=excluded.lease_until, what=excluded.what
                     WHERE holds.owner=$2 OR holds.owner=$5 OR holds.lease_until < {now}
                     RETURNING owner",
                    now = d.now_epoch()
                ),
                params![who.hold, who.owner, who.lease_s, what.as_str(), replaces],
            )?;
            if took.is_none() {
                // Another claimer took the hold since this transaction looked (PostgreSQL).
                let h = db.query_one(
                    "SELECT owner, lease_until, what FROM holds WHERE key=$1",
                    params![who.hold],
                )?;
                return Ok(Claim::Held(Holder {
                    owner: h.text(0)?,
                    what: h.text(2)?,
                    lease_left_s: h.real(1)? - now,
                }));
            }
            let step = db.query_opt(
                &format!(
                    "UPDATE campaign_steps SET state='running', attempts=attempts+1, owner=$2,
                            lease_until={} + $3, started_at=$4, finished_at=NULL
                     WHERE id=$1 AND state='planned'
                     RETURNING {STEP_COLUMNS}",
                    d.now_epoch()
                ),
                params![next.int(0)?, who.owner, who.lease_s, now_text.as_str()],
            )?;
            Ok(match step {
                Some(r) => Claim::Step(step_row(&r)?),
                None => Claim::Nothing,
            })
        })
    }

    /// Gives up every hold of `owner` (its drive ended): another owner may claim there now.
    pub fn release_holds(&mut self, owner: &str) -> anyhow::Result<()> {
        self.writing(|db| db.execute("DELETE FROM holds WHERE owner=$1", params![owner]))?;
        Ok(())
    }

    /// Who holds `key` now, if the hold is live.
    pub fn holder(&self, key: &str) -> anyhow::Result<Option<Holder>> {
        self.reading(|db| {
            let now = db
                .query_one(&format!("SELECT {}", db.dialect().now_epoch()), &[])?
                .real(0)?;
            let row = db.query_opt(
                "SELECT owner, lease_until, what FROM holds WHERE key=$1",
                params![key],
            )?;
            match row {
                Some(h) if h.real(1)? >= now => Ok(Some(Holder {
                    owner: h.text(0)?,
                    what: h.text(2)?,
                    lease_left_s: h.real(1)? - now,
                })),
                _ => Ok(None),
            }
        })
    }

    /// Extends the lease of a step `owner` still runs, and of its holds; false when it no
    /// longer owns the step.
    pub fn renew_lease(&mut self, step_id: i64, owner: &str, lease_s: f64) -> anyhow::Result<bool> {
        self.writing(|db| {
            let now = db.dialect().now_epoch();
            db.execute(
                &format!("UPDATE holds SET lease_until={now} + $2 WHERE owner=$1"),
                params![owner, lease_s],
            )?;
            let sql = format!(
                "UPDATE campaign_steps SET lease_until={now} + $3
                 WHERE id=$1 AND owner=$2 AND state='running'"
            );
            Ok(db.execute(&sql, params![step_id, owner, lease_s])? == 1)
        })
    }

    /// Stores the step's run and marks the step done, in one transaction, if `owner` still
    /// owns the running step; returns the run's id, or None (nothing stored) when it does not.
    pub fn finish_step(
        &mut self,
        step_id: i64,
        owner: &str,
        record: &RunRecord,
    ) -> anyhow::Result<Option<i64>> {
        let mut record = super::runs::with_uuid(record);
        self.check_record(&record)?;
        let now = crate::clock::now_rfc3339();
        self.writing_runs(|db, cache| {
            let n = db.execute(
                "UPDATE campaign_steps SET state='done', owner=NULL, lease_until=NULL,
                        finished_at=$3, run_uuid=$4
                 WHERE id=$1 AND owner=$2 AND state='running'",
                params![step_id, owner, now, record.uuid.as_deref()],
            )?;
            if n != 1 {
                return Ok(None);
            }
            let (id, _) = super::runs::insert_run(db, cache, &mut record)?;
            Ok(Some(id))
        })
    }

    /// Records a failed attempt of a step `owner` runs: back to planned while it has attempts
    /// left, else failed; the reason and console lines are kept either way.
    pub fn fail_step(
        &mut self,
        step_id: i64,
        owner: &str,
        reason: &str,
        console_tail: &str,
    ) -> anyhow::Result<AfterFailure> {
        let now = crate::clock::now_rfc3339();
        self.writing(|db| {
            let sql = format!(
                "SELECT attempts FROM campaign_steps WHERE id=$1 AND owner=$2 AND state='running' {}",
                db.dialect().for_update()
            );
            let Some(row) = db.query_opt(&sql, params![step_id, owner])? else {
                return Ok(AfterFailure::NotOwned);
            };
            let after = if small(&row, 0)? >= MAX_ATTEMPTS {
                AfterFailure::Failed
            } else {
                AfterFailure::Retry
            };
            let state = match after {
                AfterFailure::Failed => "failed",
                _ => "planned",
            };
            db.execute(
                "UPDATE campaign_steps SET state=$2, owner=NULL, lease_until=NULL,
                        finished_at=$3, error=$4, console_tail=$5
                 WHERE id=$1",
                params![step_id, state, now, reason, console_tail],
            )?;
            Ok(after)
        })
    }

    /// Hands a running step back unfinished (its owner was interrupted): planned again, the
    /// attempt not counted. False when `owner` did not own it.
    pub fn release_step(&mut self, step_id: i64, owner: &str) -> anyhow::Result<bool> {
        self.writing(|db| {
            let sql = format!(
                "UPDATE campaign_steps SET state='planned', owner=NULL, lease_until=NULL,
                        attempts={}, started_at=NULL
                 WHERE id=$1 AND owner=$2 AND state='running'",
                db.dialect().greatest("attempts-1", "0")
            );
            Ok(db.execute(&sql, params![step_id, owner])? == 1)
        })
    }

    /// Takes back the running steps of a campaign whose owner `is_dead` says is gone or whose
    /// lease has expired (by the database's clock): planned again (the attempt not counted
    /// unless `count_attempt`). Returns the steps taken back.
    pub fn reclaim_steps(
        &mut self,
        campaign_id: i64,
        is_dead: &dyn Fn(&str) -> bool,
        count_attempt: bool,
    ) -> anyhow::Result<Vec<Step>> {
        self.writing(|db| {
            let now = db
                .query_one(&format!("SELECT {}", db.dialect().now_epoch()), &[])?
                .real(0)?;
            let running: Vec<Step> = steps_of(db, campaign_id)?
                .into_iter()
                .filter(|s| s.state == StepState::Running)
                .filter(|s| {
                    s.owner.as_deref().is_none_or(is_dead) || s.lease_until.is_some_and(|t| t < now)
                })
                .collect();
            let attempts = format!(
                "CASE WHEN $3 THEN attempts ELSE {} END",
                db.dialect().greatest("attempts-1", "0")
            );
            for s in &running {
                db.execute(
                    &format!(
                        "UPDATE campaign_steps SET state='planned', owner=NULL, lease_until=NULL,
                                attempts={attempts}, started_at=NULL
                         WHERE id=$1 AND state='running' AND coalesce(owner, '') = $2"
                    ),
                    params![s.id, s.owner.clone().unwrap_or_default(), count_attempt],
                )?;
            }
            Ok(running)
        })
    }

    /// Plans again the done steps of a campaign whose run is no longer in the store (removed
    /// with `patchbench rm`), their attempts starting over, and reopens the campaign when it
    /// had finished; returns those steps.
    pub fn replan_lost_runs(&mut self, campaign_id: i64) -> anyhow::Result<Vec<Step>> {
        let now = crate::clock::now_rfc3339();
        self.writing(|db| {
            let lost: Vec<Step> = db
                .query(
                    &format!(
                        "SELECT {STEP_COLUMNS} FROM campaign_steps s
                         WHERE campaign_id=$1 AND state='done'
                           AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.uuid = s.run_uuid)
                         ORDER BY round, box, slot"
                    ),
                    params![campaign_id],
                )?
                .iter()
                .map(step_row)
                .collect::<Result<_, _>>()?;
            for s in &lost {
                db.execute(
                    "UPDATE campaign_steps SET state='planned', attempts=0, owner=NULL,
                            lease_until=NULL, started_at=NULL, finished_at=NULL, run_uuid=NULL
                     WHERE id=$1 AND state='done'",
                    params![s.id],
                )?;
            }
            if !lost.is_empty() {
                db.execute(
                    "UPDATE campaigns SET state='running', state_reason=NULL, updated_at=$2
                     WHERE id=$1 AND state='finished'",
                    params![campaign_id, now.as_str()],
                )?;
            }
            Ok(lost)
        })
    }

    /// Adds rounds to a campaign (after the pilot of `--until`) and records the decision. The
    /// new rounds go to every box the campaign has (its boxes, or their places not yet taken).
    pub fn extend_campaign(
        &mut self,
        campaign_id: i64,
        planned_rounds: u32,
        decision: &Decision,
        steps: &[PlannedStep],
    ) -> anyhow::Result<()> {
        let json = serde_json::to_string(decision)?;
        let now = crate::clock::now_rfc3339();
        self.writing(|db| {
            let sql = format!(
                "SELECT decision_json FROM campaigns WHERE id=$1 {}",
                db.dialect().for_update()
            );
            let decided = db.query_one(&sql, params![campaign_id])?.opt_text(0)?;
            if decided.is_some() {
                // Another process decided first; the decision is made once.
                return Ok(());
            }
            let more = MoreRounds {
                planned_rounds,
                steps,
                decision: Some(&json),
                reopen: false,
            };
            add_rounds(db, campaign_id, &more, &now)
        })
    }

    /// Grows the pilot of `--until` to `planned_rounds` before the decision (its size comes
    /// from its first round's time: `campaign::primary::pilot_rounds`), adding `steps` to
    /// every box; nothing when the campaign was decided or already has that many rounds
    /// (another process grew it first).
    pub fn grow_pilot(
        &mut self,
        campaign_id: i64,
        planned_rounds: u32,
        steps: &[PlannedStep],
    ) -> anyhow::Result<()> {
        let now = crate::clock::now_rfc3339();
        self.writing(|db| {
            let sql = format!(
                "SELECT planned_rounds, decision_json FROM campaigns WHERE id=$1 {}",
                db.dialect().for_update()
            );
            let row = db.query_one(&sql, params![campaign_id])?;
            if row.int(0)? >= i64::from(planned_rounds) || row.opt_text(1)?.is_some() {
                return Ok(());
            }
            let more = MoreRounds {
                planned_rounds,
                steps,
                decision: None,
                reopen: false,
            };
            add_rounds(db, campaign_id, &more, &now)
        })
    }

    /// Adds rounds to a campaign that ended (a bisection step judged unsure): plans `steps`
    /// for every box it has (a bisection's campaigns have the one box `""`), sets its planned
    /// rounds to `planned_rounds` and opens it again. Unlike the decision of `--until`, this
    /// may happen more than once.
    pub fn add_campaign_rounds(
        &mut self,
        campaign_id: i64,
        planned_rounds: u32,
        steps: &[PlannedStep],
    ) -> anyhow::Result<()> {
        let now = crate::clock::now_rfc3339();
        self.writing(|db| {
            let more = MoreRounds {
                planned_rounds,
                steps,
                decision: None,
                reopen: true,
            };
            add_rounds(db, campaign_id, &more, &now)
        })
    }

    /// Sets a campaign's state (and why).
    pub fn set_campaign_state(
        &mut self,
        campaign_id: i64,
        state: CampaignState,
        reason: Option<&str>,
    ) -> anyhow::Result<()> {
        let now = crate::clock::now_rfc3339();
        self.writing(|db| {
            db.execute(
                "UPDATE campaigns SET state=$2, state_reason=$3, updated_at=$4 WHERE id=$1",
                params![campaign_id, state.as_str(), reason, now],
            )
        })?;
        Ok(())
    }

    /// The stored runs of a campaign's done steps, in schedule order, with their ids.
    pub fn campaign_runs(&self, campaign_id: i64) -> anyhow::Result<Vec<(i64, RunRecord)>> {
        let ids: Vec<i64> = self.reading(|db| {
            db.query(
                "SELECT r.id FROM campaign_steps s JOIN runs r ON r.uuid = s.run_uuid
                 WHERE s.campaign_id=$1 AND s.state='done' ORDER BY s.round, s.box, s.slot",
                params![campaign_id],
            )?
            .iter()
            .map(|r| r.int(0))
            .collect()
        })?;
        let mut out = Vec::new();
        for id in ids {
            if let Some(r) = self.get(id)? {
                out.push((id, r));
            }
        }
        Ok(out)
    }
}

/// Rounds added to a campaign: its planned rounds from now on, the new rounds' steps, and what
/// else its row records.
struct MoreRounds<'a> {
    planned_rounds: u32,
    steps: &'a [PlannedStep],
    /// The decision of `--until` (as JSON), recorded with the rounds it planned.
    decision: Option<&'a str>,
    /// Opens the campaign again (state `running`, no reason): it had ended.
    reopen: bool,
}

/// Adds rounds to a campaign, the one place that does: sets its planned rounds (and what
/// `more` records with them), and plans the new rounds' steps for every box it has. The
/// caller checks, in the same transaction, that the rounds are due.
fn add_rounds(
    db: &mut dyn Db,
    campaign_id: i64,
    more: &MoreRounds,
    now: &str,
) -> Result<(), DbError> {
    let mut set = String::from("planned_rounds=$2, updated_at=$3");
    if more.decision.is_some() {
        set.push_str(", decision_json=$4");
    }
    if more.reopen {
        set.push_str(", state='running', state_reason=NULL");
    }
    let mut args = vec![
        Value::from(campaign_id),
        Value::from(more.planned_rounds),
        Value::from(now),
    ];
    args.extend(more.decision.map(Value::from));
    db.execute(&format!("UPDATE campaigns SET {set} WHERE id=$1"), &args)?;
    insert_for_every_box(db, campaign_id, more.steps)
}

/// Inserts `steps` for every box the campaign has (its boxes, or their places not yet taken).
fn insert_for_every_box(
    db: &mut dyn Db,
    campaign_id: i64,
    steps: &[PlannedStep],
) -> Result<(), DbError> {
    let boxes = db
        .query(
            "SELECT DISTINCT box FROM campaign_steps WHERE campaign_id=$1 ORDER BY box",
            params![campaign_id],
        )?
        .iter()
        .map(|r| r.text(0))
        .collect::<Result<Vec<_>, _>>()?;
    insert_steps(
        db,
        campaign_id,
        &crate::record::campaign::plan::for_boxes(steps, &boxes),
    )
}

fn steps_of(db: &mut dyn Db, campaign_id: i64) -> Result<Vec<Step>, DbError> {
    db.query(
        &format!(
            "SELECT {STEP_COLUMNS} FROM campaign_steps WHERE campaign_id=$1
             ORDER BY round, box, slot"
        ),
        params![campaign_id],
    )?
    .iter()
    .map(step_row)
    .collect()
}

fn insert_steps(db: &mut dyn Db, campaign_id: i64, steps: &[PlannedStep]) -> Result<(), DbError> {
    for s in steps {
        db.execute(
            "INSERT INTO campaign_steps (campaign_id, round, slot, side, box, state)
             VALUES ($1, $2, $3, $4, $5, 'planned')",
            params![
                campaign_id,
                s.round,
                s.slot,
                s.side.as_str(),
                s.r#box.as_str()
            ],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::campaign::plan;
    use crate::record::campaign::spec::Order;
    use crate::store::{Access, Location};

    #[test]
    fn rounds_are_added_to_an_ended_campaign_more_than_once() {
        let d = tempfile::tempdir().unwrap();
        let loc = Location::File(d.path().join("s.db"));
        let mut store = Store::open(&loc, Access::Create, None).unwrap();
        let spec: crate::record::campaign::spec::CampaignSpec =
            serde_json::from_value(serde_json::json!({
                "name": "c", "sides": [{"name": "base"}, {"name": "patched"}],
                "workload": ["run"], "schedule": {"rounds": {"rounds": 2}}, "order": "random",
                "seed": 3, "executor": "local", "step_timeout_s": 60.0, "confidence": 0.95,
                "program": "patchbench", "started_on": "x"
            }))
            .unwrap();
        let id = store
            .create_campaign(&spec, 2, &plan::steps(Order::Random, 3, 1, 2))
            .unwrap();
        store
            .set_campaign_state(
                id,
                crate::record::campaign::state::CampaignState::Finished,
                None,
            )
            .unwrap();
        store
            .add_campaign_rounds(id, 4, &plan::steps(Order::Random, 3, 3, 4))
            .unwrap();
        store
            .add_campaign_rounds(id, 8, &plan::steps(Order::Random, 3, 5, 8))
            .unwrap();
        let c = store.campaign("c").unwrap().unwrap();
        assert_eq!(c.planned_rounds, 8);
        assert!(c.state.is_open());
        assert_eq!(store.steps(id).unwrap().len(), 16);
    }
}
