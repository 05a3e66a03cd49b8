//! A run record as its parts hold it (schema version 8), and back, and the writing and
//! reading of a run's parts. The metrics become [`Entry`]s (a descriptor id, the value, the
//! samples), the rest of the record the lines of its JSON document with `metrics` empty
//! (split into lines down to its items' fields). A monitor counter or gauge whose value a
//! metric of the same name and unit repeats (most of them: the monitor rows are made from
//! them) is written as `null` there and filled back from that metric on reading, so a value
//! is stored once.
//!
//! A document whose `metrics` are not empty was kept whole: a record an earlier build wrote
//! that this build could not split when the store was migrated (it is read as it was).

use super::descs::DescCache;
use super::packed::{self, Contents, Entry, Part};
use super::sql::{params, Db, DbError};
use crate::record::{Metric, RunRecord};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// The stored contents of a record, its descriptors found or added through `cache`. The
/// record's metrics are taken out while the rest is written, and put back.
pub fn contents_of(
    db: &mut dyn Db,
    cache: &mut DescCache,
    record: &mut RunRecord,
) -> Result<Contents, DbError> {
    let ids = cache.ids_of(db, &record.metrics)?;
    let metrics = record
        .metrics
        .iter()
        .zip(ids)
        .map(|(m, desc)| Entry {
            desc,
            value: m.value,
            samples: m.samples.clone(),
        })
        .collect();
    let all = std::mem::take(&mut record.metrics);
    let doc = serde_json::to_value(&*record);
    record.metrics = all;
    let mut doc = doc.map_err(|e| DbError::other(format!("cannot write the run's record: {e}")))?;
    swap_repeated(&mut doc, &record.metrics, Swap::Drop);
    Ok(Contents {
        metrics,
        lines: lines_of(&doc),
    })
}

/// The contents of a document kept whole (its metrics inside it).
pub fn whole_document(doc: &Value) -> Contents {
    Contents {
        metrics: Vec::new(),
        lines: lines_of(doc),
    }
}

/// How deep a record document is split into lines: the record's fields, their items (a
/// test, a monitor unit, a load point) and those items' fields each start a line, and
/// anything deeper stays on its line. A finished unit then adds lines and changes a few
/// (its neighbour's comma, the end time, the index), which is all its part holds.
const SPLIT_DEPTH: usize = 3;

fn lines_of(doc: &Value) -> Vec<String> {
    let mut text = String::with_capacity(64 * 1024);
    write_split(doc, 0, &mut text);
    text.split('\n').map(str::to_string).collect()
}

/// JSON text with a line break after each opening bracket and each comma, and before each
/// closing bracket, down to [`SPLIT_DEPTH`].
fn write_split(v: &Value, depth: usize, out: &mut String) {
    let compact = |v: &Value, out: &mut String| {
        out.push_str(&serde_json::to_string(v).unwrap_or_default());
    };
    match v {
        Value::Object(m) if depth < SPLIT_DEPTH && !m.is_empty() => {
            out.push_str("{\n");
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                out.push_str(&serde_json::to_string(k).unwrap_or_default());
                out.push(':');
                write_split(x, depth + 1, out);
            }
            out.push_str("\n}");
        }
        Value::Array(a) if depth < SPLIT_DEPTH && !a.is_empty() => {
            out.push_str("[\n");
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                write_split(x, depth + 1, out);
            }
            out.push_str("\n]");
        }
        _ => compact(v, out),
    }
}

/// What stored contents say: the record document (metrics empty when they are apart) and the
/// metrics apart from it.
pub struct Read {
    pub doc: Value,
    pub metrics: Vec<Metric>,
}

