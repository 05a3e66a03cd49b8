//! The curves a comparison (or one run) can be drawn as: will-it-scale's ops/s against task
//! count, one curve per testcase and mode, and AIM7's jobs/min against load, one per test.
//! Each point holds every run's value (one per run, as everywhere in `compare`) and their
//! mean, per side. Read from the typed details of the records (`will_it_scale.points`,
//! `aim7.points`), not from metric names.

use crate::record::RunRecord;
use serde::Serialize;
use std::collections::BTreeMap;

/// One curve: the same measurement at several x values, for every side that has it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Curve {
    /// `will-it-scale` or `aim7`.
    pub kind: String,
    pub test: String,
    /// `processes` or `threads` for will-it-scale; empty for AIM7.
    pub mode: String,
    /// What x counts: `tasks`, `load (tasks)`.
    pub x_label: String,
    /// What y is in: `ops/s`, `jobs/min`.
    pub unit: String,
    pub sides: Vec<CurveSide>,
}

/// One side's points of a curve, by increasing x.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurveSide {
    pub side: String,
    pub points: Vec<CurvePoint>,
}

/// One x value: each run's value and their mean.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurvePoint {
    pub x: u64,
    pub runs: Vec<String>,
    pub values: Vec<f64>,
    pub mean: f64,
}

/// (kind, test, mode) → side index → x → (run, value) in run order.
type Grouped =
    BTreeMap<(String, String, String), BTreeMap<usize, BTreeMap<u64, Vec<(String, f64)>>>>;

/// The curves of the given sides (a name and its runs each), in order of kind, test and mode.
pub fn of(sides: &[(&str, &[(String, RunRecord)])]) -> Vec<Curve> {
    let mut grouped: Grouped = BTreeMap::new();
    let mut add = |key: (&str, &str, &str), side: usize, x: u64, run: &str, v: f64| {
        grouped
            .entry((key.0.to_string(), key.1.to_string(), key.2.to_string()))
            .or_default()
            .entry(side)
            .or_default()
            .entry(x)
            .or_default()
            .push((run.to_string(), v));
    };
    for (si, (_, runs)) in sides.iter().enumerate() {
        for (id, run) in runs.iter() {
            for p in run.will_it_scale.iter().flat_map(|d| &d.points) {
                add(
                    ("will-it-scale", &p.test, &p.mode),
                    si,
                    p.tasks as u64,
                    id,
                    p.ops_per_sec,
                );
            }
            for p in run.aim7.iter().flat_map(|d| &d.points) {
                let per_run: Vec<f64> = p.runs.iter().map(|r| r.figures.jobs_per_min).collect();
                if let Some(v) = crate::stats::mean(&per_run) {
                    add(("aim7", &p.test, ""), si, u64::from(p.load), id, v);
                }
            }
        }
    }
    grouped
        .into_iter()
        .map(|((kind, test, mode), by_side)| {
            let aim7 = kind == "aim7";
            Curve {
                x_label: if aim7 { "load (tasks)" } else { "tasks" }.to_string(),
                unit: if aim7 { "jobs/min" } else { "ops/s" }.to_string(),
                kind,
                test,
                mode,
                sides: by_side
                    .into_iter()
                    .map(|(si, by_x)| CurveSide {
                        side: sides[si].0.to_string(),
                        points: by_x
                            .into_iter()
                            .filter_map(|(x, runs)| {
                                let values: Vec<f64> = runs.iter().map(|r| r.1).collect();
                                Some(CurvePoint {
                                    x,
                                    mean: crate::stats::mean(&values)?,
                                    runs: runs.into_iter().map(|r| r.0).collect(),
                                    values,
                                })
                            })
                            .collect(),
                    })
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::will_it_scale::{ScaleDetails, ScalePoint};
    use crate::record::Kind;

    fn scale_run(values: &[(usize, f64)]) -> RunRecord {
        let mut r = RunRecord::new(Kind::WillItScale, Default::default(), &());
        r.will_it_scale = Some(ScaleDetails {
            points: values
                .iter()
                .map(|&(tasks, ops)| ScalePoint {
                    test: "getppid1".into(),
                    description: String::new(),
                    mode: "processes".into(),
                    tasks,
                    ops_per_sec: ops,
                    ops_per_sec_per_task: ops / tasks as f64,
                    idle_percent: None,
                    measured_idle_percent: None,
                    measured_seconds: 1.0,
                    samples: vec![ops],
                    warmup_samples: vec![],
                    per_task_ops: vec![],
                    counters_per_op: None,
                })
                .collect(),
        });
        r
    }

    #[test]
    fn one_curve_per_test_and_mode_with_every_run_and_the_mean() {
        let base = vec![
            ("1".to_string(), scale_run(&[(1, 100.0), (2, 190.0)])),
            ("3".to_string(), scale_run(&[(1, 110.0), (2, 210.0)])),
        ];
        let patched = vec![("2".to_string(), scale_run(&[(2, 300.0), (1, 150.0)]))];
        let c = of(&[("base", &base), ("patched", &patched)]);
        assert_eq!(c.len(), 1);
        assert_eq!(
            (c[0].kind.as_str(), c[0].mode.as_str()),
            ("will-it-scale", "processes")
        );
        let b = &c[0].sides[0];
        assert_eq!(b.side, "base");
        assert_eq!(b.points.iter().map(|p| p.x).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(b.points[1].values, vec![190.0, 210.0]);
        assert_eq!(b.points[1].runs, vec!["1", "3"]);
        assert_eq!(b.points[1].mean, 200.0);
        assert_eq!(c[0].sides[1].points[0].values, vec![150.0]);
    }

    #[test]
    fn records_without_points_have_no_curves() {
        let r = vec![(
            "1".to_string(),
            RunRecord::new(Kind::Unixbench, Default::default(), &()),
        )];
        assert!(of(&[("base", &r)]).is_empty());
    }
}
