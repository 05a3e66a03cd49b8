//! Power of the labelling rule, the minimum detectable effect, and runs needed.
//!
//! The rule (see `compare::verdict`) flags a row "up" when both hold for the Welch statistic
//! on log run values, with `se^` the estimated standard error:
//! - `d / se^ > t(1 − α/2, df)` (significant: two-sided p < α, before the table correction),
//! - `(d − δ) / se^ > t(1 − α, df)` (the lower bound of the two-sided (1 − 2α) interval lies
//!   beyond the noise band δ).
//!
//! With normal log values of spread σ on both sides, `d = Δ + se·Z` and `se^ = se·S` where
//! `S = √(χ²_df / df)` is independent of Z, so the probability of flagging a true change Δ is
//! exactly `E_S[ P(Z > max(t₁S − (Δ − δ)/se, t₂S − Δ/se)) ]`: one integral over the chi
//! distribution, computed here by Simpson's rule. (The first condition alone is the
//! noncentral-t power of a t-test; the second alone is a noncentral t with noncentrality
//! (Δ − δ)/se.) The df is the pooled `n₁ + n₂ − 2`, which the Welch df equals when the spreads
//! and counts of the sides are equal.
//!
//! The BH correction across a table can only lower the power of a row; when most rows change
//! together it costs little. The figures here are per row, before that correction.

use super::welch::t_quantile;
use statrs::distribution::{ContinuousCDF, Normal};
use statrs::function::gamma::ln_gamma;

/// The power wanted of a plan (80 %).
pub const TARGET_POWER: f64 = 0.8;

/// A comparison design: runs per side, the spread of ln(run value), the noise band (log) and
/// α (the rule's one-sided level; the printed interval is the (1 − 2α) one).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Design {
    pub n_base: usize,
    pub n_new: usize,
    pub sd: f64,
    /// Degrees of freedom of the variance estimate (normally n_base + n_new − 2).
    pub df: f64,
    pub band: f64,
    pub alpha: f64,
}

impl Design {
    /// Equal runs on both sides, pooled df.
    pub fn balanced(n: usize, sd: f64, band: f64, alpha: f64) -> Design {
        Design {
            n_base: n,
            n_new: n,
            sd,
            df: (2 * n).saturating_sub(2) as f64,
            band,
            alpha,
        }
    }

    /// A paired design of `pairs` rounds whose log ratios d have spread `sd_d`: the same
    /// statistic as two sides of `pairs` runs with spread sd_d / √2 each (se = sd_d / √pairs),
    /// with pairs − `blocks` degrees of freedom.
    pub fn paired(pairs: usize, blocks: usize, sd_d: f64, band: f64, alpha: f64) -> Design {
        Design {
            n_base: pairs,
            n_new: pairs,
            sd: sd_d / std::f64::consts::SQRT_2,
            df: pairs.saturating_sub(blocks.max(1)) as f64,
            band,
            alpha,
        }
    }

    fn se(&self) -> f64 {
        self.sd * (1.0 / self.n_base as f64 + 1.0 / self.n_new as f64).sqrt()
    }
}

/// Probability that the rule flags a true change of `effect` (log ratio, > 0) in the right
/// direction.
pub fn power(d: &Design, effect: f64) -> f64 {
    let se = d.se();
    if d.df < 1.0 || se.is_nan() || se <= 0.0 || !effect.is_finite() {
        return f64::NAN;
    }
    let (t1, t2) = (
        t_quantile(1.0 - d.alpha, d.df),
        t_quantile(1.0 - d.alpha / 2.0, d.df),
    );
    let (a, b) = ((effect - d.band) / se, effect / se);
    let z = Normal::standard();
    let at = |s: f64| z.sf((t1 * s - a).max(t2 * s - b));
    if d.df > 1e6 {
        return at(1.0);
    }
    expect_over_chi(d.df, |v| at(v / d.df.sqrt()))
}

