//! Decoding a stored record: what a run's parts hold (`stored_form`) read back as a
//! [`RunRecord`], brought up to date when an earlier build wrote it
//! (`crate::record::upgrade`). A store written by an
//! earlier build may hold values outside their domain (`inf` read back as `null`, zero
//! scores): migrating to schema version 2 moved such metric rows to `metrics_refused` (kept,
//! not deleted), and reading a run leaves out, with a warning naming each, the results whose
//! numbers are bad, so the run's other results and the label's other runs stay usable.

use super::db::Store;
use super::stored_form::Read;
use crate::record::aim7::Aim7Point;
use crate::record::model::ModelPoint;
use crate::record::will_it_scale::ScalePoint;
use crate::record::{IndexScore, Metric, RunRecord, TestResult};
use anyhow::Context;
use serde::Deserialize;

impl Store {
    /// The record a run's parts hold: its document with its metrics put back (kept apart
    /// from it, or inside a document kept whole).
    pub(super) fn record_of(&self, id: i64, read: Read) -> anyhow::Result<Option<RunRecord>> {
        let Read { mut doc, metrics } = read;
        let apart = doc
            .get("metrics")
            .and_then(|m| m.as_array())
            .is_some_and(|m| m.is_empty());
        if apart {
            if let Ok(mut r) = RunRecord::deserialize(&doc) {
                r.metrics = metrics;
                if r.schema == crate::record::SCHEMA && r.validate().is_ok() {
                    return Ok(Some(r));
                }
                doc["metrics"] = serde_json::to_value(&r.metrics)?;
            } else {
                doc["metrics"] = serde_json::to_value(&metrics)?;
            }
        }
        self.read_record(id, &doc.to_string())
    }

    /// The document a run's parts hold, its metrics put back, exactly as stored: nothing is
    /// brought up to date or left out (for tests and for looking at a store by hand).
    pub fn stored_document(&self, id: i64) -> anyhow::Result<Option<serde_json::Value>> {
        let read =
            self.reading_runs(
                |db, cache| match super::stored_form::stored_contents(db, id)? {
                    Some((contents, _)) => super::stored_form::read(db, cache, contents).map(Some),
                    None => Ok(None),
                },
            )?;
        let Some(Read { mut doc, metrics }) = read else {
            return Ok(None);
        };
        if doc
            .get("metrics")
            .and_then(|m| m.as_array())
            .is_some_and(|m| m.is_empty())
        {
            doc["metrics"] = serde_json::to_value(&metrics)?;
        }
        Ok(Some(doc))
    }

    /// Reads a stored record document, leaving out (with a warning) results whose numbers
    /// are outside their domain.
    pub(super) fn read_record(&self, id: i64, json: &str) -> anyhow::Result<Option<RunRecord>> {
        let damaged = || format!("run {id} in {} is damaged", self.location());
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
                self.location()
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

#[cfg(test)]
mod tests {
    use crate::record::will_it_scale::ScalePoint;
    use crate::record::{Direction, Kind, Metric, RunRecord};
    use crate::store::db::Store;
    use crate::store::sql::params;
    use crate::store::{Access, Location};
    use std::collections::BTreeMap;

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
        // Kept whole, as migrating a store keeps a record this build cannot split.
        let whole = crate::store::stored_form::whole_document(&doc);
        let part = crate::store::packed::Part::whole(&whole.metrics, &whole.lines);
        let db = store.db();
        db.execute("DELETE FROM run_parts WHERE run_id=$1", params![id])
            .unwrap();
        crate::store::stored_form::add_part(db, id, 0, &part).unwrap();
        store.written = None;
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
