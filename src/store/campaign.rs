//! The campaign tables of the store (schema version 3): a campaign's spec and state, and every
//! step's state (`crate::record::campaign::state` says what the states mean). Every change is one
//! `BEGIN IMMEDIATE` transaction; a step's run is inserted in the same transaction that marks
//! the step done, and only while the caller still owns the step, so a run is never stored
//! without its step, nor twice.

use super::db::Store;
use crate::error::Usage;
use crate::record::campaign::plan::PlannedStep;
use crate::record::campaign::spec::CampaignSpec;
use crate::record::campaign::state::{
    Campaign, CampaignState, Decision, Step, StepState, MAX_ATTEMPTS,
};
use crate::record::RunRecord;
use anyhow::Context;
use rusqlite::{params, OptionalExtension, TransactionBehavior};

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

fn campaign_row(r: &rusqlite::Row) -> rusqlite::Result<Campaign> {
    let spec_json: String = r.get(2)?;
    let spec = serde_json::from_str(&spec_json).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(2, rusqlite::types::Type::Text, Box::new(e))
    })?;
    let state: String = r.get(3)?;
    let decision: Option<String> = r.get(6)?;
    Ok(Campaign {
        id: r.get(0)?,
        name: r.get(1)?,
        spec,
        state: CampaignState::parse(&state).unwrap_or(CampaignState::Failed),
        state_reason: r.get(4)?,
        planned_rounds: r.get(5)?,
        decision: decision.and_then(|d| serde_json::from_str::<Decision>(&d).ok()),
        created_at: r.get(7)?,
        updated_at: r.get(8)?,
    })
}

