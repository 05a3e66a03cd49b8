//! Rows whose runs do not scatter around one value: runs that fall into separated groups
//! (bimodal), or that drift with the order in which they ran. Averaging such runs describes
//! none of them, so the row says what it saw instead of giving a verdict.
//!
//! - Bimodal: sort ln(value) and split it into a lower and an upper group of at least 2 runs
//!   each (one far run is an outlier: it widens the interval instead), where the spread
//!   inside the groups is least; the separation is the distance between the groups' means
//!   over that spread. The runs are bimodal when the separation exceeds what a sample of as
//!   many normal values shows once in 1000 (its 99.9th percentile, from a seeded simulation
//!   per run count) and the groups are at least 2 % apart. Tested per side with ≥ 4 runs,
//!   then on both sides together, where the two groups must each hold runs of both sides
//!   (shared modes; two groups that are the two sides are a change). So tight modes a few %
//!   apart are found (two modes 8 % apart, each 0.5 % wide, half the runs in each: 90 % of
//!   rows marked at 5 runs a side, all at 10; 1 % wide: 42 % and 99 %), while lognormal
//!   run-to-run noise of any size is marked in about 0.1 % of sides (docs/compare.md).
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

/// Smallest distance between the two groups' geometric means that counts as bimodal (2 %):
/// closer modes change no verdict at the usual 1 % band.
const MIN_SEPARATION: f64 = 0.019_802_627_296_179_712; // ln 1.02
/// Two-sided p below which a trend with run order counts as drift.
const DRIFT_P: f64 = 0.001;

/// The separation statistic's critical values, for n = 4 up to 36 runs: the 99.9th
/// percentile of its distribution over samples of n normal values (2,000,000 seeded samples
/// per n; `tests/calibration.rs` measures the rate on lognormal rows). Larger samples use the
/// last value, which only makes the test stricter (the percentile falls with n).
const CRITICAL: [f64; 33] = [
    54.469, 25.796, 16.611, 12.645, 10.454, 9.133, 8.216, 7.530, 7.041, 6.678, 6.392, 6.106, 5.887,
    5.729, 5.541, 5.397, 5.305, 5.182, 5.096, 5.005, 4.933, 4.859, 4.791, 4.724, 4.668, 4.600,
    4.560, 4.500, 4.456, 4.417, 4.371, 4.323, 4.285,
];

fn critical(n: usize) -> f64 {
    match n.checked_sub(4) {
        None => f64::INFINITY,
        Some(i) => CRITICAL[i.min(CRITICAL.len() - 1)],
    }
}

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

impl Shape {
    /// How far this shape alone moves a row's values, as a factor: the upper group over the
    /// lower one, or a drift's whole span.
    pub fn span(&self) -> f64 {
        match self {
            Shape::Bimodal { low, high, .. } => high / low,
            Shape::Drift { total_pct, .. } => (1.0 + total_pct / 100.0).ln().abs().exp(),
        }
    }
}

/// The factor by which every value of one side lies beyond every value of the other (above 1),
/// or None when the sides overlap, one is empty or a value is not positive and finite. Sides
/// apart by more than a shape's [`Shape::span`] differ by more than any mix of its modes or
/// its drift explains.
pub fn apart_by(base: &[f64], new: &[f64]) -> Option<f64> {
    let range = |v: &[f64]| -> Option<(f64, f64)> {
        if v.is_empty() || v.iter().any(|x| !x.is_finite() || *x <= 0.0) {
            return None;
        }
        Some(v.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), x| {
            (lo.min(*x), hi.max(*x))
        }))
    };
    let ((b_lo, b_hi), (n_lo, n_hi)) = (range(base)?, range(new)?);
    let apart = (n_lo / b_hi).max(b_lo / n_hi);
    (apart > 1.0).then_some(apart)
}

/// The best split of sorted logs into a lower and an upper group of at least 2 each: the one
/// with the least spread inside the groups. Returns the cut (size of the lower group) and the
/// separation statistic: the distance between the groups' means over the pooled standard
/// deviation inside them (infinite when both groups are flat).
fn best_split(logs: &[f64]) -> Option<(usize, f64)> {
    let n = logs.len();
    if n < 4 {
        return None;
    }
    let (mut sum, mut sq) = (vec![0.0; n + 1], vec![0.0; n + 1]);
    for (i, x) in logs.iter().enumerate() {
        sum[i + 1] = sum[i] + x;
        sq[i + 1] = sq[i] + x * x;
    }
    let mut best: Option<(usize, f64)> = None;
    for cut in 2..=n - 2 {
        let (lo_n, hi_n) = (cut as f64, (n - cut) as f64);
        let (lo_s, hi_s) = (sum[cut], sum[n] - sum[cut]);
        let ss =
            ((sq[cut] - lo_s * lo_s / lo_n) + ((sq[n] - sq[cut]) - hi_s * hi_s / hi_n)).max(0.0);
        if best.is_none_or(|(_, b)| ss < b) {
            best = Some((cut, ss));
        }
    }
    let (cut, ss) = best?;
    let (low, high) = logs.split_at(cut);
    let mean = |g: &[f64]| g.iter().sum::<f64>() / g.len() as f64;
    let distance = mean(high) - mean(low);
    let within = (ss / (n - 2) as f64).sqrt();
    let stat = if within > 0.0 {
        distance / within
    } else if distance > 0.0 {
        f64::INFINITY
    } else {
        0.0
    };
    Some((cut, stat))
}

