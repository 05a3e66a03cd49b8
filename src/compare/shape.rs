//! Rows whose runs do not scatter around one value: runs that fall into separated groups
//! (bimodal), or that drift with the order in which they ran. Averaging such runs describes
//! none of them, so the row says what it saw instead of giving a verdict.
//!
//! - Bimodal, per side with ≥ 4 runs: sort ln(value), split at the largest gap that leaves at
//!   least 2 runs in each group; the row is bimodal when the gap is at least 25 % (ln 1.25)
//!   and at least 5 times the pooled spread inside the two groups (one far run is an outlier:
//!   it widens the interval instead). Normal run-to-run noise of a few % does not reach that (in the
//!   calibration, no A/A table at CV ≤ 5 % had a bimodal row).
//! - Drift, over all runs in time order with ≥ 3 runs a side: the residuals from each side's
//!   mean are regressed on the run's position; drift when the slope's two-sided p < 0.001
//!   and the fitted change from the first run to the last exceeds the noise band.
//!   In a paired design a drift both sides share cancels in the pairs, so the same test runs
//!   on the per-round log ratio over rounds (within boxes): the change itself moving.
//!
//! Known cause: Pipe-based Context Switching at 1 copy is bimodal on machines where the
//! parent and child of the ping-pong land on one CPU in some runs (fast: a wake-up is a
//! switch on the same CPU) and on two in others (slow: cross-CPU wake-ups); pinning the run
//! to one CPU removes it.

use crate::stats::welch::upper_tail;
use serde::Serialize;

/// Smallest gap between two groups of runs (as a ratio) that counts as bimodal.
const MIN_GAP_RATIO: f64 = 1.25;
/// The gap must also be this many times the spread inside the groups.
const GAP_OVER_SPREAD: f64 = 5.0;
/// Two-sided p below which a trend with run order counts as drift.
const DRIFT_P: f64 = 0.001;

/// What the runs of a row look like, when it is not one cloud.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Shape {
    /// One side's runs fall into two groups.
    Bimodal {
        /// Which side ("base" or the patched side's name).
        side: String,
        /// Geometric mean and run count of the lower and the upper group.
        low: f64,
        low_runs: usize,
        high: f64,
        high_runs: usize,
        /// Why, where it is known, and what removes it.
        cause: Option<String>,
    },
    /// Values move with run order.
    Drift {
        /// Fitted change from the first run to the last, in %.
        total_pct: f64,
        p: f64,
        runs: usize,
    },
}

/// The split of one side's values at their largest gap, when it is bimodal.
pub fn bimodal(values: &[f64]) -> Option<(f64, usize, f64, usize)> {
    if values.len() < 4 || values.iter().any(|v| v.is_nan() || *v <= 0.0) {
        return None;
    }
    // No gap of 25 % fits in a narrower range: the usual case, decided without sorting.
    let (min, max) = values.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
        (lo.min(*v), hi.max(*v))
    });
    if max / min < MIN_GAP_RATIO {
        return None;
    }
    let mut logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    logs.sort_by(|a, b| a.total_cmp(b));
    // Groups of at least 2 runs each: a single far run is an outlier, which widens the
    // interval, not a mode.
    let (cut, gap) = logs
        .windows(2)
        .enumerate()
        .map(|(i, w)| (i + 1, w[1] - w[0]))
        .filter(|(cut, _)| *cut >= 2 && logs.len() - cut >= 2)
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let (low, high) = logs.split_at(cut);
    let ss = |g: &[f64]| {
        let m = g.iter().sum::<f64>() / g.len() as f64;
        g.iter().map(|x| (x - m) * (x - m)).sum::<f64>()
    };
    let within = ((ss(low) + ss(high)) / (logs.len() - 2) as f64).sqrt();
    if gap < MIN_GAP_RATIO.ln() || gap < GAP_OVER_SPREAD * within {
        return None;
    }
    let gmean = |g: &[f64]| (g.iter().sum::<f64>() / g.len() as f64).exp();
    Some((gmean(low), low.len(), gmean(high), high.len()))
}

