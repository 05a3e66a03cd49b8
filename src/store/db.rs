//! The result store, whichever database holds it: opening (a SQLite file or a PostgreSQL
//! URL, with a clear message for anything that is not a store or cannot be reached), and the
//! queries the commands need, written once against [`Db`] (`crate::store::sql`). The schema
//! and its migrations are in `schema`; the campaign tables' queries in `campaign`; copying
//! runs to another store in `push`.
//!
//! `runs` holds one row of short columns per run (what listings and the noise profile filter
//! on), `run_records` the whole [`RunRecord`] as JSON (the source of truth), and `metrics` one
//! row per (run, metric key). Every write is one transaction (on SQLite `BEGIN IMMEDIATE` in WAL mode with a
//! busy timeout, so two patchbench processes can write one store at once).
//!
//! Every record is checked against `crate::record::domain` before it is written, and the
//! `metrics` table repeats those rules as CHECK constraints. A store written by an earlier
//! build may hold values outside them (`inf` read back as `null`, zero scores): migrating to
//! version 2 moved such metric rows to `metrics_refused` (kept, not deleted), and reading a run
//! leaves out, with a warning naming each, the results whose numbers are bad, so the run's
//! other results and the label's other runs stay usable.

use super::location::Location;
use super::schema::{self, config_key, Found};
use super::sql::{self, params, Db, DbError, Failure, Value};
use super::Access;
use crate::error::Usage;
use crate::record::aim7::Aim7Point;
use crate::record::model::ModelPoint;
use crate::record::will_it_scale::ScalePoint;
use crate::record::{Direction, IndexScore, Metric, RunRecord, TestResult};
use anyhow::Context;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Duration;

/// An open result store.
pub struct Store {
    /// In a cell so that queries take `&self`, as callers expect of reads.
    db: RefCell<Box<dyn Db>>,
    location: Location,
    read_only: bool,
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

/// The settings a noise profile pools runs of: a run's kind, host, kernel and settings.
#[derive(Debug, Clone)]
pub struct Settings<'a> {
    pub kind: &'a str,
    pub host: &'a str,
    pub kernel_release: &'a str,
    pub kernel_version: &'a str,
    pub config: &'a BTreeMap<String, serde_json::Value>,
}

/// The most runs a noise profile pools: the latest of their settings. Thousands of runs pin a
/// spread down as well as any more would, and the profile then costs the same whatever the
/// store holds.
pub const PROFILE_RUNS: usize = 5000;

/// What the store holds for a noise profile: the latest [`PROFILE_RUNS`] complete runs of one
/// set of [`Settings`] (leaving some out), their labels, and per (label, metric key) the number
/// of positive values and the sample variance of their logarithms.
#[derive(Debug, Clone, Default)]
pub struct ProfileData {
    /// Runs pooled ([`PROFILE_RUNS`] when there were as many or more: the latest).
    pub runs: usize,
    /// Every label with a matching run ("" for none), sorted.
    pub labels: Vec<String>,
    /// (label, key, values, variance of ln(value)); groups of one value are left out.
    pub groups: Vec<(String, String, usize, f64)>,
}

impl Store {
    /// Opens the store at `location` (a file or a server: the one way in, whichever
    /// database holds it) for `access`, migrating its schema where it may; a PostgreSQL server
    /// gets `connect_timeout` (else the URL's, `PGCONNECT_TIMEOUT`, or 5 s).
    pub fn open(
        location: &Location,
        access: Access,
        connect_timeout: Option<Duration>,
    ) -> anyhow::Result<Store> {
        let shown = location.shown();
        let (db, read_only): (Box<dyn Db>, bool) = match location {
            Location::File(path) => {
                let (db, opened) = super::sqlite::open(path, access)?;
                (Box::new(db), opened == super::sqlite::Opened::ReadOnly)
            }
            Location::Postgres(target) => {
                let db = super::postgres::connect(target, connect_timeout).map_err(|e| {
                    let how = match e.failure {
                        Failure::Permission => {
                            "check the user and password (PGPASSWORD, \
                                                ~/.pgpass) and the server's pg_hba.conf"
                        }
                        _ => "check that the server runs and the URL's host, port and sslmode",
                    };
                    let line = format!("cannot reach store {shown}: {e}; {how}");
                    if e.failure == Failure::Unreachable {
                        anyhow::Error::from(crate::error::StoreUnreachable(line))
                    } else {
                        Usage(line).into()
                    }
                })?;
                (Box::new(db), false)
            }
        };
        let mut store = Store {
            db: RefCell::new(db),
            location: location.clone(),
            read_only,
        };
        store.prepare(access).map_err(|e| {
            if e.downcast_ref::<Usage>().is_some() {
                return e;
            }
            match e.downcast::<DbError>() {
                Ok(db) => match location {
                    Location::File(path) => super::sqlite::opening_error(&db, path),
                    Location::Postgres(_) => store.explain(&db),
                },
                Err(e) => e,
            }
        })?;
        Ok(store)
    }

