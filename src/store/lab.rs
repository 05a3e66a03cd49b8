//! The lab's side of the store: the boxes agents register (fingerprint, tags, executors), a
//! box taking one of a lab campaign's places (`#1`, `#2`, ...: from then on that place's rounds
//! are the box's, so a box runs both sides of its rounds and never only one), leases that ran
//! out handed back to the queue, and a run an agent kept in its spool (the server was away
//! when the step ended) stored once. Every change is one transaction, under the campaign's
//! row lock where boxes could race.

use super::db::Store;
use super::sql::{params, DbError, Row};
use crate::record::campaign::plan::is_free_place;
use crate::record::campaign::state::{Step, StepState, MAX_ATTEMPTS};
use crate::record::RunRecord;

/// The PostgreSQL advisory lock (xor the campaign's id) held while a box takes a place.
const PLACE_LOCK: i64 = 0x5042_6368_0002 << 16;

/// A box as its agent registered it.
#[derive(Debug, Clone, PartialEq)]
pub struct LabBox {
    pub name: String,
    pub fingerprint_json: String,
    pub tags: Vec<String>,
    pub executors: Vec<String>,
    /// The agent that registered or last claimed for it (`host:pid:boot`).
    pub agent: Option<String>,
    /// Seconds since the epoch, by the database's clock.
    pub first_seen: f64,
    pub last_seen: f64,
}

/// What releasing a box's place did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Released {
    /// The free place the box's rounds not begun went to (`#N`).
    pub place: String,
    pub rounds_moved: usize,
    /// The planned steps of rounds the box left half done, now failed.
    pub steps_failed: usize,
}

/// What became of a spooled run offered to the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spooled {
    /// Stored as this run, and its step marked done.
    Stored(i64),
    /// Already stored (an earlier upload committed before the spool forgot it).
    AlreadyStored,
    /// The step was done by another run meanwhile (re-run after the lease ran out); this one
    /// is not stored, so the step keeps exactly one.
    DoneByAnother,
    /// The step is no longer in the store (its campaign was removed).
    Gone,
}