fn step_row(r: &rusqlite::Row) -> rusqlite::Result<Step> {
    let state: String = r.get(6)?;
    Ok(Step {
        id: r.get(0)?,
        campaign_id: r.get(1)?,
        round: r.get(2)?,
        slot: r.get(3)?,
        side: r.get(4)?,
        r#box: r.get(5)?,
        state: StepState::parse(&state).unwrap_or(StepState::Failed),
        attempts: r.get(7)?,
        owner: r.get(8)?,
        lease_until: r.get(9)?,
        started_at: r.get(10)?,
        finished_at: r.get(11)?,
        run_uuid: r.get(12)?,
        error: r.get(13)?,
        console_tail: r.get(14)?,
    })
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
        let shown = self.path().display().to_string();
        let result = self.writing(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let exists: Option<i64> = tx
                .query_row("SELECT id FROM campaigns WHERE name=?1", [&name], |r| {
                    r.get(0)
                })
                .optional()?;
            if exists.is_some() {
                return Ok(None);
            }
            tx.execute(
                "INSERT INTO campaigns (name, spec_json, state, planned_rounds, created_at,
                                        updated_at)
                 VALUES (?1, ?2, 'running', ?3, ?4, ?4)",
                params![name, json, planned_rounds, now],
            )?;
            let id = tx.last_insert_rowid();
            insert_steps(&tx, id, steps)?;
            tx.commit()?;
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
        self.conn()
            .query_row(
                &format!("SELECT {CAMPAIGN_COLUMNS} FROM campaigns WHERE name=?1"),
                [name],
                campaign_row,
            )
            .optional()
            .with_context(|| format!("cannot read campaign {name:?}"))
    }

    /// Every campaign, oldest first.
    pub fn campaigns(&self) -> anyhow::Result<Vec<Campaign>> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {CAMPAIGN_COLUMNS} FROM campaigns ORDER BY id"
        ))?;
        let rows = stmt.query_map([], campaign_row)?;
        rows.collect::<Result<Vec<_>, _>>()
            .context("cannot read the campaigns")
    }

    /// A campaign's steps in schedule order (round, slot, box).
    pub fn steps(&self, campaign_id: i64) -> anyhow::Result<Vec<Step>> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {STEP_COLUMNS} FROM campaign_steps WHERE campaign_id=?1
             ORDER BY round, box, slot"
        ))?;
        let steps = stmt.query_map([campaign_id], step_row)?;
        Ok(steps.collect::<Result<_, _>>()?)
    }

    /// One step.
    pub fn step(&self, step_id: i64) -> anyhow::Result<Option<Step>> {
        Ok(self
            .conn()
            .query_row(
                &format!("SELECT {STEP_COLUMNS} FROM campaign_steps WHERE id=?1"),
                [step_id],
                step_row,
            )
            .optional()?)
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
        let until = epoch_now() + lease_s;
        self.writing(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let open: Option<String> = tx
                .query_row(
                    "SELECT state FROM campaigns WHERE id=?1",
                    [campaign_id],
                    |r| r.get(0),
                )
                .optional()?;
            if open.as_deref() != Some("running") {
                return Ok(None);
            }
            let id: Option<i64> = tx
                .query_row(
                    "SELECT id FROM campaign_steps
                     WHERE campaign_id=?1 AND state='planned' AND (?2 IS NULL OR box=?2)
                     ORDER BY round, box, slot LIMIT 1",
                    params![campaign_id, box_name],
                    |r| r.get(0),
                )
                .optional()?;
            let Some(id) = id else { return Ok(None) };
            tx.execute(
                "UPDATE campaign_steps SET state='running', attempts=attempts+1, owner=?2,
                        lease_until=?3, started_at=?4, finished_at=NULL
                 WHERE id=?1",
                params![id, owner, until, now],
            )?;
            let step = tx.query_row(
                &format!("SELECT {STEP_COLUMNS} FROM campaign_steps WHERE id=?1"),
                [id],
                step_row,
            )?;
            tx.commit()?;
            Ok(Some(step))
        })
    }

    /// Extends the lease of a step `owner` still runs; false when it no longer owns it.
    pub fn renew_lease(&mut self, step_id: i64, owner: &str, lease_s: f64) -> anyhow::Result<bool> {
        let until = epoch_now() + lease_s;
        self.writing(|c| {
            let n = c.execute(
                "UPDATE campaign_steps SET lease_until=?3
                 WHERE id=?1 AND owner=?2 AND state='running'",
                params![step_id, owner, until],
            )?;
            Ok(n == 1)
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
        let mut record = record.clone();
        if record.uuid.is_none() {
            record.uuid = Some(crate::record::new_uuid());
        }
        self.check_record(&record)?;
        let json = serde_json::to_string(&record)?;
        let now = crate::clock::now_rfc3339();
        self.writing(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let n = tx.execute(
                "UPDATE campaign_steps SET state='done', owner=NULL, lease_until=NULL,
                        finished_at=?3, run_uuid=?4
                 WHERE id=?1 AND owner=?2 AND state='running'",
                params![step_id, owner, now, record.uuid],
            )?;
            if n != 1 {
                return Ok(None);
            }
            let id = super::db::insert_run(&tx, &record, &json)?;
            super::db::write_metrics(&tx, id, &record)?;
            tx.commit()?;
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
        self.writing(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let attempts: Option<u32> = tx
                .query_row(
                    "SELECT attempts FROM campaign_steps
                     WHERE id=?1 AND owner=?2 AND state='running'",
                    params![step_id, owner],
                    |r| r.get(0),
                )
                .optional()?;
            let Some(attempts) = attempts else {
                return Ok(AfterFailure::NotOwned);
            };
            let after = if attempts >= MAX_ATTEMPTS {
                AfterFailure::Failed
            } else {
                AfterFailure::Retry
            };
            let state = match after {
                AfterFailure::Failed => "failed",
                _ => "planned",
            };
            tx.execute(
                "UPDATE campaign_steps SET state=?2, owner=NULL, lease_until=NULL,
                        finished_at=?3, error=?4, console_tail=?5
                 WHERE id=?1",
                params![step_id, state, now, reason, console_tail],
            )?;
            tx.commit()?;
            Ok(after)
        })
    }

    /// Hands a running step back unfinished (its owner was interrupted): planned again, the
    /// attempt not counted. False when `owner` did not own it.
    pub fn release_step(&mut self, step_id: i64, owner: &str) -> anyhow::Result<bool> {
        self.writing(|c| {
            let n = c.execute(
                "UPDATE campaign_steps SET state='planned', owner=NULL, lease_until=NULL,
                        attempts=max(attempts-1, 0), started_at=NULL
                 WHERE id=?1 AND owner=?2 AND state='running'",
                params![step_id, owner],
            )?;
            Ok(n == 1)
        })
    }

    /// Takes back the running steps of a campaign whose owner `is_dead` says is gone or whose
    /// lease has expired: planned again (the attempt not counted unless `count_attempt`).
    /// Returns the steps taken back.
    pub fn reclaim_steps(
        &mut self,
        campaign_id: i64,
        is_dead: &dyn Fn(&str) -> bool,
        count_attempt: bool,
    ) -> anyhow::Result<Vec<Step>> {
        let now = epoch_now();
        let running: Vec<Step> = self
            .steps(campaign_id)?
            .into_iter()
            .filter(|s| s.state == StepState::Running)
            .filter(|s| {
                s.owner.as_deref().is_none_or(is_dead) || s.lease_until.is_some_and(|t| t < now)
            })
            .collect();
        for s in &running {
            let owner = s.owner.clone();
            self.writing(|c| {
                c.execute(
                    "UPDATE campaign_steps SET state='planned', owner=NULL, lease_until=NULL,
                            attempts=CASE WHEN ?3 THEN attempts ELSE max(attempts-1, 0) END,
                            started_at=NULL
                     WHERE id=?1 AND state='running' AND owner IS ?2",
                    params![s.id, owner, count_attempt],
                )
            })?;
        }
        Ok(running)
    }

    /// Adds rounds to a campaign (after the pilot of `--until`) and records the decision.
    pub fn extend_campaign(
        &mut self,
        campaign_id: i64,
        planned_rounds: u32,
        decision: &Decision,
        steps: &[PlannedStep],
    ) -> anyhow::Result<()> {
        let json = serde_json::to_string(decision)?;
        let now = crate::clock::now_rfc3339();
        self.writing(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let decided: Option<String> = tx.query_row(
                "SELECT decision_json FROM campaigns WHERE id=?1",
                [campaign_id],
                |r| r.get(0),
            )?;
            if decided.is_some() {
                // Another process decided first; the decision is made once.
                return Ok(());
            }
            tx.execute(
                "UPDATE campaigns SET planned_rounds=?2, decision_json=?3, updated_at=?4
                 WHERE id=?1",
                params![campaign_id, planned_rounds, json, now],
            )?;
            insert_steps(&tx, campaign_id, steps)?;
            tx.commit()
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
        self.writing(|c| {
            c.execute(
                "UPDATE campaigns SET state=?2, state_reason=?3, updated_at=?4 WHERE id=?1",
                params![campaign_id, state.as_str(), reason, now],
            )
        })?;
        Ok(())
    }

    /// The stored runs of a campaign's done steps, in schedule order, with their ids.
    pub fn campaign_runs(&self, campaign_id: i64) -> anyhow::Result<Vec<(i64, RunRecord)>> {
        let mut stmt = self.conn().prepare(
            "SELECT r.id FROM campaign_steps s JOIN runs r ON r.uuid = s.run_uuid
             WHERE s.campaign_id=?1 AND s.state='done' ORDER BY s.round, s.box, s.slot",
        )?;
        let ids: Vec<i64> = stmt
            .query_map([campaign_id], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let mut out = Vec::new();
        for id in ids {
            if let Some(r) = self.get(id)? {
                out.push((id, r));
            }
        }
        Ok(out)
    }
}

fn insert_steps(
    tx: &rusqlite::Transaction,
    campaign_id: i64,
    steps: &[PlannedStep],
) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare(
        "INSERT INTO campaign_steps (campaign_id, round, slot, side, state)
         VALUES (?1, ?2, ?3, ?4, 'planned')",
    )?;
    for s in steps {
        stmt.execute(params![campaign_id, s.round, s.slot, s.side])?;
    }
    Ok(())
}