    /// Opens the same store again (a new connection to a server that went away and came
    /// back); the old connection is dropped only when the new one is there.
    pub fn reconnect(&mut self, connect_timeout: Option<Duration>) -> anyhow::Result<()> {
        let access = if self.read_only {
            Access::Read
        } else {
            Access::Write
        };
        *self = Store::open(&self.location.clone(), access, connect_timeout)?;
        Ok(())
    }

    /// Where this store is (a file, or a URL shown without its password).
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Refuses (one line) a store that cannot take a write now (a file whose file system is
    /// full, a store opened read-only), before work whose result would be lost.
    pub fn check_writable(&self) -> anyhow::Result<()> {
        if self.read_only {
            return Err(Usage(format!(
                "store {} is read-only; give a writable --store",
                self.location
            ))
            .into());
        }
        match &self.location {
            Location::File(p) => super::sqlite::refuse_if_full(p),
            Location::Postgres(_) => Ok(()),
        }
    }

    /// True when the store was opened read-only (read-only media, or no write permission).
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The connection, for the store's other query modules.
    pub(super) fn db(&mut self) -> &mut dyn Db {
        self.db.get_mut().as_mut()
    }

    /// Says what a failed database call means for this store, always naming the store.
    pub fn explain(&self, e: &DbError) -> anyhow::Error {
        let shown = self.location.shown();
        let postgres = matches!(self.location, Location::Postgres(_));
        let line = match e.failure {
            Failure::Busy if !postgres => {
                let holders = self
                    .location
                    .file()
                    .map(super::locks::holders)
                    .unwrap_or_default();
                let who = if holders.is_empty() {
                    "another process".to_string()
                } else {
                    holders.join(", ")
                };
                format!(
                    "store {shown} is locked by {who}; gave up after {:.1} s; wait for it to \
                     finish or give another --store",
                    lock_wait().as_secs_f64()
                )
            }
            Failure::Full => format!(
                "store {shown}: the filesystem is full ({e}); free some space there or give \
                 another --store"
            ),
            Failure::ReadOnly => format!(
                "store {shown} is read-only ({e}); it can be read but not written: give a \
                 writable --store"
            ),
            Failure::Permission if postgres => format!(
                "store {shown}: permission denied ({e}); the role lacks a grant (docs/lab.md \
                 lists what each role needs)"
            ),
            Failure::Permission => format!("store {shown}: permission denied ({e})"),
            Failure::NoMemory => format!(
                "store {shown}: out of memory ({e}); raise the process's memory limit and try \
                 again"
            ),
            Failure::Unreachable => {
                return crate::error::StoreUnreachable(self.location.scrub(&format!(
                    "store {shown}: lost the connection to the server ({e}); what was committed \
                     before is kept"
                )))
                .into()
            }
            Failure::Corrupt => {
                format!("store {shown} is damaged ({e}); move it aside or give another --store")
            }
            Failure::Duplicate if e.message.contains("uuid") => format!(
                "store {shown} already has this run (a run with the same UUID: a run is stored \
                 once; `patchbench push` skips such runs); nothing was saved"
            ),
            _ => format!("store {shown}: {e}"),
        };
        Usage(self.location.scrub(&line)).into()
    }

    /// Runs `f` in one write transaction and explains its failure.
    pub(super) fn writing<T>(
        &mut self,
        f: impl FnOnce(&mut dyn Db) -> Result<T, DbError>,
    ) -> anyhow::Result<T> {
        if self.read_only {
            return Err(Usage(format!(
                "store {} is read-only (opened for reading); nothing was written",
                self.location
            ))
            .into());
        }
        let result = sql::in_transaction(self.db.get_mut().as_mut(), f);
        result.map_err(|e| self.explain(&e))
    }

    /// Runs a query and explains its failure.
    pub(super) fn reading<T>(
        &self,
        f: impl FnOnce(&mut dyn Db) -> Result<T, DbError>,
    ) -> anyhow::Result<T> {
        let result = f(self.db.borrow_mut().as_mut());
        result.map_err(|e| self.explain(&e))
    }

    fn prepare(&mut self, access: Access) -> anyhow::Result<()> {
        let file = matches!(self.location, Location::File(_));
        if file {
            let lock_ms = lock_wait().as_millis();
            self.db().batch(&format!("PRAGMA busy_timeout={lock_ms}"))?;
        }
        let small = self
            .location
            .file()
            .and_then(|p| std::fs::metadata(p).ok())
            .is_some_and(|m| m.len() <= WHOLE_CHECK_BYTES);
        if small {
            let check = self.db().query_one("PRAGMA quick_check", &[])?.text(0)?;
            if check != "ok" {
                return Err(DbError::new(
                    integrity_failure(&check),
                    format!("integrity check failed: {check}"),
                )
                .into());
            }
        }
        let shown = self.location.shown();
        let found = schema::found(self.db())?;
        match found {
            Found::Foreign => {
                return Err(Usage(format!(
                    "{shown} is {} but not a patchbench store; give another --store",
                    if file {
                        "an SQLite database"
                    } else {
                        "a database"
                    }
                ))
                .into())
            }
            Found::Empty if access != Access::Create => {
                // Reading commands must not turn an empty file (or database) into a store.
                return Err(Usage(format!(
                    "{shown} is empty, not a patchbench store (no run was ever saved there); \
                     give the store your runs are in with --store or PATCHBENCH_STORE"
                ))
                .into());
            }
            _ => {}
        }
        if file && !self.read_only {
            let mode = self
                .db()
                .query_one("PRAGMA journal_mode=WAL", &[])?
                .text(0)?;
            if !mode.eq_ignore_ascii_case("wal") {
                anyhow::bail!("cannot switch the store to WAL mode (got {mode})");
            }
            self.db()
                .batch("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;")?;
        }
        if found == Found::Version(schema::CURRENT) {
            return Ok(());
        }
        if self.read_only {
            if let Found::Version(v) = found {
                if v > schema::CURRENT {
                    return Err(Usage(format!(
                        "store {shown} has schema version {v}, newer than this patchbench reads \
                         ({}); use a newer patchbench",
                        schema::CURRENT
                    ))
                    .into());
                }
                return Err(Usage(format!(
                    "store {shown} has schema version {v} and is read-only, so it cannot be \
                     brought to version {} for this patchbench; open it once where it can be \
                     written (any command, e.g. `patchbench runs`), or use the patchbench that \
                     wrote it",
                    schema::CURRENT
                ))
                .into());
            }
        }
        let refused = schema::migrate(self.db(), &shown)?;
        if refused > 0 {
            crate::safe_text::eprint_line(&format!(
                "patchbench: warning: store {shown}: {refused} stored metric values were outside \
                 their domain (not finite, or a zero score: written by an earlier patchbench); \
                 they are kept in table metrics_refused and left out of every result"
            ));
        }
        Ok(())
    }

    /// Refuses a record with a number outside its domain (see `crate::record::domain`).
    pub(super) fn check_record(&self, record: &RunRecord) -> anyhow::Result<()> {
        record
            .validate()
            .map_err(|e| anyhow::anyhow!("not saving the run in store {}: {e}", self.location))
    }

    /// Inserts a run with its metrics in one transaction; returns its id.
    pub fn insert(&mut self, record: &RunRecord) -> anyhow::Result<i64> {
        Ok(self.insert_all(std::slice::from_ref(record))?[0])
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
        self.writing(|db| {
            let mut ids = Vec::with_capacity(records.len());
            for (r, j) in records.iter().zip(&json) {
                let id = insert_run(db, r, j)?;
                write_metrics(db, id, r)?;
                ids.push(id);
            }
            Ok(ids)
        })
    }

    /// TESTING AID: inserts a run without the domain check, so that a test sees what the
    /// schema's own rules (its CHECK constraints) refuse, on either database.
    #[doc(hidden)]
    pub fn insert_unchecked(&mut self, record: &RunRecord) -> anyhow::Result<i64> {
        let record = with_uuid(record);
        let json = serde_json::to_string(&record)?;
        self.writing(|db| {
            let id = insert_run(db, &record, &json)?;
            write_metrics(db, id, &record)?;
            Ok(id)
        })
    }

    /// Replaces a run's record and metrics in one transaction.
    pub fn update(&mut self, id: i64, record: &RunRecord) -> anyhow::Result<()> {
        self.check_record(record)?;
        let json = serde_json::to_string(record)?;
        self.writing(|db| {
            db.execute(
                "UPDATE runs SET label=$2, finished_at=$3, incomplete=$4,
                        kernel_version=$5, config_key=$6, metric_count=$7, test_count=$8
                 WHERE id=$1",
                params![
                    id,
                    record.label.as_deref(),
                    record.finished_at.as_str(),
                    record.incomplete,
                    record.system.kernel_version.as_str(),
                    config_key(&record.config),
                    record.metrics.len() as i64,
                    test_count(record)
                ],
            )?;
            db.execute(
                "UPDATE run_records SET record_json=$2 WHERE run_id=$1",
                params![id, json],
            )?;
            db.execute("DELETE FROM metrics WHERE run_id=$1", params![id])?;
            write_metrics(db, id, record)
        })
    }

    /// Every run, oldest first (optionally only one label's).
    pub fn list(&self, label: Option<&str>) -> anyhow::Result<Vec<RunSummary>> {
        const COLUMNS: &str = "SELECT id, label, kind, started_at, host, kernel, incomplete, \
                               metric_count, test_count FROM runs";
        self.reading(|db| {
            let rows = match label {
                Some(l) => db.query(
                    &format!("{COLUMNS} WHERE label = $1 ORDER BY id"),
                    params![l],
                )?,
                None => db.query(&format!("{COLUMNS} ORDER BY id"), &[])?,
            };
            rows.iter()
                .map(|r| {
                    Ok(RunSummary {
                        id: r.int(0)?,
                        label: r.opt_text(1)?,
                        kind: r.text(2)?,
                        started_at: r.text(3)?,
                        host: r.text(4)?,
                        kernel: r.text(5)?,
                        incomplete: r.bool(6)?,
                        metrics: r.int(7)? as usize,
                        tests: r.int(8)? as usize,
                    })
                })
                .collect()
        })
    }

    /// Every label in the store, sorted.
    pub fn labels(&self) -> anyhow::Result<Vec<String>> {
        self.reading(|db| {
            db.query(
                "SELECT DISTINCT label FROM runs WHERE label IS NOT NULL ORDER BY label",
                &[],
            )?
            .iter()
            .map(|r| r.text(0))
            .collect()
        })
    }

    /// The record of one run, or None. Results whose numbers are outside their domain (from
    /// an earlier build) are left out with a warning on stderr naming each.
    pub fn get(&self, id: i64) -> anyhow::Result<Option<RunRecord>> {
        let row = self.reading(|db| {
            db.query_opt(
                "SELECT rr.record_json, r.uuid FROM runs r
                 JOIN run_records rr ON rr.run_id = r.id WHERE r.id=$1",
                params![id],
            )?
            .map(|r| Ok::<_, DbError>((r.text(0)?, r.opt_text(1)?)))
            .transpose()
        })?;
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

    /// Whether a run with this id exists (without reading its record).
    pub fn exists(&self, id: i64) -> anyhow::Result<bool> {
        self.reading(|db| {
            Ok(db
                .query_opt("SELECT 1 FROM runs WHERE id=$1", params![id])?
                .is_some())
        })
    }

    /// The id of the run with this UUID, if it is stored.
    pub fn id_of_uuid(&self, uuid: &str) -> anyhow::Result<Option<i64>> {
        self.reading(|db| {
            db.query_opt("SELECT id FROM runs WHERE uuid=$1", params![uuid])?
                .map(|r| r.int(0))
                .transpose()
        })
    }

    /// Ids of the runs with this label, oldest first.
    pub fn ids_with_label(&self, label: &str) -> anyhow::Result<Vec<i64>> {
        self.reading(|db| {
            db.query(
                "SELECT id FROM runs WHERE label=$1 ORDER BY id",
                params![label],
            )?
            .iter()
            .map(|r| r.int(0))
            .collect()
        })
    }

    /// What a noise profile needs from the complete runs of `settings`, leaving out the runs
    /// `excluded` (the other side's), computed in the database (no record is read).
    pub fn profile_data(
        &self,
        settings: &Settings,
        excluded: &[i64],
    ) -> anyhow::Result<ProfileData> {
        let key = config_key(settings.config);
        let excluded = serde_json::to_string(excluded)?;
        self.reading(|db| {
            let not_excluded = db.dialect().not_in_json_ids("r.id", "$6");
            let filter = format!(
                "r.kind=$1 AND r.host=$2 AND r.kernel=$3 AND r.kernel_version=$4 AND \
                 r.config_key=$5 AND r.incomplete=$7 AND {not_excluded}"
            );
            let args = params![
                settings.kind,
                settings.host,
                settings.kernel_release,
                settings.kernel_version,
                key.as_str(),
                excluded.as_str(),
                false,
                PROFILE_RUNS as i64
            ];
            // The latest runs of these settings (counting them all would cost a scan).
            let latest = format!(
                "WITH latest AS (SELECT r.id, coalesce(r.label, '') AS label FROM runs r
                                 WHERE {filter} ORDER BY r.id DESC LIMIT $8)"
            );
            let mut data = ProfileData::default();
            let label_rows = db.query(
                &format!(
                    "{latest} SELECT label, count(*) FROM latest GROUP BY label ORDER BY label"
                ),
                args,
            )?;
            for r in &label_rows {
                data.labels.push(r.text(0)?);
                data.runs += r.int(1)? as usize;
            }
            let groups = db.query(
                &format!(
                    "{latest}
                     SELECT l.label, m.key, count(*),
                            CASE WHEN min(m.value) = max(m.value) THEN CAST(0 AS DOUBLE PRECISION)
                                 ELSE var_samp(ln(m.value)) END
                     FROM latest l JOIN metrics m ON m.run_id = l.id
                     WHERE m.value > 0
                     GROUP BY l.label, m.key
                     HAVING count(*) >= 2"
                ),
                args,
            )?;
            for r in &groups {
                if let Some(var) = r.opt_real(3)? {
                    data.groups
                        .push((r.text(0)?, r.text(1)?, r.int(2)? as usize, var));
                }
            }
            Ok(data)
        })
    }

    /// Runs `f` while holding the store's write lock (a testing aid: other writers wait).
    pub fn with_write_lock<T>(
        &mut self,
        f: impl FnOnce() -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        let postgres = matches!(self.location, Location::Postgres(_));
        let mut out = None;
        self.writing(|db| {
            if postgres {
                db.batch("LOCK TABLE runs IN SHARE ROW EXCLUSIVE MODE")?;
            }
            out = Some(f());
            Ok(())
        })?;
        out.unwrap_or_else(|| Err(anyhow::anyhow!("the locked section did not run")))
    }

    /// Deletes a run and its metrics; false when there was no such run.
    pub fn delete(&mut self, id: i64) -> anyhow::Result<bool> {
        self.writing(|db| {
            db.execute("DELETE FROM metrics WHERE run_id=$1", params![id])?;
            db.execute("DELETE FROM metrics_refused WHERE run_id=$1", params![id])?;
            db.execute("DELETE FROM run_records WHERE run_id=$1", params![id])?;
            Ok(db.execute("DELETE FROM runs WHERE id=$1", params![id])? > 0)
        })
    }
}

impl Store {
    /// Reads a stored record document, leaving out (with a warning) results whose numbers
    /// are outside their domain.
    pub(super) fn read_record(&self, id: i64, json: &str) -> anyhow::Result<Option<RunRecord>> {
        let damaged = || format!("run {id} in {} is damaged", self.location);
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
                self.location
            ));
        }
        Ok(Some(record))
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

