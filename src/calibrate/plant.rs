//! Planted changes: a known change written into the patched side of an A/A table, to see
//! how often `compare` finds it in real noise.
//!
//! Three plants, each in one row the pool chooses:
//! - the headline score (`campaign::primary::headline`: the index at the fewest copies,
//!   AIM7's jobs/min, will-it-scale's ops at the most tasks, …) × 0.95: a 5 % loss;
//! - a steady counter × 2: of the monitor rows present in every run, at least
//!   [`COUNT_FLOOR`] in each (counts; other units above 0) and with a CV above 0 and at most
//!   [`STEADY_CV`], the one with the median CV, of the count rows only (a gauge drifts);
//! - a sporadic counter made steady: of the count rows present in every run, zero in some and
//!   at least [`COUNT_FLOOR`] in another, the one non-zero in most runs (then by key); the
//!   patched side's values are all replaced by the base side's largest value in that table.
//!
//! A plant is found when its row is labelled improved or regressed with the estimate on the
//! side the plant moved it to. The score plant is judged in tables of the score rows only,
//! the two counter plants together in one table of every row: each family is corrected on
//! its own, so a plant in one family changes no verdict of the other.

use super::pool::Pool;
use crate::compare::{Comparison, Side, COUNT_FLOOR};
use crate::record::monitors::is_monitor;
use crate::record::Metric;
use serde::Serialize;
use std::collections::BTreeMap;

/// The largest CV (as a fraction) of a steady counter.
pub const STEADY_CV: f64 = 0.10;

/// What a plant does to its row in the patched side.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// Every value times this factor.
    Scale(f64),
    /// Every value replaced by the base side's largest.
    SteadyAtBaseMax,
}

/// A change planted in one row.
#[derive(Debug, Clone, Serialize)]
pub struct Plant {
    /// `score`, `steady counter` or `sporadic counter`.
    pub what: &'static str,
    pub key: String,
    /// The row's metric name and params (what [`apply`] and [`found`] match).
    #[serde(skip)]
    pub name: String,
    #[serde(skip)]
    pub params: BTreeMap<String, String>,
    pub change: Change,
    /// +1 when the plant raises the row, −1 when it lowers it.
    pub sign: f64,
    /// The row's CV over the pool's runs (%).
    pub cv_pct: Option<f64>,
}

impl Plant {
    /// A plant of `change` in the row of metric `m`.
    pub fn new(what: &'static str, m: &Metric, change: Change, sign: f64) -> Plant {
        Plant {
            what,
            key: m.key(),
            name: m.name.to_string(),
            params: m.params.to_map(),
            change,
            sign,
            cv_pct: None,
        }
    }

    /// Whether the plant is in a score row (else a monitor row).
    pub fn in_scores(&self) -> bool {
        !is_monitor(&self.name)
    }

    fn is(&self, m: &Metric) -> bool {
        m.name == self.name && m.params == self.params
    }
}

/// Each run's value of every metric, by key.
fn values_by_key(pool: &Pool) -> BTreeMap<String, (Vec<f64>, &Metric)> {
    let mut out: BTreeMap<String, (Vec<f64>, &Metric)> = BTreeMap::new();
    for (_, r) in &pool.runs {
        for m in &r.metrics {
            out.entry(m.key())
                .or_insert_with(|| (Vec::new(), m))
                .0
                .push(m.value);
        }
    }
    out
}

/// CV of `v` in %.
fn cv_pct(v: &[f64]) -> Option<f64> {
    crate::stats::stddev_pct(crate::stats::stddev(v), crate::stats::mean(v))
}

