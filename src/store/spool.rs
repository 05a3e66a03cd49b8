//! An agent's spool: a small SQLite file on the box where a finished step's run waits while the
//! lab's store cannot be reached, until it is uploaded ([`Store::store_spooled`] stores it
//! once, whoever else ran the step meanwhile). A run is spooled in one transaction and
//! forgotten only after the store has it, so a crash in between uploads it again, which the
//! store recognises by the run's UUID. Each run names the store it is for (shown without a
//! password), so a spool shared by several agents, or kept across a change of store, never
//! uploads a run into another store.

use super::db::Store;
use super::lab::Spooled;
use super::sql::{params, Db, DbError};
use super::sqlite::SqliteDb;
use crate::record::RunRecord;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A spooled run.
#[derive(Debug, Clone)]
pub struct SpooledRun {
    pub uuid: String,
    pub step_id: i64,
    pub campaign: String,
    pub record: RunRecord,
}

/// The spool file.
pub struct Spool {
    db: SqliteDb,
    path: PathBuf,
}

/// `$XDG_DATA_HOME/patchbench/spool.db`, else `~/.local/share/patchbench/spool.db`.
pub fn default_path() -> anyhow::Result<PathBuf> {
    if let Some(d) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(d).join("patchbench/spool.db"));
    }
    match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        Some(h) => Ok(PathBuf::from(h).join(".local/share/patchbench/spool.db")),
        None => crate::error::usage("no $HOME to keep the agent's spool in: give --spool FILE"),
    }
}

impl Spool {
    /// Opens (creating) the spool at `path`; its directory is made private (0700) if new.
    pub fn open(path: &Path) -> anyhow::Result<Spool> {
        let shown = path.display();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.exists() {
                use std::os::unix::fs::DirBuilderExt;
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(dir)
                    .map_err(|e| {
                        anyhow::anyhow!("spool {shown}: cannot make its directory: {e}")
                    })?;
            }
        }
        let mut db = super::sqlite::open_plain(path, Duration::from_secs(30))
            .map_err(|e| anyhow::anyhow!("spool {shown}: cannot open it: {e}"))?;
        db.batch(
            "CREATE TABLE IF NOT EXISTS spooled (
                 uuid        TEXT PRIMARY KEY,
                 store       TEXT NOT NULL,
                 step_id     INTEGER NOT NULL,
                 campaign    TEXT NOT NULL,
                 record_json TEXT NOT NULL,
                 kept_at     TEXT NOT NULL
             );",
        )
        .map_err(|e| anyhow::anyhow!("spool {shown}: {e}"))?;
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
        Ok(Spool {
            db,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Keeps a step's run for `store` (as [`Store::location`] shows it).
    pub fn keep(
        &mut self,
        store: &str,
        step_id: i64,
        campaign: &str,
        record: &RunRecord,
    ) -> anyhow::Result<()> {
        let uuid = record
            .uuid
            .clone()
            .ok_or_else(|| anyhow::anyhow!("a campaign step's run has no UUID"))?;
        let json = serde_json::to_string(record)?;
        self.db
            .execute(
                "INSERT INTO spooled (uuid, store, step_id, campaign, record_json, kept_at)
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (uuid) DO NOTHING",
                params![
                    uuid,
                    store,
                    step_id,
                    campaign,
                    json,
                    crate::clock::now_rfc3339()
                ],
            )
            .map_err(|e| {
                anyhow::anyhow!("spool {}: cannot keep the run: {e}", self.path.display())
            })?;
        Ok(())
    }

    /// The runs waiting for `store`, oldest first.
    pub fn waiting(&mut self, store: &str) -> anyhow::Result<Vec<SpooledRun>> {
        let rows = self
            .db
            .query(
                "SELECT uuid, step_id, campaign, record_json FROM spooled WHERE store=$1
                 ORDER BY kept_at, uuid",
                params![store],
            )
            .map_err(|e| self.failed(e))?;
        let mut out = Vec::new();
        for row in rows {
            let read = || -> Result<_, DbError> {
                Ok((row.text(0)?, row.int(1)?, row.text(2)?, row.text(3)?))
            };
            let (uuid, step_id, campaign, json) = read().map_err(|e| self.failed(e))?;
            let record: RunRecord = serde_json::from_str(&json).map_err(|e| {
                anyhow::anyhow!("spool {}: run {uuid} is damaged: {e}", self.path.display())
            })?;
            out.push(SpooledRun {
                uuid,
                step_id,
                campaign,
                record,
            });
        }
        Ok(out)
    }

    /// How many runs wait for `store`.
    pub fn count(&mut self, store: &str) -> anyhow::Result<usize> {
        let n = self
            .db
            .query_one(
                "SELECT count(*) FROM spooled WHERE store=$1",
                params![store],
            )
            .and_then(|r| r.int(0))
            .map_err(|e| self.failed(e))?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// Forgets a run the store now has.
    pub fn forget(&mut self, uuid: &str) -> anyhow::Result<()> {
        self.db
            .execute("DELETE FROM spooled WHERE uuid=$1", params![uuid])
            .map_err(|e| self.failed(e))?;
        Ok(())
    }

    /// A failed call on the spool, naming it.
    fn failed(&self, e: DbError) -> anyhow::Error {
        anyhow::anyhow!("spool {}: {e}", self.path.display())
    }

    /// Uploads every run waiting for `store`; returns what became of each (the first error
    /// stops it, the rest wait).
    pub fn upload(&mut self, store: &mut Store) -> anyhow::Result<Vec<(SpooledRun, Spooled)>> {
        let shown = store.location().shown();
        let mut done = Vec::new();
        for run in self.waiting(&shown)? {
            let what = store.store_spooled(run.step_id, &run.record)?;
            self.forget(&run.uuid)?;
            done.push((run, what));
        }
        Ok(done)
    }
}