/// What a failed `PRAGMA quick_check` means: a page it could not read for lack of memory
/// (`error code=7`, SQLITE_NOMEM) or an I/O error (10) is not damage; anything else is.
fn integrity_failure(report: &str) -> Failure {
    let code = report.split("error code=").nth(1).and_then(|rest| {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<i32>().ok()
    });
    match code {
        Some(rusqlite::ffi::SQLITE_NOMEM) => Failure::NoMemory,
        Some(rusqlite::ffi::SQLITE_IOERR) => Failure::Other,
        Some(rusqlite::ffi::SQLITE_FULL) => Failure::Full,
        _ => Failure::Corrupt,
    }
}

/// The record with a UUID: its own, or a new one for a record of an earlier build.
pub fn with_uuid(record: &RunRecord) -> RunRecord {
    let mut r = record.clone();
    if r.uuid.is_none() {
        r.uuid = Some(crate::record::new_uuid());
    }
    r
}

/// Distinct tests among a record's metrics (their `test` parameter).
fn test_count(record: &RunRecord) -> i64 {
    let tests: std::collections::BTreeSet<&str> = record
        .metrics
        .iter()
        .filter_map(|m| m.params.get("test").map(String::as_str))
        .collect();
    tests.len() as i64
}

const RUN_COLUMNS: &str = "label, kind, source, started_at, finished_at, host, kernel, \
                           incomplete, uuid, kernel_version, config_key, metric_count, \
                           test_count";

