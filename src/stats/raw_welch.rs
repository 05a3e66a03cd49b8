//! Welch's t on raw run values, for monitor counters: zeros are values (a count of no
//! events), not failures, so no logarithm is taken. Each side's variance is never taken below
//! its resolution's rounding: `res² / 12` (the variance of a uniform rounding error of one
//! step) is added to the sample variance, so a side whose runs happened to read the same
//! quantized value still has a spread, and two sides one step apart are never "certain".
//!
//! The interval is of the difference of the means (Welch–Satterthwaite df); the comparison
//! prints it relative to the base mean.

use super::welch::{t_quantile, upper_tail};

/// One side: runs, mean and the floored variance of one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RawSample {
    pub n: usize,
    pub mean: f64,
    /// Sample variance of the run values plus `res² / 12`.
    pub var: f64,
}

impl RawSample {
    /// Summarises finite values with the resolution `res` (≥ 0); None below 2 values.
    pub fn of(values: &[f64], res: f64) -> Option<RawSample> {
        let n = values.len();
        if n < 2 || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
        Some(RawSample {
            n,
            mean,
            var: ss / (n - 1) as f64 + res * res / 12.0,
        })
    }
}

/// The difference of two means with its Welch statistics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeanDiff {
    /// mean(new) − mean(base).
    pub diff: f64,
    pub se: f64,
    pub df: f64,
    /// Two-sided p of diff = 0.
    pub p: f64,
}

impl MeanDiff {
    /// Welch's t between base and new; None when both variances are 0 (no resolution and no
    /// spread: the caller's exact test applies).
    pub fn welch(base: &RawSample, new: &RawSample) -> Option<MeanDiff> {
        let (vb, vn) = (base.var / base.n as f64, new.var / new.n as f64);
        let se2 = vb + vn;
        if se2 <= 0.0 || !se2.is_finite() {
            return None;
        }
        let df = se2 * se2
            / (vb * vb / (base.n - 1) as f64 + vn * vn / (new.n - 1) as f64).max(f64::MIN_POSITIVE);
        let se = se2.sqrt();
        let diff = new.mean - base.mean;
        let p = 2.0 * upper_tail(diff.abs() / se, df);
        Some(MeanDiff {
            diff,
            se,
            df,
            p: p.clamp(0.0, 1.0),
        })
    }

    /// The two-sided `confidence` interval of the difference.
    pub fn interval(&self, confidence: f64) -> (f64, f64) {
        let h = t_quantile(0.5 + confidence / 2.0, self.df) * self.se;
        (self.diff - h, self.diff + h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resolution_floors_a_side_without_spread() {
        let s = RawSample::of(&[5.0, 5.0, 5.0], 1.0).unwrap();
        assert_eq!(s.var, 1.0 / 12.0);
        assert!(RawSample::of(&[5.0], 1.0).is_none());
        let zero = RawSample::of(&[0.0, 0.0, 0.0], 0.0).unwrap();
        assert!(MeanDiff::welch(&zero, &zero).is_none());
    }

    #[test]
    fn a_rise_from_zero_is_judged_by_the_other_sides_spread() {
        let base = RawSample::of(&[0.0, 0.0, 0.0], 1.0).unwrap();
        let steady = RawSample::of(&[500.0, 510.0, 505.0], 1.0).unwrap();
        let d = MeanDiff::welch(&base, &steady).unwrap();
        assert!(d.p < 0.01 && d.diff == 505.0, "{d:?}");
        let (lo, hi) = d.interval(0.9);
        assert!(lo > 0.0 && hi > lo);
        // One burst among zeros says little.
        let burst = RawSample::of(&[0.0, 0.0, 5000.0], 1.0).unwrap();
        let d = MeanDiff::welch(&base, &burst).unwrap();
        assert!(d.p > 0.3, "{d:?}");
    }
}
