//! The SQLite result store: opening (with a clear message for a file that is not a store),
//! versioned schema migrations, and the queries the commands need.
//!
//! Layout (schema version 2): `runs` holds one row per run with the whole [`RunRecord`] as
//! JSON (the source of truth), and `metrics` one row per (run, metric key) for SQL users.
//! The database runs in WAL mode with a busy timeout, and every write is one `BEGIN IMMEDIATE`
//! transaction, so two patchbench processes can write one store at once.
//!
//! Every record is checked against `crate::record::domain` before it is written, and the
//! `metrics` table repeats those rules as CHECK constraints (version 2). A store written by an
//! earlier build may hold values outside them (`inf` read back as `null`, zero scores):
//! migrating to version 2 moves such metric rows to `metrics_refused` (kept, not deleted), and
//! reading a run leaves out, with a warning naming each, the results whose numbers are bad, so
//! the run's other results and the label's other runs stay usable.

use crate::error::Usage;
use crate::record::aim7::Aim7Point;
use crate::record::model::ModelPoint;
use crate::record::will_it_scale::ScalePoint;
use crate::record::{Direction, IndexScore, Metric, RunRecord, TestResult};
use anyhow::Context;
use rusqlite::{params, Connection, ErrorCode, OptionalExtension, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `PRAGMA application_id` of a patchbench store ("PBch").
const APPLICATION_ID: i64 = 0x5042_6368;

/// Schema migrations; entry i moves `user_version` from i to i + 1.
const MIGRATIONS: &[&str] = &[
    r#"
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
"#,
    // Version 2: the metric domains of crate::record::domain as CHECK constraints (a test
    // below keeps the two in step). Rows of an earlier build that break them move to
    // metrics_refused.
    r#"
CREATE TABLE metrics_checked (
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    key          TEXT NOT NULL,
    name         TEXT NOT NULL,
    params_json  TEXT NOT NULL CHECK (json_valid(params_json)
                                      AND json_type(params_json) = 'object'),
    title        TEXT NOT NULL,
    unit         TEXT NOT NULL,
    direction    TEXT NOT NULL CHECK (direction IN ('higher-is-better', 'lower-is-better')),
    value        REAL NOT NULL CHECK (abs(value) <= 1.7976931348623157e308),
    samples_json TEXT NOT NULL CHECK (json_valid(samples_json)
                                      AND json_type(samples_json) = 'array'
                                      AND instr(samples_json, 'null') = 0),
    PRIMARY KEY (run_id, key),
    CHECK (value > 0 OR name NOT IN ('unixbench.score', 'unixbench.index',
        'aim7.jobs-per-min', 'aim7.jobs-per-min-per-task', 'aim7.real',
        'will-it-scale.per_process_ops', 'will-it-scale.per_thread_ops')),
    CHECK (CASE WHEN name = 'aim7.jti' THEN value BETWEEN -100 AND 100 ELSE value >= 0 END),
    CHECK (json_extract(params_json, '$.tasks') IS NULL
        OR (json_extract(params_json, '$.tasks') NOT GLOB '*[^0-9]*'
            AND CAST(json_extract(params_json, '$.tasks') AS INTEGER) BETWEEN 1 AND 4194304)),
    CHECK (json_extract(params_json, '$.copies') IS NULL
        OR (json_extract(params_json, '$.copies') NOT GLOB '*[^0-9]*'
            AND CAST(json_extract(params_json, '$.copies') AS INTEGER) BETWEEN 1 AND 4194304)),
    CHECK (json_extract(params_json, '$.load') IS NULL
        OR (json_extract(params_json, '$.load') NOT GLOB '*[^0-9]*'
            AND CAST(json_extract(params_json, '$.load') AS INTEGER) BETWEEN 1 AND 4194304))
);
INSERT OR IGNORE INTO metrics_checked SELECT * FROM metrics;
CREATE TABLE metrics_refused AS SELECT * FROM metrics m WHERE NOT EXISTS
    (SELECT 1 FROM metrics_checked c WHERE c.run_id = m.run_id AND c.key = m.key);
DROP TABLE metrics;
ALTER TABLE metrics_checked RENAME TO metrics;
"#,
    // Version 3: every run has a UUID (runs of earlier builds get a random one here), and
    // campaigns keep their plan and the state of every step (`crate::campaign`).
    r#"
ALTER TABLE runs ADD COLUMN uuid TEXT;
UPDATE runs SET uuid = lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' ||
    substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) ||
    substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)));