/// The values of [`RUN_COLUMNS`] for a record.
fn run_values(record: &RunRecord) -> [Value; 13] {
    [
        record.label.clone().into(),
        record.kind.as_str().into(),
        record.source.clone().into(),
        record.started_at.as_str().into(),
        record.finished_at.as_str().into(),
        record.system.hostname.as_str().into(),
        record.system.kernel_release.as_str().into(),
        record.incomplete.into(),
        record.uuid.clone().into(),
        record.system.kernel_version.as_str().into(),
        config_key(&record.config).into(),
        (record.metrics.len() as i64).into(),
        test_count(record).into(),
    ]
}

/// Inserts a run (its row and its record); returns its id.
pub(super) fn insert_run(db: &mut dyn Db, record: &RunRecord, json: &str) -> Result<i64, DbError> {
    let id = db
        .query_one(
            &format!(
                "INSERT INTO runs ({RUN_COLUMNS}) VALUES {} RETURNING id",
                sql::values_list(1, 13)
            ),
            &run_values(record),
        )?
        .int(0)?;
    db.execute(
        "INSERT INTO run_records (run_id, record_json) VALUES ($1, $2)",
        params![id, json],
    )?;
    Ok(id)
}

/// Inserts the runs whose UUID the store does not have yet (rows and records, a few
/// statements for all); returns (id, index in `records`) of those inserted (the others were
/// already there).
pub(super) fn insert_new_runs(
    db: &mut dyn Db,
    records: &[(&RunRecord, &str)],
) -> Result<Vec<(i64, usize)>, DbError> {
    if records.is_empty() {
        return Ok(Vec::new());
    }
    let values: Vec<Value> = records.iter().flat_map(|(r, _)| run_values(r)).collect();
    let rows = db.query(
        &format!(
            "INSERT INTO runs ({RUN_COLUMNS}) VALUES {} ON CONFLICT (uuid) DO NOTHING \
             RETURNING id, uuid",
            sql::values_list(records.len(), 13)
        ),
        &values,
    )?;
    let index: std::collections::HashMap<&str, usize> = records
        .iter()
        .enumerate()
        .filter_map(|(i, (r, _))| Some((r.uuid.as_deref()?, i)))
        .collect();
    let mut inserted = Vec::with_capacity(rows.len());
    for row in &rows {
        let uuid = row.text(1)?;
        let i = *index
            .get(uuid.as_str())
            .ok_or_else(|| DbError::other("the store returned a UUID it was not given"))?;
        inserted.push((row.int(0)?, i));
    }
    for chunk in inserted.chunks(METRIC_ROWS_PER_STATEMENT) {
        let values: Vec<Value> = chunk
            .iter()
            .flat_map(|(id, i)| [Value::Int(*id), records[*i].1.into()])
            .collect();
        db.execute(
            &format!(
                "INSERT INTO run_records (run_id, record_json) VALUES {}",
                sql::values_list(chunk.len(), 2)
            ),
            &values,
        )?;
    }
    Ok(inserted)
}

