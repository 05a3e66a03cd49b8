//! Copying a box's runs into another store (a lab's shared one): in batches, one transaction
//! per batch, each run inserted only if the target has no run with its UUID (`ON CONFLICT
//! (uuid) DO NOTHING`). Pushing twice stores once, and a push cut short (killed, the server
//! gone) is finished by pushing again: the batches committed before are found there and
//! skipped. The bulk insert a batch is (a few statements for all its runs) is here too.

use super::db::Store;
use super::runs::{
    run_values, with_uuid, write_metrics_of, METRIC_ROWS_PER_STATEMENT, RUN_COLUMNS,
};
use super::sql::{self, params, Db, DbError, Value};
use crate::record::RunRecord;

/// Runs per batch (one transaction on the target each).
pub const BATCH: usize = 500;

/// What to push.
#[derive(Debug, Clone, Default)]
pub struct PushOptions {
    /// Only runs with this label.
    pub label: Option<String>,
    /// Push interrupted (incomplete) runs too; by default they stay behind (a run still being
    /// written is incomplete, and its first copy would be the only one pushed).
    pub include_incomplete: bool,
}

/// What a push did so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PushCount {
    /// Runs the target did not have, now stored there.
    pub pushed: usize,
    /// Runs the target already had (same UUID).
    pub already: usize,
    /// Incomplete runs left behind.
    pub incomplete: usize,
    /// Runs in all that were to be pushed.
    pub total: usize,
}

impl Store {
    /// Pushes this store's runs into `target`; `progress` is told after every batch.
    pub fn push_to(
        &self,
        target: &mut Store,
        options: &PushOptions,
        progress: &mut dyn FnMut(&PushCount),
    ) -> anyhow::Result<PushCount> {
        let label = options.label.clone();
        let (total, incomplete) = self.reading(|db| {
            let row = db.query_one(
                "SELECT count(*), CAST(coalesce(sum(CASE WHEN incomplete THEN 1 ELSE 0 END), 0)
                        AS BIGINT)
                 FROM runs WHERE ($1 = '' OR label = $1)",
                params![label.clone().unwrap_or_default()],
            )?;
            Ok((row.int(0)? as usize, row.int(1)? as usize))
        })?;
        let mut count = PushCount {
            total: if options.include_incomplete {
                total
            } else {
                total - incomplete
            },
            incomplete: if options.include_incomplete {
                0
            } else {
                incomplete
            },
            ..PushCount::default()
        };
        let mut after = 0_i64;
        loop {
            let rows = self.reading(|db| {
                db.query(
                    "SELECT r.id, rr.record_json, r.uuid FROM runs r
                     JOIN run_records rr ON rr.run_id = r.id
                     WHERE r.id > $1 AND ($2 = '' OR r.label = $2) AND ($3 OR NOT r.incomplete)
                     ORDER BY r.id LIMIT $4",
                    params![
                        after,
                        label.clone().unwrap_or_default(),
                        options.include_incomplete,
                        BATCH as i64
                    ],
                )
            })?;
            let Some(last) = rows.last() else { break };
            after = last.int(0)?;
            let mut records: Vec<RunRecord> = Vec::with_capacity(rows.len());
            for row in &rows {
                let id = row.int(0)?;
                let Some(mut record) = self.read_record(id, &row.text(1)?)? else {
                    continue;
                };
                if record.uuid.is_none() {
                    record.uuid = row.opt_text(2)?;
                }
                let record = with_uuid(&record);
                target.check_record(&record)?;
                records.push(record);
            }
            let json: Vec<String> = records
                .iter()
                .map(serde_json::to_string)
                .collect::<Result<_, _>>()?;
            let pairs: Vec<(&RunRecord, &str)> = records
                .iter()
                .zip(json.iter().map(String::as_str))
                .collect();
            let inserted = target.writing(|db| {
                let new = insert_new_runs(db, &pairs)?;
                let runs: Vec<(i64, &RunRecord)> =
                    new.iter().map(|(id, i)| (*id, &records[*i])).collect();
                write_metrics_of(db, &runs)?;
                Ok(new.len())
            })?;
            count.pushed += inserted;
            count.already += records.len() - inserted;
            progress(&count);
        }
        Ok(count)
    }
}

/// Inserts the runs whose UUID the store does not have yet (rows and records, a few
/// statements for all); returns (id, index in `records`) of those inserted (the others were
/// already there).
fn insert_new_runs(
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
