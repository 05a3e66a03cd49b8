//! The two-level model of a comparison: runs, and samples inside runs.
//!
//! A run (one `patchbench run`/`aim7`/`scale` invocation, or one imported report) gives one
//! value per metric: its score as the tool defines it (for UnixBench, the geometric mean of the
//! kept passes). Those run values are the observations a verdict uses. The samples inside a run
//! (passes, per-second rates, AIM7 iterations) are not independent of each other (they share
//! the boot, the placement of processes, the page cache, the frequency) and are never used as
//! observations; they give the *within-run* spread, shown for information, and tell whether
//! more passes could help at all: when the spread between runs is larger than what the
//! within-run spread contributes to a run value, only more runs narrow the verdict.
//!
//! Spreads are standard deviations of ln(value), printed in % (for small spreads this is the
//! coefficient of variation). A side with fewer than 3 runs may borrow its between-run spread
//! from a [`NoiseProfile`]: repeated runs of the same host, kernel and settings in the store.

use crate::record::{Metric, RunRecord, SharedStr};
use crate::stats::welch::LogSample;
use serde::Serialize;
use std::collections::BTreeMap;

/// One run's value of one metric, with the spread of the samples inside the run.
#[derive(Debug, Clone, Serialize)]
pub struct RunValue {
    /// Run id (store id or file name), shared by the run's values.
    pub run: SharedStr,
    /// Position of the run in time among all runs of the comparison (0 = first).
    pub order: usize,
    pub value: f64,
    /// Samples inside the run and their spread (sd of ln, in %); None below 2 samples.
    pub within_pct: Option<f64>,
    pub samples: usize,
}

/// Which level of spread is larger for a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// The spread between runs exceeds what the within-run spread explains: add runs, not
    /// passes.
    BetweenRuns,
    /// The within-run spread explains the spread of run values: longer or more passes help.
    WithinRuns,
}

/// The two levels of spread of one row, pooled over both sides.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Spread {
    /// sd of ln(run value) within each side, pooled (in %); None below 2 runs on every side.
    pub between_pct: Option<f64>,
    /// Degrees of freedom of `between_pct`.
    pub between_df: f64,
    /// sd of ln(sample) inside a run, root mean square over the runs (in %).
    pub within_pct: Option<f64>,
    /// Mean number of samples per run.
    pub samples_per_run: Option<f64>,
    /// What the within-run spread contributes to a run value if samples were independent:
    /// within / √samples (in %).
    pub within_on_value_pct: Option<f64>,
    pub dominates: Option<Level>,
}

/// Between-run spreads measured on repeated runs of one host, kernel and settings.
#[derive(Debug, Clone, Serialize)]
pub struct NoiseProfile {
    /// What the profile was made from, for the output ("7 runs of host x, kernel y").
    pub description: String,
    /// metric key → spread.
    pub metrics: BTreeMap<String, ProfileEntry>,
}

/// The between-run spread of one metric in a noise profile.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ProfileEntry {
    /// sd of ln(run value), pooled within groups.
    pub sd: f64,
    pub df: f64,
    pub runs: usize,
}

impl NoiseProfile {
    /// Pools the spread of every metric within each group of runs (a group: runs of one
    /// condition, e.g. one label); groups of one run add nothing. Metrics with fewer than 2
    /// degrees of freedom are left out. None when nothing remains.
    pub fn from_groups(description: String, groups: &[Vec<&RunRecord>]) -> Option<NoiseProfile> {
        let mut variances = Vec::new();
        for group in groups {
            let mut by_key: BTreeMap<String, Vec<f64>> = BTreeMap::new();
            for run in group {
                for m in &run.metrics {
                    if m.value.is_finite() && m.value > 0.0 {
                        by_key.entry(m.key()).or_default().push(m.value);
                    }
                }
            }
            for (key, values) in by_key {
                if let Some(var) = LogSample::of(&values).and_then(|s| s.var) {
                    variances.push((key, values.len(), var));
                }
            }
        }
        NoiseProfile::from_group_variances(description, variances)
    }

    /// The same from each group's spread, computed elsewhere (the store pools them in the
    /// database): per (metric key, values in the group, variance of ln(value)), one entry per
    /// group of two or more values.
    pub fn from_group_variances(
        description: String,
        groups: impl IntoIterator<Item = (String, usize, f64)>,
    ) -> Option<NoiseProfile> {
        let mut acc: BTreeMap<String, (f64, f64, usize)> = BTreeMap::new();
        for (key, n, var) in groups {
            if n < 2 {
                continue;
            }
            let df = (n - 1) as f64;
            let e = acc.entry(key).or_default();
            e.0 += var * df;
            e.1 += df;
            e.2 += n;
        }
        let metrics: BTreeMap<String, ProfileEntry> = acc
            .into_iter()
            .filter(|(_, (_, df, _))| *df >= 2.0)
            .map(|(k, (ss, df, runs))| {
                (
                    k,
                    ProfileEntry {
                        sd: (ss / df).sqrt(),
                        df,
                        runs,
                    },
                )
            })
            .collect();
        (!metrics.is_empty()).then_some(NoiseProfile {
            description,
            metrics,
        })
    }
}

