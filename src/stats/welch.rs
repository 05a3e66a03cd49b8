//! Welch's t on the logarithm of run values: the interval and the p-value of the ratio of
//! geometric means of two sides, right at small n (3..10 runs a side).
//!
//! Each side is summarised on the log scale by [`LogSample`]: n, the mean of ln(value), and a
//! variance estimate with its degrees of freedom. The variance is normally the side's own
//! sample variance (n − 1 df); a side with too few runs may borrow a variance measured
//! elsewhere (a noise profile) with that estimate's df. [`LogRatio::welch`] combines two sides
//! with the Welch–Satterthwaite df, `df = (v₁ + v₂)² / (v₁²/df₁ + v₂²/df₂)` with
//! `vᵢ = varᵢ / nᵢ`, which reduces to the textbook formula when each df is n − 1.
//!
//! The relative change is `exp(diff) − 1`, where `diff = mean ln(new) − mean ln(base)`; an
//! interval on diff maps to one on the ratio, so base and new swap to exactly the mirrored
//! interval.

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// One side on the log scale.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct LogSample {
    pub n: usize,
    /// Mean of ln(value).
    pub mean: f64,
    /// Variance of ln(value) for one run (None: unknown, e.g. one run and no profile).
    pub var: Option<f64>,
    /// Degrees of freedom of `var`.
    pub var_df: f64,
}

impl LogSample {
    /// Summarises positive, finite values; None when empty or any value is not positive.
    pub fn of(values: &[f64]) -> Option<LogSample> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite() || *v <= 0.0) {
            return None;
        }
        let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
        let n = logs.len();
        let mean = logs.iter().sum::<f64>() / n as f64;
        // Identical values have no spread; rounding in ln and the mean must not invent one.
        let identical = values.iter().all(|v| *v == values[0]);
        let var = (n >= 2).then(|| {
            if identical {
                0.0
            } else {
                logs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64
            }
        });
        Some(LogSample {
            n,
            mean,
            var,
            var_df: n.saturating_sub(1) as f64,
        })
    }

    /// The same side with its variance taken from elsewhere: `sd` of ln(value) with `df`.
    pub fn with_variance(self, sd: f64, df: f64) -> LogSample {
        LogSample {
            var: Some(sd * sd),
            var_df: df,
            ..self
        }
    }

    /// Standard deviation of ln(value) (≈ the coefficient of variation for small spreads).
    pub fn sd(&self) -> Option<f64> {
        self.var.map(f64::sqrt)
    }
}

/// The comparison of two sides on the log scale.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct LogRatio {
    /// mean ln(new) − mean ln(base).
    pub diff: f64,
    /// Standard error of `diff` (0 when both sides have zero variance).
    pub se: f64,
    /// Welch–Satterthwaite degrees of freedom (infinite when `se` is 0).
    pub df: f64,
    /// Two-sided p-value of diff = 0.
    pub p: f64,
}

impl LogRatio {
    /// Welch's t between base and new; None when a side has no variance estimate.
    pub fn welch(base: &LogSample, new: &LogSample) -> Option<LogRatio> {
        let (vb, vn) = (base.var? / base.n as f64, new.var? / new.n as f64);
        if !(vb.is_finite() && vn.is_finite()) || base.var_df < 1.0 || new.var_df < 1.0 {
            return None;
        }
        let diff = new.mean - base.mean;
        let se2 = vb + vn;
        if se2 <= 0.0 {
            // Both sides without spread: the difference is known exactly.
            return Some(LogRatio {
                diff,
                se: 0.0,
                df: f64::INFINITY,
                p: if diff == 0.0 { 1.0 } else { 0.0 },
            });
        }
        let df = se2 * se2 / (vb * vb / base.var_df + vn * vn / new.var_df);
        let se = se2.sqrt();
        let p = 2.0 * upper_tail(diff.abs() / se, df);
        Some(LogRatio {
            diff,
            se,
            df,
            p: p.clamp(0.0, 1.0),
        })
    }

    /// The two-sided `confidence` interval of diff (log scale).
    pub fn log_interval(&self, confidence: f64) -> (f64, f64) {
        let h = t_quantile(0.5 + confidence / 2.0, self.df) * self.se;
        (self.diff - h, self.diff + h)
    }

    /// The interval of the relative change (0.03 = +3 %).
    pub fn interval(&self, confidence: f64) -> ChangeCi {
        let (lo, hi) = self.log_interval(confidence);
        ChangeCi {
            lower: lo.exp_m1(),
            point: self.diff.exp_m1(),
            upper: hi.exp_m1(),
        }
    }
}

/// A point estimate with a confidence interval, as relative changes (0.03 = +3 %).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ChangeCi {
    pub lower: f64,
    pub point: f64,
    pub upper: f64,
}

/// P(T > t) for Student's t with `df` degrees of freedom (normal when df is infinite).
pub fn upper_tail(t: f64, df: f64) -> f64 {
    if df.is_infinite() {
        return Normal::standard().sf(t);
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(d) => d.sf(t),
        Err(_) => f64::NAN,
    }
}