/// Whether sorted `logs` fall into two groups: the best split's separation is beyond its
/// critical value for this many runs (a normal sample of this size shows it in 0.1 % of
/// draws) and the groups' means are at least 2 % apart. Returns the groups' geometric means
/// and sizes.
fn split_if_bimodal(logs: &[f64]) -> Option<(usize, (f64, usize, f64, usize))> {
    let (cut, stat) = best_split(logs)?;
    let (low, high) = logs.split_at(cut);
    let mean = |g: &[f64]| g.iter().sum::<f64>() / g.len() as f64;
    if stat <= critical(logs.len()) || mean(high) - mean(low) < MIN_SEPARATION {
        return None;
    }
    Some((
        cut,
        (mean(low).exp(), low.len(), mean(high).exp(), high.len()),
    ))
}

/// Sorted logs of positive finite values; None if any is not.
fn sorted_logs(values: &[f64]) -> Option<Vec<f64>> {
    if values.iter().any(|v| !v.is_finite() || *v <= 0.0) {
        return None;
    }
    let mut logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    logs.sort_by(|a, b| a.total_cmp(b));
    Some(logs)
}

/// One side's values split into two groups, when they are bimodal: the geometric mean and
/// size of the lower and the upper group.
pub fn bimodal(values: &[f64]) -> Option<(f64, usize, f64, usize)> {
    let logs = sorted_logs(values)?;
    if logs.len() < 4 || logs[logs.len() - 1] - logs[0] < MIN_SEPARATION {
        return None;
    }
    split_if_bimodal(&logs).map(|(_, groups)| groups)
}

/// Both sides' values together, when they fall into two groups that each hold runs of both
/// sides: modes the sides share (code alignment, CPU placement), which one side's few runs
/// may be too few to show. Groups that are the two sides themselves are a change, not modes.
pub fn bimodal_together(base: &[f64], new: &[f64]) -> Option<(f64, usize, f64, usize)> {
    let mut tagged: Vec<(f64, bool)> = Vec::with_capacity(base.len() + new.len());
    for (values, is_base) in [(base, true), (new, false)] {
        for v in values {
            if !v.is_finite() || *v <= 0.0 {
                return None;
            }
            tagged.push((v.ln(), is_base));
        }
    }
    tagged.sort_by(|a, b| a.0.total_cmp(&b.0));
    let logs: Vec<f64> = tagged.iter().map(|t| t.0).collect();
    if logs.len() < 4 || logs[logs.len() - 1] - logs[0] < MIN_SEPARATION {
        return None;
    }
    let (cut, groups) = split_if_bimodal(&logs)?;
    let (low, high) = tagged.split_at(cut);
    let mixed = |g: &[(f64, bool)]| g.iter().any(|t| t.1) && g.iter().any(|t| !t.1);
    (mixed(low) && mixed(high)).then_some(groups)
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
    fn sides_apart_by_a_factor_or_overlapping() {
        assert_eq!(apart_by(&[1.0, 2.0], &[4.0, 5.0]), Some(2.0));
        assert_eq!(apart_by(&[4.0, 5.0], &[1.0, 2.0]), Some(2.0));
        assert_eq!(apart_by(&[1.0, 3.0], &[2.0, 5.0]), None);
        assert_eq!(apart_by(&[0.0, 3.0], &[4.0, 5.0]), None);
        assert_eq!(apart_by(&[], &[4.0]), None);
        let drift = Shape::Drift {
            total_pct: -20.0,
            p: 0.0,
            runs: 10,
        };
        assert!((drift.span() - 1.25).abs() < 1e-12);
    }

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

    /// Issue #20: code-alignment modes a few % apart, tight, were not marked (the old rule
    /// wanted 25 %).
    #[test]
    fn tight_modes_a_few_percent_apart_are_bimodal() {
        // Two modes 8 % apart, each within ±0.3 %, five runs.
        let (low, nl, high, nh) = bimodal(&[1000.0, 1003.0, 1080.0, 1082.5, 998.0]).unwrap();
        assert_eq!((nl, nh), (3, 2));
        assert!((high / low - 1.081).abs() < 0.002, "{}", high / low);
        // As wide as they are apart: one cloud.
        assert_eq!(bimodal(&[1000.0, 1030.0, 1060.0, 1080.0, 1015.0]), None);
        // Apart by less than 2 %: left alone, however tight.
        assert_eq!(bimodal(&[1000.0, 1000.1, 1015.0, 1015.1, 1000.2]), None);
        // Three runs a side are too few alone, both sides together are not, when both sides
        // have runs in both groups.
        let (b, n) = ([1000.0, 1081.0, 1002.0], [1079.0, 999.0, 1083.0]);
        assert_eq!((bimodal(&b), bimodal(&n)), (None, None));
        let (_, nl, _, nh) = bimodal_together(&b, &n).unwrap();
        assert_eq!((nl, nh), (3, 3));
        // Groups that are the two sides are a change, not modes.
        let (b, n) = (
            [1000.0, 1002.0, 998.0, 1001.0],
            [1080.0, 1082.0, 1079.0, 1081.0],
        );
        assert_eq!(bimodal_together(&b, &n), None);
        // One run of a side among the other side's is an outlier, not a shared mode.
        let (b, n) = (
            [1000.0, 1002.0, 998.0, 1081.0],
            [1080.0, 1082.0, 1079.0, 1083.0],
        );
        assert_eq!(bimodal_together(&b, &n), None);
        assert_eq!(bimodal_together(&[1.0, f64::NAN], &[1.0, 2.0]), None);
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
