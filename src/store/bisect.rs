//! The bisection tables of the store (schema version 7): a bisection's spec and state, and its
//! path, one row per step, on either database. What the rows mean is `crate::bisect`'s: here
//! they are a name, states and JSON documents, so the store needs nothing of the bisection's
//! types. Each step row names the campaign that measured it; the campaigns themselves are the
//! store's ordinary campaigns (`crate::store::campaign`, which also adds the rounds a step
//! judged unsure needs). Every change is one transaction, so a bisection interrupted at any
//! point (Ctrl-C, a crash, a reboot) is read back as it was after its last finished change.

use super::db::Store;
use super::sql::{params, DbError, Row};
use crate::error::Usage;

/// A bisection as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct BisectRow {
    pub id: i64,
    pub name: String,
    pub spec_json: String,
    /// `running`, `stopping`, `finished`, `stopped`, `failed`.
    pub state: String,
    pub state_reason: Option<String>,
    pub answer_json: Option<String>,
    /// Who runs it now (`Owner` as text), while a process does.
    pub owner: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// One step of a bisection's path as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct BisectStepRow {
    pub seq: u32,
    /// `endpoints`, `step`, `parent`, `revert`.
    pub role: String,
    /// The commit measured (the patched side of its campaign).
    pub commit: String,
    /// The campaign that measures it, once its kernels are built.
    pub campaign: Option<String>,
    /// `building`, `running`, `done`, `skipped`, `failed`.
    pub state: String,
    pub detail_json: String,
    pub updated_at: String,
}

const BISECT_COLUMNS: &str =
    "id, name, spec_json, state, state_reason, answer_json, owner, created_at, updated_at";
const STEP_COLUMNS: &str = "seq, role, commit_id, campaign, state, detail_json, updated_at";

fn bisect_row(r: &Row) -> Result<BisectRow, DbError> {
    Ok(BisectRow {
        id: r.int(0)?,
        name: r.text(1)?,
        spec_json: r.text(2)?,
        state: r.text(3)?,
        state_reason: r.opt_text(4)?,
        answer_json: r.opt_text(5)?,
        owner: r.opt_text(6)?,
        created_at: r.text(7)?,
        updated_at: r.text(8)?,
    })
}

fn step_row(r: &Row) -> Result<BisectStepRow, DbError> {
    Ok(BisectStepRow {
        seq: u32::try_from(r.int(0)?).map_err(|_| DbError::other("a step number is damaged"))?,
        role: r.text(1)?,
        commit: r.text(2)?,
        campaign: r.opt_text(3)?,
        state: r.text(4)?,
        detail_json: r.text(5)?,
        updated_at: r.text(6)?,
    })
}

impl Store {
    /// Stores a new bisection (state `running`, owned by `owner`); refuses a name already
    /// used.
    pub fn create_bisect(
        &mut self,
        name: &str,
        spec_json: &str,
        owner: &str,
    ) -> anyhow::Result<i64> {
        let now = crate::clock::now_rfc3339();
        let shown = self.location().to_string();
        let id = self.writing(|db| {
            db.query_opt(
                "INSERT INTO bisects (name, spec_json, state, owner, created_at, updated_at)
                 VALUES ($1, $2, 'running', $3, $4, $4)
                 ON CONFLICT (name) DO NOTHING RETURNING id",
                params![name, spec_json, owner, now],
            )?
            .map(|r| r.int(0))
            .transpose()
        })?;
        id.ok_or_else(|| {
            Usage(format!(
                "a bisection named {name:?} already exists in store {shown}; choose another name \
                 (or `patchbench bisect resume {name}` to continue it)"
            ))
            .into()
        })
    }

    /// The bisection called `name`.
    pub fn bisect(&self, name: &str) -> anyhow::Result<Option<BisectRow>> {
        self.reading(|db| {
            db.query_opt(
                &format!("SELECT {BISECT_COLUMNS} FROM bisects WHERE name=$1"),
                params![name],
            )?
            .as_ref()
            .map(bisect_row)
            .transpose()
        })
    }

    /// Every bisection, oldest first.
    pub fn bisects(&self) -> anyhow::Result<Vec<BisectRow>> {
        self.reading(|db| {
            db.query(
                &format!("SELECT {BISECT_COLUMNS} FROM bisects ORDER BY id"),
                &[],
            )?
            .iter()
            .map(bisect_row)
            .collect()
        })
    }