CREATE UNIQUE INDEX runs_by_uuid ON runs(uuid);
CREATE TABLE campaigns (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    name           TEXT NOT NULL UNIQUE,
    spec_json      TEXT NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('running', 'stopping', 'finished', 'stopped',
                                                  'failed')),
    state_reason   TEXT,
    planned_rounds INTEGER NOT NULL CHECK (planned_rounds >= 1),
    decision_json  TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE TABLE campaign_steps (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    campaign_id  INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    round        INTEGER NOT NULL CHECK (round >= 1),
    slot         INTEGER NOT NULL CHECK (slot >= 0),
    side         TEXT NOT NULL,
    box          TEXT NOT NULL DEFAULT '',
    state        TEXT NOT NULL CHECK (state IN ('planned', 'running', 'done', 'failed')),
    attempts     INTEGER NOT NULL DEFAULT 0,
    owner        TEXT,
    lease_until  REAL,
    started_at   TEXT,
    finished_at  TEXT,
    run_uuid     TEXT,
    error        TEXT,
    console_tail TEXT,
    UNIQUE (campaign_id, round, side, box)
);
CREATE INDEX campaign_steps_by_state ON campaign_steps(campaign_id, state, round, slot);
"#,
];

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
        store.prepare(create).map_err(|e| {
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

    /// The connection, for the store's other query modules.
    pub(super) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Runs a write and explains its failure.
    pub(super) fn writing<T>(
        &mut self,
        f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>,
    ) -> anyhow::Result<T> {
        f(&mut self.conn).map_err(|e| self.explain(&e))
    }

    fn prepare(&self, create: bool) -> anyhow::Result<()> {
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
        if !create && tables == 0 {
            // An empty file (or empty database): reading commands must not turn it into a
            // store, so nothing below (WAL, migrations) may run.
            return Err(Usage(format!(
                "{} is empty, not a patchbench store (no run was ever saved there); give the \
                 store your runs are in with --store or PATCHBENCH_STORE",
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
        let refused: i64 =
            tx.query_row("SELECT count(*) FROM metrics_refused", [], |r| r.get(0))?;
        tx.commit()?;
        if refused > 0 {
            crate::safe_text::eprint_line(&format!(
                "patchbench: warning: store {}: {refused} stored metric values were outside \
                 their domain (not finite, or a zero score: written by an earlier patchbench); \
                 they are kept in table metrics_refused and left out of every result",
                self.path.display()
            ));
        }
        Ok(())
    }

    /// Refuses a record with a number outside its domain (see `crate::record::domain`).
    pub(super) fn check_record(&self, record: &RunRecord) -> anyhow::Result<()> {
        record.validate().map_err(|e| {
            anyhow::anyhow!("not saving the run in store {}: {e}", self.path.display())
        })
    }

    /// Inserts a run with its metrics in one transaction; returns its id.
    pub fn insert(&mut self, record: &RunRecord) -> anyhow::Result<i64> {
        self.check_record(record)?;
        let record = &with_uuid(record);
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
        for r in records {
            self.check_record(r)?;
        }
        let records: Vec<RunRecord> = records.iter().map(with_uuid).collect();
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
        self.check_record(record)?;
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

    /// The record of one run, or None. Results whose numbers are outside their domain (from
    /// an earlier build) are left out with a warning on stderr naming each.
    pub fn get(&self, id: i64) -> anyhow::Result<Option<RunRecord>> {
        let row: Option<(String, Option<String>)> = self
            .conn
            .query_row(
                "SELECT record_json, uuid FROM runs WHERE id=?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((json, uuid)) = row else {
            return Ok(None);
        };
        Ok(self.read_record(id, &json)?.map(|mut r| {
            if r.uuid.is_none() {
                r.uuid = uuid;
            }
            r
        }))
    }

    /// Reads a stored record document, leaving out (with a warning) results whose numbers
    /// are outside their domain.
    fn read_record(&self, id: i64, json: &str) -> anyhow::Result<Option<RunRecord>> {
        let damaged = || format!("run {id} in {} is damaged", self.path.display());
        if let Ok(r) = RunRecord::from_json(json) {
            if r.validate().is_ok() {
                return Ok(Some(r));
            }
        }
        let mut doc: serde_json::Value = serde_json::from_str(json).with_context(damaged)?;
        crate::record::upgrade(&mut doc).with_context(damaged)?;
        let mut left_out = Vec::new();
        let v = &mut doc;
        keep_valid(v, "metrics", "metrics", Metric::validate, &mut left_out);
        keep_valid(v, "tests", "tests", TestResult::validate, &mut left_out);
        keep_valid(v, "indexes", "indexes", IndexScore::validate, &mut left_out);
        if let Some(d) = v.get_mut("aim7") {
            keep_valid(
                d,
                "points",
                "aim7.points",
                Aim7Point::validate,
                &mut left_out,
            );
        }
        if let Some(d) = v.get_mut("will_it_scale") {
            keep_valid(
                d,
                "points",
                "will_it_scale.points",
                ScalePoint::validate,
                &mut left_out,
            );
        }
        if let Some(d) = v.get_mut("model") {
            keep_valid(
                d,
                "points",
                "model.points",
                ModelPoint::validate,
                &mut left_out,
            );
        }
        let record = RunRecord::from_value(doc).with_context(damaged)?;
        for what in left_out {
            crate::safe_text::eprint_line(&format!(
                "patchbench: warning: run {id} in {}: left out {what}; its other results are \
                 used",
                self.path.display()
            ));
        }
        Ok(Some(record))
    }

    /// Whether a run with this id exists (without reading its record).
    pub fn exists(&self, id: i64) -> anyhow::Result<bool> {
        Ok(self
            .conn
            .query_row("SELECT 1 FROM runs WHERE id=?1", [id], |_| Ok(()))
            .optional()?
            .is_some())
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
            tx.execute("DELETE FROM metrics_refused WHERE run_id=?1", [id])?;
            let n = tx.execute("DELETE FROM runs WHERE id=?1", [id])?;
            tx.commit()?;
            Ok(n > 0)
        })
    }
}

/// Keeps the entries of the array `field` of a record document (or of one of its sections)
/// that read as a `T` whose numbers are in their domain; says in `left_out` what was dropped
/// and why, naming the array `shown`.
fn keep_valid<T: serde::de::DeserializeOwned>(
    doc: &mut serde_json::Value,
    field: &str,
    shown: &str,
    validate: fn(&T) -> Result<(), String>,
    left_out: &mut Vec<String>,
) {
    let Some(items) = doc.get_mut(field).and_then(|v| v.as_array_mut()) else {
        return;
    };
    items.retain(|item| {
        let problem = match serde_json::from_value::<T>(item.clone()) {
            Ok(t) => validate(&t).err(),
            // A non-finite number was written by serde_json as null.
            Err(e) => Some(format!(
                "{}: {e} (a number that was not finite when it was saved)",
                entry_name(item)
            )),
        };
        match problem {
            Some(p) => {
                left_out.push(format!("{shown} entry {p}"));
                false
            }
            None => true,
        }
    });
}

/// How an entry of a record names itself: a metric's key, a test's id (also of an AIM7 or
/// will-it-scale point), an index's category, a model point's variant.
fn entry_name(item: &serde_json::Value) -> String {
    let text = |k: &str| item.get(k).and_then(|v| v.as_str()).map(str::to_string);
    if let Some(name) = text("name").filter(|_| item.get("direction").is_some()) {
        let params: std::collections::BTreeMap<String, String> = item
            .get("params")
            .and_then(|p| serde_json::from_value(p.clone()).ok())
            .unwrap_or_default();
        return crate::record::metric_key(&name, &params);
    }
    text("test")
        .or_else(|| text("category"))
        .or_else(|| text("variant"))
        .unwrap_or_else(|| "(unnamed)".to_string())
}

/// The record with a UUID: its own, or a new one for a record of an earlier build.
fn with_uuid(record: &RunRecord) -> RunRecord {
    let mut r = record.clone();
    if r.uuid.is_none() {
        r.uuid = Some(crate::record::new_uuid());
    }
    r
}

pub(super) fn insert_run(
    tx: &rusqlite::Transaction,
    record: &RunRecord,
    json: &str,
) -> rusqlite::Result<i64> {
    tx.execute(
        "INSERT INTO runs (label, kind, source, started_at, finished_at, host, kernel,
                           incomplete, record_json, uuid)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            record.label,
            record.kind.as_str(),
            record.source,
            record.started_at,
            record.finished_at,
            record.system.hostname,
            record.system.kernel_release,
            record.incomplete,
            json,
            record.uuid
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

pub(super) fn write_metrics(
    tx: &rusqlite::Transaction,
    id: i64,
    record: &RunRecord,
) -> rusqlite::Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::domain::{JTI_METRIC, POSITIVE_METRICS};
    use crate::record::Kind;
    use std::collections::BTreeMap;

    /// The CHECK constraints of schema version 2 accept exactly what `crate::record::domain` accepts.
    #[test]
    fn schema_checks_agree_with_the_domain_rules() {
        let d = tempfile::tempdir().unwrap();
        let mut store = Store::open(&d.path().join("s.db"), true).unwrap();
        let empty = RunRecord::new(
            Kind::Debug,
            Default::default(),
            &BTreeMap::<String, String>::new(),
        );
        let id = store.insert(&empty).unwrap();
        let mut names: Vec<&str> = POSITIVE_METRICS.to_vec();
        names.extend([JTI_METRIC, "aim7.cpu", "model.isize.violations"]);
        let values = [
            f64::NEG_INFINITY,
            -101.0,
            -100.0,
            -1.0,
            -0.0,
            0.0,
            1e-300,
            1.0,
            100.0,
            101.0,
            f64::MAX,
            f64::INFINITY,
            f64::NAN,
        ];
        let counts = [
            vec![],
            vec![("tasks", "1")],
            vec![("tasks", "0")],
            vec![("tasks", "1.5")],
            vec![("copies", "4194304")],
            vec![("copies", "4194305")],
            vec![("load", "123456789012345678901234567890")],
            vec![("load", "")],
            vec![("tasks", "inf")],
        ];
        let samples = [vec![], vec![0.0, 2.5], vec![1e-5], vec![f64::INFINITY]];
        let mut checked = 0;
        for name in &names {
            for value in values {
                for p in &counts {
                    for s in &samples {
                        let params: Vec<(&str, String)> =
                            p.iter().map(|(k, v)| (*k, v.to_string())).collect();
                        let m = Metric::new(
                            *name,
                            &params,
                            "",
                            "",
                            Direction::HigherIsBetter,
                            value,
                            s.clone(),
                        );
                        let rust = m.validate().is_ok();
                        let record = RunRecord {
                            metrics: vec![m.clone()],
                            ..empty.clone()
                        };
                        let tx = store.conn.transaction().unwrap();
                        let sql = write_metrics(&tx, id, &record).is_ok();
                        drop(tx);
                        assert_eq!(rust, sql, "{m:?}: domain {rust}, schema {sql}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 1000);
    }

    /// A run whose typed details hold a number that was not finite when saved (written as
    /// null) still reads, without that point; the run's metrics stay.
    #[test]
    fn a_bad_detail_point_is_left_out_not_the_run() {
        let d = tempfile::tempdir().unwrap();
        let mut store = Store::open(&d.path().join("s.db"), true).unwrap();
        let point = |test: &str, ops: f64| ScalePoint {
            test: test.to_string(),
            description: String::new(),
            mode: "processes".to_string(),
            tasks: 1,
            ops_per_sec: ops,
            ops_per_sec_per_task: ops,
            idle_percent: None,
            measured_idle_percent: None,
            measured_seconds: 1.0,
            samples: vec![ops],
            warmup_samples: Vec::new(),
            per_task_ops: vec![1],
            counters_per_op: None,
            noise: None,
        };
        let mut record = RunRecord::new(
            Kind::WillItScale,
            Default::default(),
            &BTreeMap::<String, String>::new(),
        );
        record.metrics.push(Metric::new(
            "will-it-scale.per_process_ops",
            &[("tasks", "1".to_string())],
            "",
            "ops/s",
            Direction::HigherIsBetter,
            5.0,
            Vec::new(),
        ));
        record.will_it_scale = Some(crate::record::will_it_scale::ScaleDetails {
            points: vec![point("good", 5.0)],
        });
        let id = store.insert(&record).unwrap();
        // As an earlier build would have saved a NaN: serde_json writes it as null.
        let mut doc = serde_json::to_value(&record).unwrap();
        let mut bad = serde_json::to_value(point("bad", 1.0)).unwrap();
        bad["ops_per_sec"] = serde_json::Value::Null;
        doc["will_it_scale"]["points"]
            .as_array_mut()
            .unwrap()
            .push(bad);
        store
            .conn
            .execute(
                "UPDATE runs SET record_json=?2 WHERE id=?1",
                params![id, doc.to_string()],
            )
            .unwrap();
        let back = store.get(id).unwrap().unwrap();
        let points = &back.will_it_scale.unwrap().points;
        assert_eq!(points.len(), 1);
        assert_eq!(points[0].test, "good");
        assert_eq!(back.metrics.len(), 1);
        // And a record with such a number is not saved in the first place.
        record.will_it_scale = Some(crate::record::will_it_scale::ScaleDetails {
            points: vec![point("nan", f64::NAN)],
        });
        let e = store.insert(&record).unwrap_err().to_string();
        assert!(e.contains("not saving") && e.contains("nan"), "{e}");
    }
}