/// Reads stored contents back, loading their descriptors through `cache`.
pub fn read(db: &mut dyn Db, cache: &mut DescCache, contents: Contents) -> Result<Read, DbError> {
    let text = contents.lines.join("\n");
    let mut doc: Value = serde_json::from_str(&text)
        .map_err(|e| DbError::other(format!("a stored record is not JSON ({e})")))?;
    cache.load(db, contents.metrics.iter().map(|e| e.desc))?;
    let mut metrics = Vec::with_capacity(contents.metrics.len());
    for e in contents.metrics {
        let desc = cache
            .get(e.desc)
            .ok_or_else(|| DbError::other("a metric descriptor went missing"))?;
        metrics.push(desc.metric(e.value, e.samples));
    }
    swap_repeated(&mut doc, &metrics, Swap::Fill);
    Ok(Read { doc, metrics })
}

#[derive(Clone, Copy, PartialEq)]
enum Swap {
    /// A counter or gauge equal to its metric becomes null.
    Drop,
    /// A null counter or gauge takes its metric's value.
    Fill,
}

/// Drops or fills the monitor values a metric repeats: the metric whose key is the counter's
/// name with the unit's parameters, when exactly one metric has that key.
fn swap_repeated(doc: &mut Value, metrics: &[Metric], swap: Swap) {
    let Some(units) = doc.get_mut("monitors").and_then(Value::as_array_mut) else {
        return;
    };
    let mut by_key: HashMap<(&str, &BTreeMap<String, String>), Option<f64>> =
        HashMap::with_capacity(metrics.len());
    for m in metrics {
        by_key
            .entry((m.name.as_str(), &m.params))
            .and_modify(|v| *v = None)
            .or_insert(Some(m.value));
    }
    for unit in units {
        let params: BTreeMap<String, String> = unit
            .get("params")
            .and_then(|p| serde_json::from_value(p.clone()).ok())
            .unwrap_or_default();
        let Some(sample) = unit.get_mut("sample") else {
            continue;
        };
        for field in ["counters", "gauges"] {
            let Some(values) = sample.get_mut(field).and_then(Value::as_object_mut) else {
                continue;
            };
            for (name, v) in values.iter_mut() {
                let Some(Some(m)) = by_key.get(&(name.as_str(), &params)).copied() else {
                    continue;
                };
                match swap {
                    Swap::Drop => {
                        if v.as_f64().is_some_and(|x| x.to_bits() == m.to_bits()) {
                            *v = Value::Null;
                        }
                    }
                    Swap::Fill => {
                        if v.is_null() {
                            if let Some(n) = serde_json::Number::from_f64(m) {
                                *v = Value::Number(n);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Stores a run's first part: all of `contents`.
pub fn add_whole(db: &mut dyn Db, run_id: i64, contents: &Contents) -> Result<(), DbError> {
    db.execute(
        "INSERT INTO run_parts (run_id, seq, body) VALUES ($1, 0, $2)",
        params![run_id, packed::encode_whole(contents)],
    )
    .map(|_| ())
}

/// Appends a run's part number `seq`.
pub fn add_part(db: &mut dyn Db, run_id: i64, seq: i64, part: &Part) -> Result<(), DbError> {
    db.execute(
        "INSERT INTO run_parts (run_id, seq, body) VALUES ($1, $2, $3)",
        params![run_id, seq, packed::encode(part)],
    )
    .map(|_| ())
}

/// What a run's parts add up to, and how many it has; None when it has none.
pub fn stored_contents(db: &mut dyn Db, id: i64) -> Result<Option<(Contents, i64)>, DbError> {
    let rows = db.query(
        "SELECT body FROM run_parts WHERE run_id=$1 ORDER BY seq",
        params![id],
    )?;
    if rows.is_empty() {
        return Ok(None);
    }
    let mut contents = Contents::default();
    for r in &rows {
        let part = packed::decode(r.blob(0)?)
            .map_err(|e| DbError::other(format!("run {id} is damaged: {e}")))?;
        contents
            .apply(part)
            .map_err(|e| DbError::other(format!("run {id} is damaged: {e}")))?;
    }
    Ok(Some((contents, rows.len() as i64)))
}