/// Metric rows per statement (9 values each: well under both databases' limits).
const METRIC_ROWS_PER_STATEMENT: usize = 400;

/// Inserts a run's metrics (a key given twice keeps the last), in a few statements.
pub(super) fn write_metrics(db: &mut dyn Db, id: i64, record: &RunRecord) -> Result<(), DbError> {
    write_metrics_of(db, &[(id, record)])
}

/// Inserts the metrics of several runs.
pub(super) fn write_metrics_of(db: &mut dyn Db, runs: &[(i64, &RunRecord)]) -> Result<(), DbError> {
    let mut rows: Vec<[Value; 9]> = Vec::new();
    for (id, record) in runs {
        let mut last: BTreeMap<String, usize> = BTreeMap::new();
        for (i, m) in record.metrics.iter().enumerate() {
            last.insert(m.key(), i);
        }
        let mut ordered: Vec<(String, usize)> = last.into_iter().collect();
        ordered.sort_by_key(|(_, i)| *i);
        for (key, i) in ordered {
            let m = &record.metrics[i];
            let direction = match m.direction {
                Direction::HigherIsBetter => "higher-is-better",
                Direction::LowerIsBetter => "lower-is-better",
            };
            rows.push([
                (*id).into(),
                key.into(),
                m.name.as_str().into(),
                serde_json::to_string(&m.params).unwrap_or_default().into(),
                m.title.as_str().into(),
                m.unit.as_str().into(),
                direction.into(),
                metric_value(m.value),
                serde_json::to_string(&m.samples).unwrap_or_default().into(),
            ]);
        }
    }
    for chunk in rows.chunks(METRIC_ROWS_PER_STATEMENT) {
        let values: Vec<Value> = chunk.iter().flat_map(|r| r.iter().cloned()).collect();
        db.execute(
            &format!(
                "INSERT INTO metrics (run_id, key, name, params_json, title, unit, direction, \
                 value, samples_json) VALUES {}",
                sql::values_list(chunk.len(), 9)
            ),
            &values,
        )?;
    }
    Ok(())
}