/// The run values of one metric on one side, checked: a value that is not finite or is
/// negative is an error naming the metric and the run.
pub fn run_values(
    side: &str,
    key: &str,
    metrics: &[(SharedStr, usize, &Metric)],
) -> anyhow::Result<Vec<RunValue>> {
    metrics
        .iter()
        .map(|(run, order, m)| {
            if !m.value.is_finite() || m.value < 0.0 {
                return crate::error::usage(format!(
                    "run {run} ({side}): metric {key} has the value {}; a result must be a \
                     finite number ≥ 0 (re-import or delete the run: `patchbench rm {run}`)",
                    m.value
                ));
            }
            Ok(RunValue {
                run: run.clone(),
                order: *order,
                value: m.value,
                within_pct: within_sd(&m.samples).map(|s| 100.0 * s),
                samples: m.samples.len(),
            })
        })
        .collect()
}

/// Run values without samples, positions in time from `first_order` on (for tests,
/// simulations and tables that give one number per run).
pub fn from_values(values: &[f64], first_order: usize) -> Vec<RunValue> {
    values
        .iter()
        .enumerate()
        .map(|(i, &value)| RunValue {
            run: (first_order + i + 1).to_string().into(),
            order: first_order + i,
            value,
            within_pct: None,
            samples: 0,
        })
        .collect()
}

/// sd of ln(sample) inside one run; None below 2 positive finite samples.
fn within_sd(samples: &[f64]) -> Option<f64> {
    let ok: Vec<f64> = samples
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    LogSample::of(&ok)?.sd()
}

/// The two levels of spread of a row, from both sides' run values.
pub fn spread(sides: &[&[RunValue]]) -> Spread {
    let (mut ss, mut df) = (0.0, 0.0);
    for side in sides {
        let values: Vec<f64> = side.iter().map(|r| r.value).collect();
        if let Some(s) = LogSample::of(&values) {
            if let Some(v) = s.var {
                ss += v * s.var_df;
                df += s.var_df;
            }
        }
    }
    let between = (df > 0.0).then(|| (ss / df).sqrt());
    let with: Vec<&RunValue> = sides
        .iter()
        .flat_map(|s| s.iter())
        .filter(|r| r.within_pct.is_some())
        .collect();
    let (within, per_run, on_value) = if with.is_empty() {
        (None, None, None)
    } else {
        let n = with.len() as f64;
        let w2 = |r: &&RunValue| (r.within_pct.unwrap_or(0.0) / 100.0).powi(2);
        let within = (with.iter().map(w2).sum::<f64>() / n).sqrt();
        let per_run = with.iter().map(|r| r.samples as f64).sum::<f64>() / n;
        let on_value = (with.iter().map(|r| w2(r) / r.samples as f64).sum::<f64>() / n).sqrt();
        (Some(within), Some(per_run), Some(on_value))
    };
    let dominates = match (between, on_value) {
        (Some(b), Some(w)) => Some(if b * b - w * w > w * w {
            Level::BetweenRuns
        } else {
            Level::WithinRuns
        }),
        _ => None,
    };
    Spread {
        between_pct: between.map(|v| 100.0 * v),
        between_df: df,
        within_pct: within.map(|v| 100.0 * v),
        samples_per_run: per_run,
        within_on_value_pct: on_value.map(|v| 100.0 * v),
        dominates,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    fn rv(value: f64, within: Option<f64>, samples: usize) -> RunValue {
        RunValue {
            run: "1".into(),
            order: 0,
            value,
            within_pct: within,
            samples,
        }
    }

    #[test]
    fn spread_pools_sides_and_says_which_level_dominates() {
        // ln values: side a 0, 0.02, 0.04 (SS 0.0008), side b 0.1, 0.12 (SS 0.0002): pooled
        // sd √(0.001 / 3) = 1.826 %. Within: 1 % over 4 samples → 0.5 % on a run value.
        let a: Vec<RunValue> = [0.0f64, 0.02, 0.04]
            .iter()
            .map(|x| rv(x.exp(), Some(1.0), 4))
            .collect();
        let b: Vec<RunValue> = [0.1f64, 0.12]
            .iter()
            .map(|x| rv(x.exp(), Some(1.0), 4))
            .collect();
        let s = spread(&[&a, &b]);
        assert_relative_eq!(
            s.between_pct.unwrap(),
            100.0 * (0.001f64 / 3.0).sqrt(),
            epsilon = 1e-9
        );
        assert_eq!(s.between_df, 3.0);
        assert_relative_eq!(s.within_pct.unwrap(), 1.0, epsilon = 1e-12);
        assert_relative_eq!(s.within_on_value_pct.unwrap(), 0.5, epsilon = 1e-12);
        assert_eq!(s.dominates, Some(Level::BetweenRuns));
        // Runs that agree as well as their passes predict: within dominates.
        let c: Vec<RunValue> = [0.0f64, 0.004, 0.008]
            .iter()
            .map(|x| rv(x.exp(), Some(1.0), 4))
            .collect();
        assert_eq!(spread(&[&c]).dominates, Some(Level::WithinRuns));
        assert_eq!(spread(&[&c[..1]]).between_pct, None);
    }

    #[test]
    fn bad_values_name_the_metric_and_the_run() {
        let m = Metric {
            name: "x".into(),
            params: Default::default(),
            title: "x".into(),
            unit: "u".into(),
            direction: crate::record::Direction::HigherIsBetter,
            value: f64::NAN,
            samples: vec![],
        };
        let err = run_values("patched", "x[a=1]", &[("7".into(), 0, &m)])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("run 7 (patched)") && err.contains("x[a=1]") && err.contains("NaN"),
            "{err}"
        );
        let m = Metric { value: -1.0, ..m };
        assert!(run_values("base", "x", &[("3".into(), 0, &m)]).is_err());
        let m = Metric { value: 0.0, ..m };
        assert_eq!(
            run_values("base", "x", &[("3".into(), 0, &m)]).unwrap()[0].value,
            0.0
        );
    }
}
