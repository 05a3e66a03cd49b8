//! Copying a box's runs into another store (a lab's shared one): in batches, one transaction
//! per batch, each run inserted only if the target has no run with its UUID (`ON CONFLICT
//! (uuid) DO NOTHING`). Pushing twice stores once, and a push cut short (killed, the server
//! gone) is finished by pushing again: the batches committed before are found there and
//! skipped. The bulk insert a batch is (a few statements for all its runs) is here too. A
//! push copies what is stored (the run's row, its parts, its score rows), with each part's
//! list of descriptor ids made the target's; no record is parsed, no body recompressed.

use super::db::Store;
use super::descs::Desc;
use super::packed;
use super::runs::{insert_score_rows, RUN_COLUMNS};
use super::sql::{self, params, Db, DbError, Value};
use std::collections::HashMap;
use std::sync::Arc;

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
            let (batch, descs_of) = self.reading_runs(|db, cache| {
                let batch = read_batch(db, after, &label, options.include_incomplete)?;
                let ids = batch.iter().flat_map(|r| r.desc_ids.iter().copied());
                cache.load(db, ids.clone())?;
                let descs: HashMap<i64, Arc<Desc>> = ids
                    .filter_map(|id| Some((id, cache.get(id)?.clone())))
                    .collect();
                Ok((batch, descs))
            })?;
            let Some(last) = batch.last() else { break };
            after = last.id;
            let inserted = target.writing_runs(|db, cache| {
                let new = insert_new_runs(db, &batch)?;
                // Each descriptor the new runs name, as the target numbers it.
                let mut source_ids: Vec<i64> = new
                    .iter()
                    .flat_map(|(_, i)| batch[*i].desc_ids.iter().copied())
                    .collect();
                source_ids.sort_unstable();
                source_ids.dedup();
                let descs: Vec<&Desc> = source_ids
                    .iter()
                    .map(|id| {
                        descs_of
                            .get(id)
                            .map(|d| d.as_ref())
                            .ok_or_else(|| DbError::other("a metric descriptor went missing"))
                    })
                    .collect::<Result<_, _>>()?;
                let target_ids = cache.ids_for(db, &descs)?;
                let to: HashMap<i64, i64> = source_ids.into_iter().zip(target_ids).collect();
                let mut parts: Vec<Value> = Vec::new();
                let mut scores: Vec<[Value; 9]> = Vec::new();
                for (id, i) in &new {
                    let run = &batch[*i];
                    for (seq, body) in &run.parts {
                        let body = packed::remap(body, |d| {
                            to.get(&d)
                                .copied()
                                .ok_or_else(|| "an unknown descriptor".into())
                        })
                        .map_err(|e| DbError::other(format!("run {} is damaged: {e}", run.id)))?;
                        parts.extend([Value::Int(*id), Value::Int(*seq), Value::Blob(body)]);
                    }
                    for row in &run.scores {
                        let mut row = row.clone();
                        row[0] = Value::Int(*id);
                        scores.push(row);
                    }
                }
                for chunk in parts.chunks(3 * PARTS_PER_STATEMENT) {
                    db.execute(
                        &format!(
                            "INSERT INTO run_parts (run_id, seq, body) VALUES {}",
                            sql::values_list(chunk.len() / 3, 3)
                        ),
                        chunk,
                    )?;
                }
                insert_score_rows(db, &scores)?;
                Ok(new.len())
            })?;
            count.pushed += inserted;
            count.already += batch.len() - inserted;
            progress(&count);
        }
        Ok(count)
    }
}

/// Parts per statement (each a run's whole contents: a few statements a batch).
const PARTS_PER_STATEMENT: usize = 50;

/// One run of a batch as the source store holds it: its row's values, its parts (their
/// bytes, and the descriptor ids they name) and its score rows. Nothing of it is parsed as a
/// record: a push copies what is stored.
struct SourceRun {
    id: i64,
    uuid: String,
    row: Vec<Value>,
    parts: Vec<(i64, Vec<u8>)>,
    desc_ids: Vec<i64>,
    scores: Vec<[Value; 9]>,
}