/// A metric's value as stored: a NaN is bound as NULL (SQLite does so itself), so the NOT
/// NULL rule refuses it on both databases.
fn metric_value(v: f64) -> Value {
    if v.is_nan() {
        Value::Null
    } else {
        Value::Real(v)
    }
}

/// A SQLite store up to this size is checked whole (`PRAGMA quick_check`, which reads every
/// page) when it is opened, so damage is found before anything is read from it; a larger one
/// is not (the check would cost more than the command), and SQLite names a damaged page when
/// a query reads it.
const WHOLE_CHECK_BYTES: u64 = 16 << 20;

/// How long a write waits for another process's lock: 15 s, or `PATCHBENCH_LOCK_WAIT_MS`
/// (for tests).
pub fn lock_wait() -> Duration {
    std::env::var("PATCHBENCH_LOCK_WAIT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_millis)
        .unwrap_or(Duration::from_secs(15))
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
        let mut store =
            Store::open(&Location::File(d.path().join("s.db")), Access::Create, None).unwrap();
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
                        let db = store.db();
                        db.begin().unwrap();
                        let sql = write_metrics(db, id, &record).is_ok();
                        db.rollback();
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
        let mut store =
            Store::open(&Location::File(d.path().join("s.db")), Access::Create, None).unwrap();
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
            .db()
            .execute(
                "UPDATE run_records SET record_json=$2 WHERE run_id=$1",
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