/// A trend with run order in the residuals of ln(value) from each side's mean. `runs` holds
/// (position in time, side index 0 or 1, value); `band` is the noise band (log).
pub fn drift(runs: &[(usize, usize, f64)], band: f64) -> Option<Shape> {
    let mut count = [0usize; 2];
    let mut sum = [0.0f64; 2];
    let mut timed: Vec<(usize, usize, f64)> = Vec::with_capacity(runs.len());
    for &(order, side, v) in runs {
        if v.is_nan() || v <= 0.0 || side > 1 {
            return None;
        }
        let l = v.ln();
        count[side] += 1;
        sum[side] += l;
        timed.push((order, side, l));
    }
    if count[0] < 3 || count[1] < 3 {
        return None;
    }
    let means = [sum[0] / count[0] as f64, sum[1] / count[1] as f64];
    // x = rank in time (positions may have gaps), y = residual from the side's mean.
    timed.sort_by_key(|r| r.0);
    let n = timed.len() as f64;
    let mx = (n - 1.0) / 2.0;
    let (mut sxx, mut sxy, mut sy) = (0.0, 0.0, 0.0);
    for (rank, &(_, side, l)) in timed.iter().enumerate() {
        let (x, y) = (rank as f64 - mx, l - means[side]);
        sxx += x * x;
        sxy += x * y;
        sy += y;
    }
    let (slope, my) = (sxy / sxx, sy / n);
    let total = slope * (n - 1.0);
    if total.abs() <= band {
        return None;
    }
    let resid: f64 = timed
        .iter()
        .enumerate()
        .map(|(rank, &(_, side, l))| (l - means[side] - my - slope * (rank as f64 - mx)).powi(2))
        .sum();
    // Two side means and the slope are fitted.
    let df = n - 3.0;
    let se = (resid / df / sxx).sqrt();
    let t = if se > 0.0 {
        (slope / se).abs()
    } else {
        f64::INFINITY
    };
    // Below the normal quantile for p = 0.001 (3.29) no df gives p < 0.001: skip the tail.
    if t < 3.29 {
        return None;
    }
    let p = if t.is_infinite() {
        0.0
    } else {
        2.0 * upper_tail(t, df)
    };
    (p < DRIFT_P).then_some(Shape::Drift {
        total_pct: 100.0 * total.exp_m1(),
        p,
        runs: runs.len(),
    })
}

/// Drift of a paired row: a trend of the per-round log ratio d over rounds, from `(box,
/// round, d)` points, by the same thresholds as [`drift`].
pub fn ratio_drift(points: &[(usize, f64, f64)], band: f64) -> Option<Shape> {
    let t = crate::stats::trend::within_blocks(points)?;
    // As for runs (3 a side, 3 df): a trend through fewer points is not judged.
    if t.df < 3.0 {
        return None;
    }
    let total = t.slope * t.span;
    (t.p < DRIFT_P && total.abs() > band).then_some(Shape::Drift {
        total_pct: 100.0 * total.exp_m1(),
        p: t.p,
        runs: points.len(),
    })
}

/// The cause of a bimodal row where it is known.
pub fn known_cause(test: Option<&str>, copies: Option<&str>) -> Option<String> {
    match (test, copies) {
        (Some("context1"), Some("1")) => Some(
            "CPU placement: the two processes run on one CPU in some runs and on two in others; \
             pinning the run to one CPU (taskset -c 0 patchbench run …) removes it"
                .to_string(),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_switch_modes_are_bimodal() {
        // Six runs of Pipe-based Context Switching at 1 copy on a 2-CPU VM: ~250k and ~16k.
        let v = [
            251_000.0, 16_200.0, 248_500.0, 15_900.0, 16_400.0, 252_300.0,
        ];
        let (low, nl, high, nh) = bimodal(&v).unwrap();
        assert_eq!((nl, nh), (3, 3));
        assert!((15_000.0..17_000.0).contains(&low) && (240_000.0..260_000.0).contains(&high));
        // Ordinary noise, even 5 %, is not.
        assert_eq!(bimodal(&[100.0, 105.0, 96.0, 102.0, 99.0, 93.0]), None);
        // A gap of 25 % inside wide noise is not either (5 × the spread inside the groups).
        assert_eq!(bimodal(&[100.0, 80.0, 130.0, 170.0, 210.0]), None);
        assert_eq!(bimodal(&[100.0, 300.0]), None);
        // One far run is an outlier, not a mode.
        assert_eq!(bimodal(&[590.0, 748.0, 747.0]), None);
        assert_eq!(bimodal(&[590.0, 748.0, 747.0, 749.0]), None);
        assert!(bimodal(&[590.0, 591.0, 748.0, 747.0]).is_some());
    }

    #[test]
    fn a_steady_fall_with_run_order_is_drift() {
        // Interleaved base (0) and patched (1), each falling 1 % a run.
        let runs: Vec<(usize, usize, f64)> = (0..10)
            .map(|i| {
                (
                    i,
                    i % 2,
                    1000.0 * (1.0 - 0.01 * i as f64) + if i % 3 == 0 { 0.5 } else { 0.0 },
                )
            })
            .collect();
        match drift(&runs, 0.01f64.ln_1p()) {
            Some(Shape::Drift { total_pct, p, runs }) => {
                assert!(total_pct < -8.0 && total_pct > -10.0, "{total_pct}");
                assert!(p < 0.001);
                assert_eq!(runs, 10);
            }
            other => panic!("{other:?}"),
        }
        // A pure shift between the sides is not drift.
        let shift: Vec<(usize, usize, f64)> = (0..10)
            .map(|i| {
                (
                    i,
                    i / 5,
                    if i < 5 { 1000.0 } else { 1100.0 } + (i % 2) as f64,
                )
            })
            .collect();
        assert_eq!(drift(&shift, 0.01f64.ln_1p()), None);
        assert_eq!(drift(&runs[..4], 0.01), None);
    }
}