/// E[g(V)] for V chi-distributed with `k` degrees of freedom, by Simpson's rule over
/// √k ± 12 (the chi distribution's sd is below 0.71 for every k).
fn expect_over_chi(k: f64, g: impl Fn(f64) -> f64) -> f64 {
    let c = (k / 2.0 - 1.0) * std::f64::consts::LN_2 + ln_gamma(k / 2.0);
    let density = |v: f64| {
        if v <= 0.0 {
            return if k == 1.0 {
                (2.0 / std::f64::consts::PI).sqrt()
            } else {
                0.0
            };
        }
        ((k - 1.0) * v.ln() - v * v / 2.0 - c).exp()
    };
    let (lo, hi) = ((k.sqrt() - 12.0).max(0.0), k.sqrt() + 12.0);
    let steps = 600;
    let h = (hi - lo) / steps as f64;
    let mut sum = 0.0;
    for i in 0..=steps {
        let v = lo + i as f64 * h;
        let w = if i == 0 || i == steps {
            1.0
        } else if i % 2 == 1 {
            4.0
        } else {
            2.0
        };
        sum += w * density(v) * g(v);
    }
    sum * h / 3.0
}

/// The smallest change (log ratio) flagged with [`TARGET_POWER`]; None when undefined.
pub fn min_detectable_effect(d: &Design) -> Option<f64> {
    if d.sd.is_nan() || d.sd <= 0.0 || d.df < 1.0 {
        return None;
    }
    let mut hi = d.band + d.se();
    while power(d, hi) < TARGET_POWER {
        hi *= 2.0;
        if hi > 50.0 {
            return None;
        }
    }
    let mut lo = 0.0;
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if power(d, mid) >= TARGET_POWER {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// Runs per side (equal on both) for the rule to flag a change of `effect` with
/// [`TARGET_POWER`], at spread `sd`; None when no number up to `max_runs` is enough (always
/// the case when the effect is not beyond the band).
pub fn runs_needed(effect: f64, sd: f64, band: f64, alpha: f64, max_runs: usize) -> Option<usize> {
    if effect <= band || sd.is_nan() || sd < 0.0 {
        return None;
    }
    if sd == 0.0 {
        return Some(2);
    }
    smallest(
        |n| power(&Design::balanced(n, sd, band, alpha), effect) >= TARGET_POWER,
        max_runs,
    )
}

/// Rounds of a paired design (one box) for the rule to flag a change of `effect` with
/// [`TARGET_POWER`], when the per-round log ratios have spread `sd_d`; None as for
/// [`runs_needed`].
pub fn rounds_needed(
    effect: f64,
    sd_d: f64,
    band: f64,
    alpha: f64,
    max_rounds: usize,
) -> Option<usize> {
    if effect <= band || sd_d.is_nan() || sd_d < 0.0 {
        return None;
    }
    if sd_d == 0.0 {
        return Some(2);
    }
    smallest(
        |n| power(&Design::paired(n, 1, sd_d, band, alpha), effect) >= TARGET_POWER,
        max_rounds,
    )
}

/// The smallest n ≥ 2 up to `max` with `ok(n)`, for `ok` monotone in n; None when none.
fn smallest(ok: impl Fn(usize) -> bool, max_runs: usize) -> Option<usize> {
    let mut hi = 2;
    while !ok(hi) {
        if hi >= max_runs {
            return None;
        }
        hi = (hi * 2).min(max_runs);
    }
    let mut lo = hi / 2;
    if lo < 2 || ok(lo) {
        lo = lo.max(1);
    }
    // Smallest n in (lo, hi] with ok(n); ok(hi) holds.
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi.max(2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    fn ln1p(pct: f64) -> f64 {
        (pct / 100.0f64).ln_1p()
    }

    #[test]
    fn power_matches_noncentral_t_figures() {
        // 3 % shift, spread 1 %, 5 runs a side, band 1 %: the band condition is a noncentral
        // t(8, (ln 1.03 − ln 1.01)/(0.01·√(2/5)) = 3.1004), and it implies the other here.
        // P(T' > t(0.95, 8) = 1.8595) = 0.8808; P(T' > t(0.975, 8) = 2.3060) = 0.7748
        // (scipy.stats.nct.sf, and the same integral by scipy.integrate.quad).
        let d = Design::balanced(5, 0.01, ln1p(1.0), 0.05);
        assert_relative_eq!(power(&d, ln1p(3.0)), 0.8808, epsilon = 5e-4);
        let d = Design::balanced(5, 0.01, ln1p(1.0), 0.025);
        assert_relative_eq!(power(&d, ln1p(3.0)), 0.7748, epsilon = 5e-4);
        // No band: ncp ln(1.03)/0.006325 = 4.6737, and the binding condition is the two-sided
        // test: P(T' > 2.3060) = 0.9823.
        let d = Design::balanced(5, 0.01, 0.0, 0.05);
        assert_relative_eq!(power(&d, ln1p(3.0)), 0.9823, epsilon = 5e-4);
    }

    #[test]
    fn chi_integral_is_a_probability_for_small_and_large_df() {
        for k in [1.0, 2.0, 3.5, 8.0, 40.0, 900.0] {
            assert_relative_eq!(expect_over_chi(k, |_| 1.0), 1.0, epsilon = 1e-4);
            // E[V²] = k.
            assert_relative_eq!(expect_over_chi(k, |v| v * v), k, epsilon = 1e-3 * k);
        }
    }

    #[test]
    fn mde_is_beyond_the_band_and_has_the_target_power() {
        let d = Design::balanced(5, 0.01, ln1p(1.0), 0.05);
        let m = min_detectable_effect(&d).unwrap();
        assert!(m > ln1p(1.0));
        assert_relative_eq!(power(&d, m), TARGET_POWER, epsilon = 1e-6);
        // More runs, smaller MDE; it tends to the band.
        let m20 = min_detectable_effect(&Design::balanced(20, 0.01, ln1p(1.0), 0.05)).unwrap();
        assert!(m20 < m && m20 > ln1p(1.0));
    }

    #[test]
    fn runs_needed_is_the_smallest_sufficient_count() {
        let (sd, band, alpha) = (0.02, ln1p(1.0), 0.05);
        let n = runs_needed(ln1p(3.0), sd, band, alpha, 1000).unwrap();
        let p = |n| power(&Design::balanced(n, sd, band, alpha), ln1p(3.0));
        assert!(p(n) >= TARGET_POWER && p(n - 1) < TARGET_POWER, "n = {n}");
        assert_eq!(runs_needed(ln1p(1.0), sd, band, alpha, 1000), None);
        assert_eq!(runs_needed(ln1p(0.5), sd, band, alpha, 1000), None);
        assert!(runs_needed(ln1p(1.0), sd, ln1p(0.5), alpha, 100_000).unwrap() > n);
    }

    #[test]
    fn a_paired_design_is_the_t_test_of_the_ratios() {
        // 10 rounds, sd of d 1 %: se = 0.01/√10, df 9; the band condition is a noncentral t(9,
        // (ln 1.03 − ln 1.01)/0.0031623 = 6.200); P(T' > t(0.95, 9) = 1.8331) = 0.9995.
        let d = Design::paired(10, 1, 0.01, ln1p(1.0), 0.05);
        assert_relative_eq!(d.se(), 0.01 / 10f64.sqrt(), epsilon = 1e-15);
        assert_eq!(d.df, 9.0);
        assert!(power(&d, ln1p(3.0)) > 0.99);
        // Rounds needed: the smallest count with 80 % power, fewer than runs a side at the same
        // spread per run when the pairs share most of it.
        let n = rounds_needed(ln1p(3.0), 0.02, ln1p(1.0), 0.05, 1000).unwrap();
        let p = |n| power(&Design::paired(n, 1, 0.02, ln1p(1.0), 0.05), ln1p(3.0));
        assert!(p(n) >= TARGET_POWER && p(n - 1) < TARGET_POWER, "n = {n}");
        assert_eq!(rounds_needed(ln1p(1.0), 0.02, ln1p(1.0), 0.05, 1000), None);
    }
}
