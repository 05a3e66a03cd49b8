//! Writing and reading runs: inserting (checked against `crate::record::domain` first),
//! replacing and deleting a run, reading one back, and the listings (`patchbench runs`,
//! labels, ids). `runs` holds one row of short columns per run (what listings and the noise
//! profile filter on); `run_parts` the run itself, every metric value and the rest of its
//! record, as packed parts (`packed`, `stored_form`: the first part holds the run as first
//! written, each later write appends what changed); and `metrics` one typed row per score (a
//! metric that is not a monitor row), whose CHECK constraints repeat the domain's rules and
//! which the noise profile pools. The row and part writers here are shared with the campaign
//! and lab tables and with `push`'s bulk insert.

use super::db::{Store, Written};
use super::descs::{direction_word, DescCache};
use super::packed::{Contents, Part};
use super::schema::config_key;
use super::sql::{self, params, Db, DbError, Value};
use super::stored_form::{self, add_part, add_whole, stored_contents};
use crate::record::monitors::is_monitor;
use crate::record::RunRecord;
use std::collections::BTreeMap;

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
    /// Refuses a record with a number outside its domain (see `crate::record::domain`).
    pub(super) fn check_record(&self, record: &RunRecord) -> anyhow::Result<()> {
        record
            .validate()
            .map_err(|e| anyhow::anyhow!("not saving the run in store {}: {e}", self.location()))
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
        self.insert_records(records)
    }

    fn insert_records(&mut self, records: &[RunRecord]) -> anyhow::Result<Vec<i64>> {
        let mut records: Vec<RunRecord> = records.iter().map(with_uuid).collect();
        let (ids, last) = self.writing_runs(|db, cache| {
            let mut ids = Vec::with_capacity(records.len());
            let mut last = None;
            for r in records.iter_mut() {
                let (id, contents) = insert_run(db, cache, r)?;
                ids.push(id);
                last = Some(Written {
                    run_id: id,
                    parts: 1,
                    contents,
                });
            }
            Ok((ids, last))
        })?;
        self.written = last;
        Ok(ids)
    }

    /// TESTING AID: inserts a run without the domain check, so that a test sees what the
    /// schema's own rules (its CHECK constraints) refuse, on either database.
    #[doc(hidden)]
    pub fn insert_unchecked(&mut self, record: &RunRecord) -> anyhow::Result<i64> {
        Ok(self.insert_records(std::slice::from_ref(record))?[0])
    }

    /// Replaces a run's record and metrics in one transaction: the part it appends holds only
    /// what changed since the run was last written, and only the score rows that changed are
    /// replaced.
    pub fn update(&mut self, id: i64, record: &RunRecord) -> anyhow::Result<()> {
        self.check_record(record)?;
        let known = self.written.take().filter(|w| w.run_id == id);
        let written = self.writing_runs(|db, cache| {
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
            let (old, mut parts) = match known {
                Some(w) => (w.contents, w.parts),
                None => stored_contents(db, id)?
                    .ok_or_else(|| DbError::other(format!("run {id} has no stored parts")))?,
            };
            let contents = stored_form::contents_of(db, cache, &mut record.clone())?;
            let part = Part::between(&old, &contents);
            if !part.is_empty() {
                add_part(db, id, parts, &part)?;
                parts += 1;
            }
            update_scores(db, id, record)?;
            Ok(Written {
                run_id: id,
                parts,
                contents,
            })
        })?;
        self.written = Some(written);
        Ok(())
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
        let read = self.reading_runs(|db, cache| {
            let Some(uuid) = db
                .query_opt("SELECT uuid FROM runs WHERE id=$1", params![id])?
                .map(|r| r.opt_text(0))
                .transpose()?
            else {
                return Ok(None);
            };
            let (contents, _) = stored_contents(db, id)?
                .ok_or_else(|| DbError::other(format!("run {id} has no stored parts")))?;
            Ok(Some((stored_form::read(db, cache, contents)?, uuid)))
        })?;
        let Some((read, uuid)) = read else {
            return Ok(None);
        };
        Ok(self.record_of(id, read)?.map(|mut r| {
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

    /// Deletes a run and its metrics; false when there was no such run.
    pub fn delete(&mut self, id: i64) -> anyhow::Result<bool> {
        if self.written.as_ref().is_some_and(|w| w.run_id == id) {
            self.written = None;
        }
        self.writing(|db| {
            db.execute("DELETE FROM metrics WHERE run_id=$1", params![id])?;
            db.execute("DELETE FROM metrics_refused WHERE run_id=$1", params![id])?;
            db.execute("DELETE FROM run_parts WHERE run_id=$1", params![id])?;
            Ok(db.execute("DELETE FROM runs WHERE id=$1", params![id])? > 0)
        })
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

/// The columns of a run's row that a record fills.
pub(super) const RUN_COLUMNS: &str = "label, kind, source, started_at, finished_at, host, kernel, \
                           incomplete, uuid, kernel_version, config_key, metric_count, \
                           test_count";

/// The values of [`RUN_COLUMNS`] for a record.
pub(super) fn run_values(record: &RunRecord) -> [Value; 13] {
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

/// Inserts a run: its row, its first part and its score rows; returns its id and what its
/// part holds.
pub(super) fn insert_run(
    db: &mut dyn Db,
    cache: &mut DescCache,
    record: &mut RunRecord,
) -> Result<(i64, Contents), DbError> {
    let id = db
        .query_one(
            &format!(
                "INSERT INTO runs ({RUN_COLUMNS}) VALUES {} RETURNING id",
                sql::values_list(1, 13)
            ),
            &run_values(record),
        )?
        .int(0)?;
    let contents = stored_form::contents_of(db, cache, record)?;
    add_whole(db, id, &contents)?;
    write_scores(db, id, record)?;
    Ok((id, contents))
}

/// Metric rows per statement (9 values each: well under both databases' limits).
pub(super) const METRIC_ROWS_PER_STATEMENT: usize = 400;

/// Inserts a run's score rows (its metrics that are not monitor rows; a key given twice
/// keeps the last), in a few statements.
pub(super) fn write_scores(db: &mut dyn Db, id: i64, record: &RunRecord) -> Result<(), DbError> {
    write_scores_of(db, &[(id, record)])
}

/// The score rows of a record: per key (the last metric of that key), its row's values.
fn score_rows(id: i64, record: &RunRecord) -> Vec<(String, [Value; 9])> {
    let mut last: BTreeMap<String, usize> = BTreeMap::new();
    for (i, m) in record.metrics.iter().enumerate() {
        if !is_monitor(&m.name) {
            last.insert(m.key(), i);
        }
    }
    let mut ordered: Vec<(String, usize)> = last.into_iter().collect();
    ordered.sort_by_key(|(_, i)| *i);
    ordered
        .into_iter()
        .map(|(key, i)| {
            let m = &record.metrics[i];
            let row = [
                id.into(),
                key.clone().into(),
                m.name.as_str().into(),
                serde_json::to_string(&m.params).unwrap_or_default().into(),
                m.title.as_str().into(),
                m.unit.as_str().into(),
                direction_word(m.direction).into(),
                metric_value(m.value),
                serde_json::to_string(&m.samples).unwrap_or_default().into(),
            ];
            (key, row)
        })
        .collect()
}

/// Inserts the score rows of several runs.
pub(super) fn write_scores_of(db: &mut dyn Db, runs: &[(i64, &RunRecord)]) -> Result<(), DbError> {
    let rows: Vec<[Value; 9]> = runs
        .iter()
        .flat_map(|(id, record)| score_rows(*id, record))
        .map(|(_, row)| row)
        .collect();
    insert_score_rows(db, &rows)
}

pub(super) fn insert_score_rows(db: &mut dyn Db, rows: &[[Value; 9]]) -> Result<(), DbError> {
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

/// Replaces the score rows of run `id` that differ from the record's (a unit's new rows, an
/// index row whose value moved) and deletes those the record no longer has.
fn update_scores(db: &mut dyn Db, id: i64, record: &RunRecord) -> Result<(), DbError> {
    let stored = db.query(
        "SELECT key, title, unit, direction, value, samples_json FROM metrics WHERE run_id=$1",
        params![id],
    )?;
    let mut old: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for r in &stored {
        old.insert(r.text(0)?, r.0[1..].to_vec());
    }
    let new = score_rows(id, record);
    let mut stale: Vec<String> = Vec::new();
    let mut fresh: Vec<[Value; 9]> = Vec::new();
    let keys: std::collections::BTreeSet<&String> = new.iter().map(|(k, _)| k).collect();
    for key in old.keys() {
        if !keys.contains(key) {
            stale.push(key.clone());
        }
    }
    for (key, row) in new {
        match old.get(&key) {
            Some(kept) if same_score(kept, &row) => {}
            Some(_) => {
                stale.push(key);
                fresh.push(row);
            }
            None => fresh.push(row),
        }
    }
    for chunk in stale.chunks(METRIC_ROWS_PER_STATEMENT) {
        let mut values: Vec<Value> = vec![id.into()];
        values.extend(chunk.iter().map(|k| Value::from(k.as_str())));
        let list = (2..=chunk.len() + 1)
            .map(|i| format!("${i}"))
            .collect::<Vec<_>>()
            .join(",");
        db.execute(
            &format!("DELETE FROM metrics WHERE run_id=$1 AND key IN ({list})"),
            &values,
        )?;
    }
    insert_score_rows(db, &fresh)
}

/// Whether a stored score row (title, unit, direction, value, samples) is the new row's.
fn same_score(stored: &[Value], row: &[Value; 9]) -> bool {
    let same_value = match (&stored[3], &row[7]) {
        (Value::Real(a), Value::Real(b)) => a.to_bits() == b.to_bits(),
        (Value::Int(a), Value::Real(b)) => (*a as f64).to_bits() == b.to_bits(),
        _ => false,
    };
    same_value
        && stored[0] == row[4]
        && stored[1] == row[5]
        && stored[2] == row[6]
        && stored[4] == row[8]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::domain::{JTI_METRIC, POSITIVE_METRICS};
    use crate::record::{Direction, Kind, Metric};
    use crate::store::{Access, Location};

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
                        let sql = write_scores(db, id, &record).is_ok();
                        db.rollback();
                        assert_eq!(rust, sql, "{m:?}: domain {rust}, schema {sql}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 1000);
    }
}