/// The next batch of runs after id `after`.
fn read_batch(
    db: &mut dyn Db,
    after: i64,
    label: &Option<String>,
    include_incomplete: bool,
) -> Result<Vec<SourceRun>, DbError> {
    let rows = db.query(
        &format!(
            "SELECT id, {RUN_COLUMNS} FROM runs
             WHERE id > $1 AND ($2 = '' OR label = $2) AND ($3 OR NOT incomplete)
             ORDER BY id LIMIT $4"
        ),
        params![
            after,
            label.clone().unwrap_or_default(),
            include_incomplete,
            BATCH as i64
        ],
    )?;
    let Some(last) = rows.last() else {
        return Ok(Vec::new());
    };
    let (first, last) = (rows[0].int(0)?, last.int(0)?);
    let mut parts: HashMap<i64, Vec<(i64, Vec<u8>)>> = HashMap::new();
    for r in db.query(
        "SELECT run_id, seq, body FROM run_parts WHERE run_id BETWEEN $1 AND $2
         ORDER BY run_id, seq",
        params![first, last],
    )? {
        parts
            .entry(r.int(0)?)
            .or_default()
            .push((r.int(1)?, r.blob(2)?.to_vec()));
    }
    let mut scores: HashMap<i64, Vec<[Value; 9]>> = HashMap::new();
    for r in db.query(
        "SELECT run_id, key, name, CAST(params_json AS TEXT), title, unit, direction, value,
                samples_json
         FROM metrics WHERE run_id BETWEEN $1 AND $2",
        params![first, last],
    )? {
        let row: [Value; 9] =
            r.0.try_into()
                .map_err(|_| DbError::other("a score row has the wrong columns"))?;
        scores.entry(row_id(&row)?).or_default().push(row);
    }
    let uuid_at = 1 + RUN_COLUMNS
        .split(',')
        .position(|c| c.trim() == "uuid")
        .unwrap_or(8);
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let id = r.int(0)?;
        let run_parts = parts.remove(&id).unwrap_or_default();
        let mut desc_ids = Vec::new();
        for (_, body) in &run_parts {
            desc_ids.extend(
                packed::desc_ids(body)
                    .map_err(|e| DbError::other(format!("run {id} is damaged: {e}")))?,
            );
        }
        desc_ids.sort_unstable();
        desc_ids.dedup();
        let mut row: Vec<Value> = r.0[1..].to_vec();
        // A run of a store older than UUIDs gets one now (as `with_uuid` gives a record).
        let uuid = match r.opt_text(uuid_at)? {
            Some(u) => u,
            None => crate::record::new_uuid(),
        };
        row[uuid_at - 1] = uuid.as_str().into();
        out.push(SourceRun {
            id,
            uuid,
            row,
            parts: run_parts,
            desc_ids,
            scores: scores.remove(&id).unwrap_or_default(),
        });
    }
    Ok(out)
}

fn row_id(row: &[Value; 9]) -> Result<i64, DbError> {
    match row[0] {
        Value::Int(i) => Ok(i),
        _ => Err(DbError::other("a score row has no run")),
    }
}

/// Inserts the runs whose UUID the store does not have yet (their rows, a statement for
/// all); returns (id, index in `runs`) of those inserted (the others were already there).
fn insert_new_runs(db: &mut dyn Db, runs: &[SourceRun]) -> Result<Vec<(i64, usize)>, DbError> {
    if runs.is_empty() {
        return Ok(Vec::new());
    }
    let values: Vec<Value> = runs.iter().flat_map(|r| r.row.iter().cloned()).collect();
    let rows = db.query(
        &format!(
            "INSERT INTO runs ({RUN_COLUMNS}) VALUES {} ON CONFLICT (uuid) DO NOTHING \
             RETURNING id, uuid",
            sql::values_list(runs.len(), 13)
        ),
        &values,
    )?;
    let index: HashMap<&str, usize> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| (r.uuid.as_str(), i))
        .collect();
    let mut inserted = Vec::with_capacity(rows.len());
    for row in &rows {
        let uuid = row.text(1)?;
        let i = *index
            .get(uuid.as_str())
            .ok_or_else(|| DbError::other("the store returned a UUID it was not given"))?;
        inserted.push((row.int(0)?, i));
    }
    Ok(inserted)
}