    /// A bisection's path, in order.
    pub fn bisect_steps(&self, bisect_id: i64) -> anyhow::Result<Vec<BisectStepRow>> {
        self.reading(|db| {
            db.query(
                &format!("SELECT {STEP_COLUMNS} FROM bisect_steps WHERE bisect_id=$1 ORDER BY seq"),
                params![bisect_id],
            )?
            .iter()
            .map(step_row)
            .collect()
        })
    }

    /// Writes one step of a bisection's path (a new one, or the same `seq` again).
    pub fn put_bisect_step(&mut self, bisect_id: i64, step: &BisectStepRow) -> anyhow::Result<()> {
        let now = crate::clock::now_rfc3339();
        self.writing(|db| {
            db.execute(
                "INSERT INTO bisect_steps (bisect_id, seq, role, commit_id, campaign, state,
                                           detail_json, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                 ON CONFLICT (bisect_id, seq) DO UPDATE SET role=excluded.role,
                     commit_id=excluded.commit_id, campaign=excluded.campaign,
                     state=excluded.state, detail_json=excluded.detail_json,
                     updated_at=excluded.updated_at",
                params![
                    bisect_id,
                    step.seq,
                    step.role.as_str(),
                    step.commit.as_str(),
                    step.campaign.as_deref(),
                    step.state.as_str(),
                    step.detail_json.as_str(),
                    now.as_str()
                ],
            )?;
            db.execute(
                "UPDATE bisects SET updated_at=$2 WHERE id=$1",
                params![bisect_id, now.as_str()],
            )
            .map(|_| ())
        })
    }

    /// Sets a bisection's state, why, and its answer (kept when None).
    pub fn set_bisect_state(
        &mut self,
        bisect_id: i64,
        state: &str,
        reason: Option<&str>,
        answer_json: Option<&str>,
    ) -> anyhow::Result<()> {
        let now = crate::clock::now_rfc3339();
        self.writing(|db| {
            db.execute(
                "UPDATE bisects SET state=$2, state_reason=$3,
                     answer_json=coalesce($4, answer_json), updated_at=$5 WHERE id=$1",
                params![bisect_id, state, reason, answer_json, now],
            )
            .map(|_| ())
        })
    }

    /// Sets who runs a bisection now (None: nobody).
    pub fn set_bisect_owner(&mut self, bisect_id: i64, owner: Option<&str>) -> anyhow::Result<()> {
        self.writing(|db| {
            db.execute(
                "UPDATE bisects SET owner=$2 WHERE id=$1",
                params![bisect_id, owner],
            )
            .map(|_| ())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Access, Location};

    #[test]
    fn a_bisection_and_its_path_round_trip_and_names_are_unique() {
        let d = tempfile::tempdir().unwrap();
        let loc = Location::File(d.path().join("s.db"));
        let mut store = Store::open(&loc, Access::Create, None).unwrap();
        let id = store.create_bisect("b", "{\"x\":1}", "me").unwrap();
        let again = store
            .create_bisect("b", "{}", "me")
            .unwrap_err()
            .to_string();
        assert!(again.contains("already exists"), "{again}");
        let mut step = BisectStepRow {
            seq: 1,
            role: "endpoints".into(),
            commit: "abc".into(),
            campaign: None,
            state: "building".into(),
            detail_json: "{}".into(),
            updated_at: String::new(),
        };
        store.put_bisect_step(id, &step).unwrap();
        step.campaign = Some("b.01-endpoints".into());
        step.state = "done".into();
        store.put_bisect_step(id, &step).unwrap();
        let steps = store.bisect_steps(id).unwrap();
        assert_eq!(steps.len(), 1);
        assert_eq!(steps[0].campaign.as_deref(), Some("b.01-endpoints"));
        assert_eq!(steps[0].state, "done");
        store
            .set_bisect_state(id, "finished", Some("found"), Some("{\"a\":2}"))
            .unwrap();
        store.set_bisect_state(id, "finished", None, None).unwrap();
        let b = store.bisect("b").unwrap().unwrap();
        assert_eq!(b.answer_json.as_deref(), Some("{\"a\":2}"));
        assert_eq!((b.state.as_str(), b.state_reason), ("finished", None));
        assert_eq!(store.bisects().unwrap().len(), 1);
        assert!(store.bisect("nope").unwrap().is_none());
        // A bad role is refused by the schema.
        step.seq = 2;
        step.role = "other".into();
        assert!(store.put_bisect_step(id, &step).is_err());
    }
}
