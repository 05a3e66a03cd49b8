//! Monitor rows too sporadic to judge on this box: rows `compare` would show in its second
//! table (they vary, and a count reaches [`COUNT_FLOOR`] in some run) whose runs disagree so
//! much that a difference between two small sets of them says little:
//! - present in some runs only, or zero in some runs and at least [`COUNT_FLOOR`] in others
//!   (a counter that fires now and then: interrupts of a device, compaction, reclaim);
//! - or a CV above [`SPORADIC_CV`] over the runs.

use super::pool::Pool;
use crate::compare::COUNT_FLOOR;
use crate::record::monitors::is_monitor;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// A CV (as a fraction) above which a monitor row counts as too sporadic.
pub const SPORADIC_CV: f64 = 0.5;

/// One row too sporadic to judge.
#[derive(Debug, Clone, Serialize)]
pub struct Sporadic {
    pub key: String,
    pub unit: String,
    /// Runs with the row, and with it at zero.
    pub runs: usize,
    pub present: usize,
    pub zero: usize,
    pub max: f64,
    pub cv_pct: Option<f64>,
    /// Why, in words.
    pub why: String,
}

/// The pool's sporadic monitor rows, the most sporadic (most runs without it) first.
pub fn rows(pool: &Pool) -> Vec<Sporadic> {
    let n = pool.runs.len();
    let mut by_key: BTreeMap<String, (Vec<f64>, String)> = BTreeMap::new();
    for (_, r) in &pool.runs {
        for m in r.metrics.iter().filter(|m| is_monitor(&m.name)) {
            by_key
                .entry(m.key())
                .or_insert_with(|| (Vec::new(), m.unit.to_string()))
                .0
                .push(m.value);
        }
    }
    // A count below the floor in every run is left out with its per-operation row, as
    // compare's second table leaves them out.
    let small: BTreeSet<String> = by_key
        .iter()
        .filter(|(_, (v, unit))| unit == "count" && v.iter().all(|x| *x < COUNT_FLOOR))
        .map(|(k, _)| k.clone())
        .collect();
    let mut out = Vec::new();
    for (key, (v, unit)) in by_key {
        if small.contains(&key) || small.contains(&key.replacen(".per-op", "", 1)) {
            continue;
        }
        let max = v.iter().copied().fold(0.0f64, f64::max);
        let min = v.iter().copied().fold(f64::INFINITY, f64::min);
        if min >= max || (unit == "count" && max < COUNT_FLOOR) {
            continue;
        }
        let zero = v.iter().filter(|x| **x == 0.0).count();
        let missing = n - v.len();
        let cv = crate::stats::stddev_pct(crate::stats::stddev(&v), crate::stats::mean(&v));
        let why = if missing > 0 || zero > 0 {
            format!(
                "zero or absent in {} of {n} runs, up to {}",
                zero + missing,
                short(max)
            )
        } else if cv.is_some_and(|c| c > 100.0 * SPORADIC_CV) {
            format!("CV {:.0} % over {n} runs", cv.unwrap_or(0.0))
        } else {
            continue;
        };
        out.push(Sporadic {
            key,
            unit,
            runs: n,
            present: v.len(),
            zero,
            max,
            cv_pct: cv,
            why,
        });
    }
    out.sort_by(|a, b| {
        let quiet = |s: &Sporadic| s.runs - s.present + s.zero;
        quiet(b)
            .cmp(&quiet(a))
            .then(b.cv_pct.unwrap_or(0.0).total_cmp(&a.cv_pct.unwrap_or(0.0)))
            .then(a.key.cmp(&b.key))
    });
    out
}

/// A number in a few digits: 1234 → 1234, 1234567 → 1.23e6, 0.000123 → 1.23e-4.
fn short(x: f64) -> String {
    if x.abs() >= 1e6 || (x != 0.0 && x.abs() < 0.01) {
        format!("{x:.2e}")
    } else if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}