fn split(list: &str) -> Vec<String> {
    list.split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn box_row(r: &Row) -> Result<LabBox, DbError> {
    Ok(LabBox {
        name: r.text(0)?,
        fingerprint_json: r.text(1)?,
        tags: split(&r.text(2)?),
        executors: split(&r.text(3)?),
        agent: r.opt_text(4)?,
        first_seen: r.real(5)?,
        last_seen: r.real(6)?,
    })
}

impl Store {
    /// Registers (or updates) a box: its fingerprint, tags and executors, seen now.
    pub fn register_box(
        &mut self,
        name: &str,
        fingerprint_json: &str,
        tags: &[String],
        executors: &[String],
        agent: &str,
    ) -> anyhow::Result<()> {
        let tags = tags.join(",");
        let executors = executors.join(",");
        self.writing(|db| {
            let now = db.dialect().now_epoch();
            db.execute(
                &format!(
                    "INSERT INTO boxes (name, fingerprint_json, tags, executors, agent,
                                        first_seen, last_seen)
                     VALUES ($1, $2, $3, $4, $5, {now}, {now})
                     ON CONFLICT (name) DO UPDATE SET fingerprint_json=excluded.fingerprint_json,
                         tags=excluded.tags, executors=excluded.executors,
                         agent=excluded.agent, last_seen=excluded.last_seen"
                ),
                params![name, fingerprint_json, tags, executors, agent],
            )?;
            Ok(())
        })
    }

    /// Marks a box seen now (an agent's heartbeat while it waits for work).
    pub fn touch_box(&mut self, name: &str) -> anyhow::Result<()> {
        self.writing(|db| {
            let sql = format!(
                "UPDATE boxes SET last_seen={} WHERE name=$1",
                db.dialect().now_epoch()
            );
            db.execute(&sql, params![name])?;
            Ok(())
        })
    }

    /// Every registered box, by name.
    pub fn boxes(&self) -> anyhow::Result<Vec<LabBox>> {
        self.reading(|db| {
            db.query(
                "SELECT name, fingerprint_json, tags, executors, agent, first_seen, last_seen
                 FROM boxes ORDER BY name",
                &[],
            )?
            .iter()
            .map(box_row)
            .collect()
        })
    }

    /// The box `name` takes a place in a lab campaign, unless it has one: true when it has
    /// one now, false when every place is taken by other boxes.
    pub fn take_place(&mut self, campaign_id: i64, name: &str) -> anyhow::Result<bool> {
        self.writing(|db| {
            // Places are taken one campaign at a time: two boxes never take the same place,
            // and a box never takes two. On PostgreSQL an advisory lock of the transaction
            // (it needs no grant); SQLite's write transaction already serialises.
            if db.dialect() == super::sql::Dialect::Postgres {
                db.execute(
                    "SELECT pg_advisory_xact_lock($1)",
                    params![PLACE_LOCK ^ campaign_id],
                )?;
            }
            let mine = db.query_opt(
                "SELECT 1 FROM campaign_steps WHERE campaign_id=$1 AND box=$2 LIMIT 1",
                params![campaign_id, name],
            )?;
            if mine.is_some() {
                return Ok(true);
            }
            let places = db.query(
                "SELECT DISTINCT box FROM campaign_steps WHERE campaign_id=$1 ORDER BY box",
                params![campaign_id],
            )?;
            let free = places
                .iter()
                .map(|r| r.text(0))
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .find(|b| is_free_place(b));
            let Some(place) = free else {
                return Ok(false);
            };
            db.execute(
                "UPDATE campaign_steps SET box=$3 WHERE campaign_id=$1 AND box=$2",
                params![campaign_id, place, name],
            )?;
            Ok(true)
        })
    }

    /// Hands back the running steps of a campaign whose lease ran out (by the database's
    /// clock): planned again, the attempt counted, so a step whose agents are lost twice is
    /// recorded as failed rather than handed round for ever. Returns the steps handed back
    /// or failed.
    pub fn expire_leases(&mut self, campaign_id: i64) -> anyhow::Result<Vec<Step>> {
        let now_text = crate::clock::now_rfc3339();
        let running: Vec<Step> = self
            .steps(campaign_id)?
            .into_iter()
            .filter(|s| s.state == StepState::Running && s.lease_until.is_some())
            .collect();
        if running.is_empty() {
            return Ok(Vec::new());
        }
        self.writing(|db| {
            let now = db
                .query_one(&format!("SELECT {}", db.dialect().now_epoch()), &[])?
                .real(0)?;
            let mut expired = Vec::new();
            for s in running {
                if s.lease_until.is_none_or(|t| t >= now) {
                    continue;
                }
                let owner = s.owner.clone().unwrap_or_default();
                let n = if s.attempts >= MAX_ATTEMPTS {
                    db.execute(
                        "UPDATE campaign_steps SET state='failed', owner=NULL, lease_until=NULL,
                                finished_at=$3,
                                error='its agent stopped renewing the lease (killed, or its box \
                                       or network lost) on every attempt'
                         WHERE id=$1 AND state='running' AND coalesce(owner, '')=$2",
                        params![s.id, owner, now_text.as_str()],
                    )?
                } else {
                    db.execute(
                        "UPDATE campaign_steps SET state='planned', owner=NULL, lease_until=NULL,
                                started_at=NULL
                         WHERE id=$1 AND state='running' AND coalesce(owner, '')=$2",
                        params![s.id, owner],
                    )?
                };
                if n == 1 {
                    expired.push(s);
                }
            }
            Ok(expired)
        })
    }

    /// Stores a run an agent kept in its spool for step `step_id`, and marks the step done,
    /// unless the step already has its run. Whoever runs the step now (after the lease ran
    /// out) then finds it done, and its own run is not stored: one run per step.
    pub fn store_spooled(&mut self, step_id: i64, record: &RunRecord) -> anyhow::Result<Spooled> {
        let mut record = super::runs::with_uuid(record);
        self.check_record(&record)?;
        let now = crate::clock::now_rfc3339();
        self.writing_runs(|db, cache| {
            let sql = format!(
                "SELECT state, run_uuid FROM campaign_steps WHERE id=$1 {}",
                db.dialect().for_update()
            );
            let Some(row) = db.query_opt(&sql, params![step_id])? else {
                return Ok(Spooled::Gone);
            };
            if row.text(0)? == StepState::Done.as_str() {
                return Ok(if row.opt_text(1)? == record.uuid {
                    Spooled::AlreadyStored
                } else {
                    Spooled::DoneByAnother
                });
            }
            db.execute(
                "UPDATE campaign_steps SET state='done', owner=NULL, lease_until=NULL,
                        finished_at=$2, run_uuid=$3, error=NULL
                 WHERE id=$1",
                params![step_id, now, record.uuid.as_deref()],
            )?;
            let (id, _) = super::runs::insert_run(db, cache, &mut record)?;
            Ok(Spooled::Stored(id))
        })
    }

    /// Frees the place of box `name` in a lab campaign (the box is gone for good): its rounds
    /// with no step begun move to a free place (`#N`) that another box takes; the planned
    /// steps of rounds it left half done are recorded as failed (a round's sides are paired
    /// within one box, so another box cannot finish them). Refused while the box runs a step.
    pub fn release_place(&mut self, campaign_id: i64, name: &str) -> anyhow::Result<Released> {
        let steps = self.steps(campaign_id)?;
        let mine: Vec<&Step> = steps.iter().filter(|s| s.r#box == name).collect();
        if mine.is_empty() {
            let boxes: Vec<&str> = steps
                .iter()
                .map(|s| s.r#box.as_str())
                .filter(|b| !is_free_place(b))
                .fold(Vec::new(), |mut all, b| {
                    if !all.contains(&b) {
                        all.push(b);
                    }
                    all
                });
            return Err(crate::error::Usage(format!(
                "no box {name:?} in this campaign (its boxes: {})",
                if boxes.is_empty() {
                    "none yet".to_string()
                } else {
                    boxes.join(", ")
                }
            ))
            .into());
        }
        if mine.iter().any(|s| s.state == StepState::Running) {
            return Err(crate::error::Usage(format!(
                "box {name} runs a step of this campaign now; stop its agent first (or wait for \
                 the lease to run out)"
            ))
            .into());
        }
        let begun: std::collections::BTreeSet<u32> = mine
            .iter()
            .filter(|s| s.state != StepState::Planned)
            .map(|s| s.round)
            .collect();
        let used: std::collections::BTreeSet<&str> =
            steps.iter().map(|s| s.r#box.as_str()).collect();
        let place = (1..)
            .map(|k| format!("#{k}"))
            .find(|p| !used.contains(p.as_str()))
            .unwrap_or_default();
        let now = crate::clock::now_rfc3339();
        let (mut moved, mut failed) = (std::collections::BTreeSet::new(), 0);
        self.writing(|db| {
            for s in mine.iter().filter(|s| s.state == StepState::Planned) {
                if begun.contains(&s.round) {
                    failed += db.execute(
                        "UPDATE campaign_steps SET state='failed', finished_at=$2,
                                error='its box was released (gone) before this side of the round'
                         WHERE id=$1 AND state='planned'",
                        params![s.id, now.as_str()],
                    )?;
                } else {
                    db.execute(
                        "UPDATE campaign_steps SET box=$2 WHERE id=$1 AND state='planned'",
                        params![s.id, place.as_str()],
                    )?;
                    moved.insert(s.round);
                }
            }
            Ok(())
        })?;
        Ok(Released {
            place,
            rounds_moved: moved.len(),
            steps_failed: failed as usize,
        })
    }
}
