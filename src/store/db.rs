//! The SQLite result store: opening (with a clear message for a file that is not a store),
//! versioned schema migrations, and the queries the commands need.
//!
//! Layout (schema version 1): `runs` holds one row per run with the whole [`RunRecord`] as
//! JSON (the source of truth), and `metrics` one row per (run, metric key) for SQL users.
//! The database runs in WAL mode with a busy timeout, and every write is one `BEGIN IMMEDIATE`
//! transaction, so two patchbench processes can write one store at once.

use crate::error::Usage;
use crate::record::{Direction, RunRecord};
use anyhow::Context;
use rusqlite::{params, Connection, ErrorCode, OptionalExtension, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `PRAGMA application_id` of a patchbench store ("PBch").
const APPLICATION_ID: i64 = 0x5042_6368;

/// Schema migrations; entry i moves `user_version` from i to i + 1.
const MIGRATIONS: &[&str] = &[r#"
CREATE TABLE runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    label       TEXT,
    kind        TEXT NOT NULL,
    source      TEXT,
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    host        TEXT NOT NULL,
    kernel      TEXT NOT NULL,
    incomplete  INTEGER NOT NULL,
    record_json TEXT NOT NULL
);
CREATE INDEX runs_by_label ON runs(label);
CREATE TABLE metrics (
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    key          TEXT NOT NULL,
    name         TEXT NOT NULL,
    params_json  TEXT NOT NULL,
    title        TEXT NOT NULL,
    unit         TEXT NOT NULL,
    direction    TEXT NOT NULL,
    value        REAL NOT NULL,
    samples_json TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
"#];

/// An open result store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// One line of `patchbench runs`.
#[derive(Debug, Clone)]
pub struct RunSummary {
    pub id: i64,
    pub label: Option<String>,
    pub kind: String,
    pub started_at: String,
    pub host: String,
    pub kernel: String,
    pub incomplete: bool,
    pub metrics: usize,
    pub tests: usize,
}

impl Store {
    /// Opens (and, with `create`, creates) the store at `path`, migrating its schema.
    pub fn open(path: &Path, create: bool) -> anyhow::Result<Store> {
        let shown = path.display();
        if !path.exists() {
            if !create {
                return Err(Usage(format!(
                    "store {shown} does not exist; runs are saved there by `patchbench run` or \
                     `patchbench import`, or point --store / PATCHBENCH_STORE at another"
                ))
                .into());
            }
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).with_context(|| {
                    format!("cannot create the store directory {}", dir.display())
                })?;
            }
        }
        let conn =
            Connection::open(path).map_err(|e| Usage(format!("cannot open store {shown}: {e}")))?;
        let store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store.prepare().map_err(|e| {
            if e.downcast_ref::<Usage>().is_some() {
                return e;
            }
            match e.downcast_ref::<rusqlite::Error>() {
                Some(sql) if is_lock(sql) || is_full(sql, &store.path) => store.explain(sql),
                _ => Usage(format!(
                    "{shown} is not a readable patchbench store (corrupt or not a database: {e}); \
                     move it aside or give another --store"
                ))
                .into(),
            }
        })?;
        Ok(store)
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Says what a failed database call means for this store: locked by another process
    /// (and which, where /proc/locks tells), a full filesystem, or the error itself, always
    /// with the store's path.
    pub fn explain(&self, e: &rusqlite::Error) -> anyhow::Error {
        let shown = self.path.display();
        match e {
            _ if is_lock(e) => {
                let holders = super::locks::holders(&self.path);
                let who = if holders.is_empty() {
                    "another process".to_string()
                } else {
                    holders.join(", ")
                };
                anyhow::anyhow!(
                    "store {shown} is locked by {who}; gave up after {:.1} s; wait for it to \
                     finish or give another --store",
                    lock_wait().as_secs_f64()
                )
            }
            _ if is_full(e, &self.path) => anyhow::anyhow!(
                "store {shown}: the filesystem is full ({e}); free some space there or give \
                 another --store"
            ),
            _ => anyhow::anyhow!("store {shown}: {e}"),
        }
    }

    /// Runs a write and explains its failure.
    fn writing<T>(
        &mut self,
        f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>,
    ) -> anyhow::Result<T> {
        f(&mut self.conn).map_err(|e| self.explain(&e))
    }

    fn prepare(&self) -> anyhow::Result<()> {
        let c = &self.conn;
        c.busy_timeout(lock_wait())?;
        let check: String = c.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
        if check != "ok" {
            anyhow::bail!("integrity check failed: {check}");
        }
        let app: i64 = c.query_row("PRAGMA application_id", [], |r| r.get(0))?;
        let tables: i64 = c.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
        if app != APPLICATION_ID && (app != 0 || tables > 0) {
            return Err(Usage(format!(
                "{} is an SQLite database but not a patchbench store; give another --store",
                self.path.display()
            ))
            .into());
        }
        let mode: String = c.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            anyhow::bail!("cannot switch the store to WAL mode (got {mode})");
        }
        c.execute_batch("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;")?;
        self.migrate()
    }

    fn migrate(&self) -> anyhow::Result<()> {
        let version: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version as usize > MIGRATIONS.len() {
            return Err(Usage(format!(
                "store {} has schema version {version}, newer than this patchbench reads ({}); \
                 use a newer patchbench",
                self.path.display(),
                MIGRATIONS.len()
            ))
            .into());
        }
        if version as usize == MIGRATIONS.len() {
            return Ok(());
        }
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        // Re-read under the write lock: another process may have migrated meanwhile.
        let mut version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        while (version as usize) < MIGRATIONS.len() {
            tx.execute_batch(MIGRATIONS[version as usize])?;
            version += 1;
            tx.execute_batch(&format!(
                "PRAGMA user_version={version}; PRAGMA application_id={APPLICATION_ID};"
            ))?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Inserts a run with its metrics in one transaction; returns its id.
    pub fn insert(&mut self, record: &RunRecord) -> anyhow::Result<i64> {
        let json = serde_json::to_string(record)?;
        self.writing(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let id = insert_run(&tx, record, &json)?;
            write_metrics(&tx, id, record)?;
            tx.commit()?;
            Ok(id)
        })
    }

    /// Inserts several runs in one transaction: all are stored or none.
    pub fn insert_all(&mut self, records: &[RunRecord]) -> anyhow::Result<Vec<i64>> {
        let json: Vec<String> = records
            .iter()
            .map(serde_json::to_string)
            .collect::<Result<_, _>>()?;
        self.writing(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut ids = Vec::new();
            for (r, j) in records.iter().zip(&json) {
                let id = insert_run(&tx, r, j)?;
                write_metrics(&tx, id, r)?;
                ids.push(id);
            }
            tx.commit()?;
            Ok(ids)
        })
    }

    /// Replaces a run's record and metrics in one transaction.
    pub fn update(&mut self, id: i64, record: &RunRecord) -> anyhow::Result<()> {
        let json = serde_json::to_string(record)?;
        self.writing(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute(
                "UPDATE runs SET label=?2, finished_at=?3, incomplete=?4, record_json=?5 \
                 WHERE id=?1",
                params![
                    id,
                    record.label,
                    record.finished_at,
                    record.incomplete,
                    json
                ],
            )?;
            tx.execute("DELETE FROM metrics WHERE run_id=?1", [id])?;
            write_metrics(&tx, id, record)?;
            tx.commit()
        })
    }

    /// Every run, oldest first (optionally only one label's).
    pub fn list(&self, label: Option<&str>) -> anyhow::Result<Vec<RunSummary>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, label, kind, started_at, host, kernel, incomplete,
                    (SELECT count(*) FROM metrics m WHERE m.run_id = runs.id),
                    (SELECT count(DISTINCT json_extract(params_json, '$.test')) FROM metrics m
                      WHERE m.run_id = runs.id)
             FROM runs WHERE (?1 IS NULL OR label = ?1) ORDER BY id",
        )?;
        let rows = stmt.query_map([label], |r| {
            Ok(RunSummary {
                id: r.get(0)?,
                label: r.get(1)?,
                kind: r.get(2)?,
                started_at: r.get(3)?,
                host: r.get(4)?,
                kernel: r.get(5)?,
                incomplete: r.get(6)?,
                metrics: r.get::<_, i64>(7)? as usize,
                tests: r.get::<_, i64>(8)? as usize,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The record of one run, or None.
    pub fn get(&self, id: i64) -> anyhow::Result<Option<RunRecord>> {
        let json: Option<String> = self
            .conn
            .query_row("SELECT record_json FROM runs WHERE id=?1", [id], |r| {
                r.get(0)
            })
            .optional()?;
        match json {
            None => Ok(None),
            Some(j) => Ok(Some(RunRecord::from_json(&j).with_context(|| {
                format!("run {id} in {} is damaged", self.path.display())
            })?)),
        }
    }

    /// Ids of the runs with this label, oldest first.
    pub fn ids_with_label(&self, label: &str) -> anyhow::Result<Vec<i64>> {
        let mut stmt = self
            .conn
            .prepare("SELECT id FROM runs WHERE label=?1 ORDER BY id")?;
        let ids = stmt.query_map([label], |r| r.get(0))?;
        Ok(ids.collect::<Result<_, _>>()?)
    }

    /// Runs `f` while holding the store's write lock (a testing aid: other writers wait).
    pub fn with_write_lock<T>(
        &mut self,
        f: impl FnOnce() -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        let path = self.path.clone();
        let tx = match self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
        {
            Ok(tx) => tx,
            Err(e) => return Err(anyhow::anyhow!("store {}: {e}", path.display())),
        };
        let out = f()?;
        tx.commit()?;
        Ok(out)
    }

    /// Deletes a run and its metrics; false when there was no such run.
    pub fn delete(&mut self, id: i64) -> anyhow::Result<bool> {
        self.writing(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute("DELETE FROM metrics WHERE run_id=?1", [id])?;
            let n = tx.execute("DELETE FROM runs WHERE id=?1", [id])?;
            tx.commit()?;
            Ok(n > 0)
        })
    }
}

fn insert_run(tx: &rusqlite::Transaction, record: &RunRecord, json: &str) -> rusqlite::Result<i64> {
    tx.execute(
        "INSERT INTO runs (label, kind, source, started_at, finished_at, host, kernel,
                           incomplete, record_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            record.label,
            record.kind.as_str(),
            record.source,
            record.started_at,
            record.finished_at,
            record.system.hostname,
            record.system.kernel_release,
            record.incomplete,
            json
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

fn write_metrics(tx: &rusqlite::Transaction, id: i64, record: &RunRecord) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare(
        "INSERT OR REPLACE INTO metrics
           (run_id, key, name, params_json, title, unit, direction, value, samples_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?;
    for m in &record.metrics {
        let direction = match m.direction {
            Direction::HigherIsBetter => "higher-is-better",
            Direction::LowerIsBetter => "lower-is-better",
        };
        stmt.execute(params![
            id,
            m.key(),
            m.name,
            serde_json::to_string(&m.params).unwrap_or_default(),
            m.title,
            m.unit,
            direction,
            m.value,
            serde_json::to_string(&m.samples).unwrap_or_default()
        ])?;
    }
    Ok(())
}

/// How long a write waits for another process's lock: 15 s, or `PATCHBENCH_LOCK_WAIT_MS`
/// (for tests).
pub fn lock_wait() -> Duration {
    std::env::var("PATCHBENCH_LOCK_WAIT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_millis)
        .unwrap_or(Duration::from_secs(15))
}

/// A lock held by another connection that outlasted the wait.
fn is_lock(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// A write refused for lack of space: SQLITE_FULL, or an I/O error while the store's
/// filesystem has no free block.
fn is_full(e: &rusqlite::Error, path: &Path) -> bool {
    if e.sqlite_error_code() == Some(ErrorCode::DiskFull) {
        return true;
    }
    let io = matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::SystemIoFailure | ErrorCode::CannotOpen)
    );
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    io && nix::sys::statvfs::statvfs(dir).is_ok_and(|v| v.blocks_available() == 0)
}
