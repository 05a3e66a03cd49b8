//! `patchbench compare`: base vs patched, per metric: n, mean, spread, %change and a verdict.
//!
//! Each side is a set of runs. Metrics are matched by key (name + params); the per-run values
//! of a metric are its samples (LKP style). When each side is one run and the metric carries
//! at least 3 within-run samples (UnixBench's kept passes), those are used instead and the
//! output says so. The verdict comes from [`verdict::judge`]; the formats in [`format`] only
//! print what is computed here. [`comparability`] lists what differs between the sides.

pub mod comparability;

pub mod verdict;

use crate::record::{Direction, Metric, RunRecord};
use crate::stats;
use serde::Serialize;
use std::collections::BTreeMap;
use verdict::{Judgement, Settings, Verdict};

/// One side of a comparison: what the user named, and its runs (each with an id or file name).
#[derive(Debug, Clone)]
pub struct Side {
    pub name: String,
    pub runs: Vec<(String, RunRecord)>,
}

/// Where the samples of a verdict came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SampleSource {
    /// One value per run.
    Runs,
    /// One run per side: the passes within that run (n = passes within one run).
    PassesWithinOneRun,
}

/// Summary of one side of one metric.
#[derive(Debug, Clone, Serialize)]
pub struct SideStats {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation as % of the mean (None below 2 samples).
    pub stddev_pct: Option<f64>,
    /// Population standard deviation as % of the mean (LKP's `± N%`).
    pub pop_stddev_pct: Option<f64>,
    pub min: f64,
    pub max: f64,
    pub samples: Vec<f64>,
}

impl SideStats {
    fn of(samples: Vec<f64>) -> Option<SideStats> {
        let mean = stats::mean(&samples)?;
        Some(SideStats {
            n: samples.len(),
            mean,
            stddev_pct: stats::stddev_pct(stats::stddev(&samples), Some(mean)),
            pop_stddev_pct: stats::stddev_pct(stats::pop_stddev(&samples), Some(mean)),
            min: samples.iter().copied().fold(f64::INFINITY, f64::min),
            max: samples.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            samples,
        })
    }
}

/// One metric compared.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub key: String,
    pub name: String,
    pub params: BTreeMap<String, String>,
    pub title: String,
    pub unit: String,
    pub direction: Direction,
    pub base: Option<SideStats>,
    pub patched: Option<SideStats>,
    /// 100 × (mean patched − mean base) / mean base.
    pub change_pct: Option<f64>,
    pub source: SampleSource,
    #[serde(flatten)]
    pub judgement: Judgement,
}

impl Row {
    /// A row title that says which instance it is: the title plus the params it lacks.
    pub fn display_name(&self) -> String {
        let extra: Vec<String> = self
            .params
            .iter()
            .filter(|(k, _)| k.as_str() != "test")
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let title = if self.title.is_empty() {
            &self.name
        } else {
            &self.title
        };
        if extra.is_empty() {
            title.clone()
        } else {
            format!("{title} [{}]", extra.join(","))
        }
    }
}

/// The whole comparison, as every format prints it.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub base: String,
    pub patched: String,
    pub base_runs: Vec<String>,
    pub patched_runs: Vec<String>,
    pub settings: Settings,
    pub warnings: Vec<String>,
    /// Notes about how verdicts were reached (e.g. one run per side).
    pub notes: Vec<String>,
    pub rows: Vec<Row>,
}

impl Comparison {
    /// Rows that regressed significantly by more than `pct` percent.
    pub fn regressions_beyond(&self, pct: f64) -> Vec<&Row> {
        self.rows
            .iter()
            .filter(|r| r.judgement.verdict == Verdict::Regressed)
            .filter(|r| r.change_pct.is_some_and(|c| c.abs() > pct))
            .collect()
    }
}

/// Compares two sides metric by metric.
pub fn compare(base: &Side, patched: &Side, settings: &Settings) -> Comparison {
    let b = metrics_by_key(base);
    let p = metrics_by_key(patched);
    let mut keys: Vec<&String> = b.order.iter().collect();
    keys.extend(p.order.iter().filter(|k| !b.map.contains_key(*k)));
    let one_run_each = base.runs.len() == 1 && patched.runs.len() == 1;
    let mut rows = Vec::new();
    let mut used_passes = false;
    for key in keys {
        let bm = b.map.get(key).map(Vec::as_slice).unwrap_or(&[]);
        let pm = p.map.get(key).map(Vec::as_slice).unwrap_or(&[]);
        let Some(first) = bm.first().or(pm.first()) else {
            continue;
        };
        let use_passes = one_run_each
            && bm.len() == 1
            && pm.len() == 1
            && bm[0].samples.len() >= 3
            && pm[0].samples.len() >= 3;
        used_passes |= use_passes;
        let values = |ms: &[&Metric]| -> Vec<f64> {
            if use_passes {
                ms[0].samples.clone()
            } else {
                ms.iter().map(|m| m.value).collect()
            }
        };
        let (bs, ps) = (SideStats::of(values(bm)), SideStats::of(values(pm)));
        let change_pct = match (&bs, &ps) {
            (Some(x), Some(y)) if x.mean != 0.0 => Some(100.0 * (y.mean - x.mean) / x.mean.abs()),
            _ => None,
        };
        let mut judgement = verdict::judge(&values(bm), &values(pm), first.direction, settings);
        if bm.is_empty() || pm.is_empty() {
            judgement.reason = Some(format!(
                "only in {}",
                if bm.is_empty() {
                    &patched.name
                } else {
                    &base.name
                }
            ));
        } else if one_run_each && !use_passes {
            judgement.reason = Some("one run per side".to_string());
        }
        rows.push(Row {
            key: key.clone(),
            name: first.name.clone(),
            params: first.params.clone(),
            title: first.title.clone(),
            unit: first.unit.clone(),
            direction: first.direction,
            base: bs,
            patched: ps,
            change_pct,
            source: if use_passes {
                SampleSource::PassesWithinOneRun
            } else {
                SampleSource::Runs
            },
            judgement,
        });
    }
    let mut notes = Vec::new();
    if one_run_each {
        notes.push(if used_passes {
            "one run per side: where a metric has ≥3 passes, n = passes within one run (they \
             share the run's conditions, so the verdict is weaker than one over runs); other \
             metrics get no verdict"
                .to_string()
        } else {
            "one run per side: no verdict possible; repeat each side at least 3 times".to_string()
        });
    }
    Comparison {
        base: base.name.clone(),
        patched: patched.name.clone(),
        base_runs: base.runs.iter().map(|r| r.0.clone()).collect(),
        patched_runs: patched.runs.iter().map(|r| r.0.clone()).collect(),
        settings: settings.clone(),
        warnings: comparability::differences(base, patched),
        notes,
        rows,
    }
}

struct ByKey<'a> {
    order: Vec<String>,
    map: BTreeMap<String, Vec<&'a Metric>>,
}

fn metrics_by_key(side: &Side) -> ByKey<'_> {
    let mut out = ByKey {
        order: Vec::new(),
        map: BTreeMap::new(),
    };
    for (_, run) in &side.runs {
        for m in &run.metrics {
            let key = m.key();
            let entry = out.map.entry(key.clone()).or_default();
            if entry.is_empty() {
                out.order.push(key);
            }
            entry.push(m);
        }
    }
    out
}