/// The plants this pool allows (a pool without such a row has no plant of that kind).
pub fn choose(pool: &Pool) -> Vec<Plant> {
    let mut out = Vec::new();
    let Some((_, first)) = pool.runs.first() else {
        return out;
    };
    let by_key = values_by_key(pool);
    let n = pool.runs.len();
    if let Some(h) = crate::campaign::primary::headline(&first.metrics) {
        out.push(Plant {
            cv_pct: by_key.get(&h.key()).and_then(|(v, _)| cv_pct(v)),
            ..Plant::new("score", h, Change::Scale(0.95), -1.0)
        });
    }
    let monitors = || {
        by_key
            .iter()
            .filter(move |(_, (v, m))| is_monitor(&m.name) && v.len() == n)
    };
    let mut steady: Vec<(f64, &String)> = monitors()
        .filter(|(_, (v, m))| {
            let floor = if m.unit == "count" {
                COUNT_FLOOR
            } else {
                f64::MIN_POSITIVE
            };
            v.iter().all(|x| *x >= floor)
        })
        .filter_map(|(k, (v, _))| Some((cv_pct(v)?, k)))
        .filter(|(cv, _)| *cv > 0.0 && *cv <= 100.0 * STEADY_CV)
        .collect();
    // Counters only (counts of events): a gauge such as MemAvailable drifts over a session,
    // and a drifting row is labelled so, not judged; a pool without a steady count has no
    // such plant.
    let is_count = |k: &String| by_key.get(k).is_some_and(|(_, m)| m.unit == "count");
    steady.retain(|(_, k)| is_count(k));
    steady.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(b.1)));
    if let Some((cv, key)) = steady.get(steady.len() / 2) {
        if let Some((_, m)) = by_key.get(*key) {
            out.push(Plant {
                cv_pct: Some(*cv),
                ..Plant::new("steady counter", m, Change::Scale(2.0), 1.0)
            });
        }
    }
    let sporadic = monitors()
        .filter(|(_, (v, m))| {
            m.unit == "count" && v.contains(&0.0) && v.iter().any(|x| *x >= COUNT_FLOOR)
        })
        .max_by(|a, b| {
            let nz = |v: &[f64]| v.iter().filter(|x| **x != 0.0).count();
            nz(&a.1 .0).cmp(&nz(&b.1 .0)).then(b.0.cmp(a.0))
        });
    if let Some((_, (v, m))) = sporadic {
        out.push(Plant {
            cv_pct: cv_pct(v),
            ..Plant::new("sporadic counter", m, Change::SteadyAtBaseMax, 1.0)
        });
    }
    out
}

/// `patched` with the plants written into its runs (`base` gives the sporadic plant's value).
pub fn apply(plants: &[&Plant], base: &Side, patched: &Side) -> Side {
    let mut out = patched.clone();
    apply_in(plants, base, &mut out);
    out
}

/// Writes the plants into `patched` itself (a table's patched side, once its A/A comparison
/// is done: a copy of 20 runs costs as much as half a comparison).
pub fn apply_in(plants: &[&Plant], base: &Side, patched: &mut Side) {
    for plant in plants {
        write(plant, base, patched);
    }
}

/// Writes one plant into `patched`.
fn write(plant: &Plant, base: &Side, patched: &mut Side) {
    let base_max = base
        .runs
        .iter()
        .flat_map(|(_, r)| r.metrics.iter())
        .filter(|m| plant.is(m))
        .map(|m| m.value)
        .fold(0.0f64, f64::max);
    for (_, r) in patched.runs.iter_mut() {
        for m in r.metrics.iter_mut().filter(|m| plant.is(m)) {
            match plant.change {
                Change::Scale(f) => {
                    m.value *= f;
                    m.samples.iter_mut().for_each(|s| *s *= f);
                }
                Change::SteadyAtBaseMax => {
                    m.value = base_max;
                    m.samples.iter_mut().for_each(|s| *s = base_max);
                }
            }
        }
    }
}

/// Whether `c` found the plant: its row flagged, the estimate on the plant's side. (A
/// UnixBench index of some tests only is a row with a `partial` param naming them.)
pub fn found(plant: &Plant, c: &Comparison) -> bool {
    let same_params = |p: &BTreeMap<String, String>| {
        p.len() - usize::from(p.contains_key("partial")) == plant.params.len()
            && plant.params.iter().all(|(k, v)| p.get(k) == Some(v))
    };
    c.rows.iter().chain(&c.why).any(|r| {
        r.name == plant.name
            && same_params(&r.params)
            && r.judgement.verdict.is_flag()
            && r.judgement
                .estimate
                .as_ref()
                .map(|e| e.point_pct)
                .or(r.change_pct)
                .is_some_and(|p| p * plant.sign > 0.0)
    })
}