/// The `q` quantile of Student's t with `df` degrees of freedom (normal when infinite).
pub fn t_quantile(q: f64, df: f64) -> f64 {
    if df.is_infinite() || df > 1e7 {
        return Normal::standard().inverse_cdf(q);
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(d) => d.inverse_cdf(q),
        Err(_) => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn welch_interval_matches_a_hand_computation() {
        // base e^{0, 0.02, 0.04} (mean 0.02, var 0.0004), new e^{0.05, 0.06, 0.10, 0.09}
        // (mean 0.075, var: deviations −0.025 −0.015 0.025 0.015 → SS 0.0017, var 0.0017/3).
        let base = LogSample::of(&[1.0, 0.02f64.exp(), 0.04f64.exp()]).unwrap();
        let new: Vec<f64> = [0.05f64, 0.06, 0.10, 0.09]
            .iter()
            .map(|x| x.exp())
            .collect();
        let new = LogSample::of(&new).unwrap();
        assert_relative_eq!(base.mean, 0.02, epsilon = 1e-12);
        assert_relative_eq!(base.var.unwrap(), 0.0004, epsilon = 1e-12);
        assert_relative_eq!(new.var.unwrap(), 0.0017 / 3.0, epsilon = 1e-12);
        let r = LogRatio::welch(&base, &new).unwrap();
        // vb = 0.0004/3 = 1.3333e-4, vn = 5.6667e-4/4 = 1.41667e-4, se² = 2.75e-4.
        let (vb, vn): (f64, f64) = (0.0004 / 3.0, 0.0017 / 12.0);
        assert_relative_eq!(r.se, (vb + vn).sqrt(), epsilon = 1e-12);
        assert_relative_eq!(r.se, 0.0165831, epsilon = 1e-7);
        // df = se⁴ / (vb²/2 + vn²/3) = 7.5625e-8 / (8.8889e-9 + 6.6898e-9) = 4.8544.
        let df = (vb + vn).powi(2) / (vb * vb / 2.0 + vn * vn / 3.0);
        assert_relative_eq!(r.df, df, epsilon = 1e-9);
        assert_relative_eq!(r.df, 4.8544, epsilon = 1e-4);
        // t = 0.055 / 0.016583 = 3.3166; two-sided p at 4.854 df = 0.02204 (R: 2*pt(-3.3166, 4.8544)).
        assert_relative_eq!(r.diff, 0.055, epsilon = 1e-12);
        assert_relative_eq!(r.p, 0.02204, epsilon = 5e-5);
        // 90 % interval: t(0.95, 4.8544) = 2.02848 → 0.055 ± 0.033638.
        let (lo, hi) = r.log_interval(0.90);
        assert_relative_eq!(lo, 0.055 - 0.033638, epsilon = 2e-6);
        assert_relative_eq!(hi, 0.055 + 0.033638, epsilon = 2e-6);
        let ci = r.interval(0.90);
        assert_relative_eq!(ci.point, 0.055f64.exp() - 1.0, epsilon = 1e-12);
        assert_relative_eq!(ci.lower, lo.exp() - 1.0, epsilon = 1e-12);
    }

    #[test]
    fn swapping_sides_mirrors_the_interval() {
        let a = LogSample::of(&[100.0, 102.0, 99.0]).unwrap();
        let b = LogSample::of(&[104.0, 103.0, 107.0, 105.0]).unwrap();
        let ab = LogRatio::welch(&a, &b).unwrap().interval(0.9);
        let ba = LogRatio::welch(&b, &a).unwrap().interval(0.9);
        assert_relative_eq!((1.0 + ab.lower) * (1.0 + ba.upper), 1.0, epsilon = 1e-12);
        assert_relative_eq!((1.0 + ab.point) * (1.0 + ba.point), 1.0, epsilon = 1e-12);
    }

    #[test]
    fn zero_spread_on_both_sides_is_certain() {
        let a = LogSample::of(&[5.0, 5.0]).unwrap();
        let b = LogSample::of(&[6.0, 6.0, 6.0]).unwrap();
        let r = LogRatio::welch(&a, &b).unwrap();
        assert_eq!((r.se, r.p), (0.0, 0.0));
        let ci = r.interval(0.9);
        assert_relative_eq!(ci.lower, 0.2, epsilon = 1e-12);
        assert_relative_eq!(ci.upper, 0.2, epsilon = 1e-12);
        assert_eq!(LogRatio::welch(&a, &a).unwrap().p, 1.0);
    }

    #[test]
    fn a_single_run_needs_a_borrowed_variance() {
        let one = LogSample::of(&[5.0]).unwrap();
        let two = LogSample::of(&[5.0, 5.5]).unwrap();
        assert_eq!(LogRatio::welch(&one, &two), None);
        let borrowed = one.with_variance(0.01, 10.0);
        let r = LogRatio::welch(&borrowed, &two).unwrap();
        assert!(r.df >= 1.0 && r.p > 0.0 && r.p < 1.0, "{r:?}");
        assert_eq!(LogSample::of(&[1.0, 0.0]), None);
        assert_eq!(LogSample::of(&[1.0, f64::NAN]), None);
    }
}
