//! Statistics for "is this change real?": summaries (mean, median, standard deviations,
//! geometric mean), Welch's t-test, a seeded bootstrap confidence interval of the relative
//! change of means, the Student-t half-width of a mean (for adaptive pass counts), and the LKP
//! robot's trimmed "medians outside the other range" rule (comparison.md §3).
//!
//! Every function takes plain samples and returns `None` where the answer is undefined (too few
//! samples, zero mean), so callers print "no verdict" instead of a made-up number.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Arithmetic mean.
pub fn mean(x: &[f64]) -> Option<f64> {
    if x.is_empty() {
        return None;
    }
    Some(x.iter().sum::<f64>() / x.len() as f64)
}

/// Median (mean of the two middle values for an even count).
pub fn median(x: &[f64]) -> Option<f64> {
    if x.is_empty() {
        return None;
    }
    let s = sorted(x);
    let n = s.len();
    Some(if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    })
}

/// Sample standard deviation (n − 1 in the divisor); None below two samples.
pub fn stddev(x: &[f64]) -> Option<f64> {
    if x.len() < 2 {
        return None;
    }
    let m = mean(x)?;
    let ss: f64 = x.iter().map(|v| (v - m) * (v - m)).sum();
    Some((ss / (x.len() - 1) as f64).sqrt())
}

/// Population standard deviation (n in the divisor), as LKP's `± N%` column uses.
pub fn pop_stddev(x: &[f64]) -> Option<f64> {
    let m = mean(x)?;
    let ss: f64 = x.iter().map(|v| (v - m) * (v - m)).sum();
    Some((ss / x.len() as f64).sqrt())
}

/// A standard deviation as a percentage of the mean; None when undefined or the mean is 0.
pub fn stddev_pct(sd: Option<f64>, mean: Option<f64>) -> Option<f64> {
    match (sd, mean) {
        (Some(s), Some(m)) if m != 0.0 => Some(100.0 * s / m.abs()),
        _ => None,
    }
}

/// Geometric mean of positive values; None when empty or any value is not positive.
pub fn geomean(x: &[f64]) -> Option<f64> {
    if x.is_empty() || x.iter().any(|v| v.is_nan() || *v <= 0.0) {
        return None;
    }
    Some((x.iter().map(|v| v.ln()).sum::<f64>() / x.len() as f64).exp())
}

fn sorted(x: &[f64]) -> Vec<f64> {
    let mut s = x.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    s
}

/// Two-sided p-value of Welch's unequal-variances t-test; None when a side has fewer than two
/// samples. When both sides have zero variance the answer is 1 for equal means, 0 otherwise.
pub fn welch_p_value(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (ma, mb) = (mean(a)?, mean(b)?);
    let (va, vb) = (stddev(a)?.powi(2), stddev(b)?.powi(2));
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let se2 = va / na + vb / nb;
    if se2 <= 0.0 || !se2.is_finite() {
        return Some(if ma == mb { 1.0 } else { 0.0 });
    }
    let t = (ma - mb) / se2.sqrt();
    let df = se2 * se2 / ((va / na).powi(2) / (na - 1.0) + (vb / nb).powi(2) / (nb - 1.0));
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some((2.0 * (1.0 - dist.cdf(t.abs()))).clamp(0.0, 1.0))
}

/// A point estimate with a confidence interval, all as relative changes (0.03 = +3 %).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ChangeCi {
    pub lower: f64,
    pub point: f64,
    pub upper: f64,
}

/// Seeded percentile-bootstrap confidence interval of the relative change of means,
/// `mean(new) / mean(base) − 1` (criterion's effect size, with a fixed seed so the interval is
/// reproducible). Each side is resampled with replacement on its own.
///
/// The interval is computed on the log ratio and the two sides are put in a canonical order
/// before resampling, so swapping base and new gives exactly the mirrored interval. None when a
/// side is empty, a mean is not positive, or `resamples` is 0.
pub fn bootstrap_change_ci(
    base: &[f64],
    new: &[f64],
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Option<ChangeCi> {
    let (mb, mn) = (mean(base)?, mean(new)?);
    if resamples == 0 || mb <= 0.0 || mn <= 0.0 || base.iter().chain(new).any(|v| *v < 0.0) {
        return None;
    }
    // Canonical order: the lexicographically smaller sample set is resampled first.
    let swapped = compare_samples(new, base) == std::cmp::Ordering::Less;
    let (first, second) = if swapped { (new, base) } else { (base, new) };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut logs = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let m1 = resample_mean(first, &mut rng);
        let m2 = resample_mean(second, &mut rng);
        if m1 > 0.0 && m2 > 0.0 {
            logs.push((m2 / m1).ln());
        }
    }
    if logs.is_empty() {
        return None;
    }
    logs.sort_by(|a, b| a.total_cmp(b));
    let alpha = (1.0 - confidence.clamp(0.0, 1.0)) / 2.0;
    let lo_idx = ((alpha * (logs.len() - 1) as f64).floor() as usize).min(logs.len() - 1);
    let hi_idx = logs.len() - 1 - lo_idx;
    let (mut lo, mut hi) = (logs[lo_idx], logs[hi_idx]);
    if swapped {
        (lo, hi) = (-hi, -lo);
    }
    Some(ChangeCi {
        lower: lo.exp() - 1.0,
        point: mn / mb - 1.0,
        upper: hi.exp() - 1.0,
    })
}

fn compare_samples(a: &[f64], b: &[f64]) -> std::cmp::Ordering {
    for (x, y) in a.iter().zip(b) {
        match x.total_cmp(y) {
            std::cmp::Ordering::Equal => continue,
            o => return o,
        }
    }
    a.len().cmp(&b.len())
}

fn resample_mean(x: &[f64], rng: &mut ChaCha8Rng) -> f64 {
    let n = x.len();
    // Lemire's multiply-shift maps a 32-bit draw onto 0..n (bias ≤ n / 2³², negligible).
    let pick = |r: u32| ((r as u64 * n as u64) >> 32) as usize;
    (0..n).map(|_| x[pick(rng.next_u32())]).sum::<f64>() / n as f64
}

/// Half-width of the Student-t confidence interval of the mean, as a percentage of the mean:
/// `t(1 − (1 − c)/2, n − 1) × s / √n / mean × 100`. None below two samples or for a zero mean.
/// This is what an adaptive pass count stops on ("until the 95 % CI is within ±1 %").
pub fn mean_ci_half_width_pct(samples: &[f64], confidence: f64) -> Option<f64> {
    let n = samples.len();
    if n < 2 || !(0.0..1.0).contains(&confidence) {
        return None;
    }
    let m = mean(samples)?;
    if m == 0.0 {
        return None;
    }
    let s = stddev(samples)?;
    let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
        .ok()?
        .inverse_cdf(1.0 - (1.0 - confidence) / 2.0);
    Some(100.0 * t * s / (n as f64).sqrt() / m.abs())
}

/// What the LKP rule says about new relative to base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shift {
    /// New is clearly above base (and by more than the ratio threshold).
    Up,
    /// New is clearly below base.
    Down,
    /// The ranges are separated but the medians differ by no more than the ratio threshold.
    Small,
    /// Not changed.
    None,
}

/// LKP's per-side summary after trimming: (min, median, max), the median being the middle
/// element of the sorted trimmed samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LkpSummary {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

/// Trims a side as lkp-tests does for performance stats: `n / 32` values from each end, at
/// most 3, and at most 1 when the base has 3 samples or fewer; then summarises it.
pub fn lkp_summary(x: &[f64], base_len: usize) -> Option<LkpSummary> {
    if x.is_empty() {
        return None;
    }
    let s = sorted(x);
    let mut trim = (s.len() / 32).min(3);
    if base_len <= 3 {
        trim = trim.min(1);
    }
    let t = &s[trim..s.len() - trim];
    Some(LkpSummary {
        min: t[0],
        median: t[t.len() / 2],
        max: t[t.len() - 1],
    })
}

/// The LKP change test (comparison.md §3): at least one side needs 3 samples; changed when each
/// side's median lies outside the other side's range; a change whose larger median exceeds the
/// smaller by no more than `min_ratio` (1.01 for perf metrics) is only [`Shift::Small`]. None
/// when there are too few samples to judge.
pub fn lkp_shift(base: &[f64], new: &[f64], min_ratio: f64) -> Option<Shift> {
    if base.is_empty() || new.is_empty() || base.len().max(new.len()) < 3 {
        return None;
    }
    let b = lkp_summary(base, base.len())?;
    let a = lkp_summary(new, base.len())?;
    let shift = if b.min > a.median && b.median > a.max {
        Shift::Down
    } else if a.min > b.median && a.median > b.max {
        Shift::Up
    } else {
        return Some(Shift::None);
    };
    let (hi, lo) = if a.median > b.median {
        (a.median, b.median)
    } else {
        (b.median, a.median)
    };
    if lo > 0.0 && hi / lo > min_ratio {
        Some(shift)
    } else {
        Some(Shift::Small)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn summaries_match_hand_computed_values() {
        let x = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&x), Some(5.0));
        assert_eq!(median(&x), Some(4.5));
        assert_eq!(pop_stddev(&x), Some(2.0));
        assert_relative_eq!(stddev(&x).unwrap(), (32.0f64 / 7.0).sqrt());
        assert_relative_eq!(geomean(&[1.0, 10.0, 100.0]).unwrap(), 10.0, epsilon = 1e-12);
        assert_eq!(geomean(&[1.0, 0.0]), None);
        assert_eq!(stddev(&[1.0]), None);
        assert_eq!(mean(&[]), None);
    }

    #[test]
    fn welch_matches_a_hand_computed_case() {
        // a: mean 20, var 2.5 (n 5); b: mean 22, var 2.5 (n 5) → t = -2, df = 8.
        let a = [18.0, 19.0, 20.0, 21.0, 22.0];
        let b = [20.0, 21.0, 22.0, 23.0, 24.0];
        let p = welch_p_value(&a, &b).unwrap();
        // Two-sided p for |t| = 2 at 8 degrees of freedom is 0.0805.
        assert_relative_eq!(p, 0.0805, epsilon = 5e-4);
        assert_eq!(welch_p_value(&[1.0, 1.0], &[1.0, 1.0]), Some(1.0));
        assert_eq!(welch_p_value(&[1.0, 1.0], &[2.0, 2.0]), Some(0.0));
        assert_eq!(welch_p_value(&[1.0], &[2.0, 2.0]), None);
    }

    #[test]
    fn ci_half_width_matches_student_t() {
        // n = 4, mean 100, s = sqrt(10/3)... use 98, 99, 101, 102: s² = 10/3.
        let x = [98.0, 99.0, 101.0, 102.0];
        let hw = mean_ci_half_width_pct(&x, 0.95).unwrap();
        // t(0.975, 3) = 3.182446
        let expected = 3.182446 * (10.0f64 / 3.0).sqrt() / 2.0;
        assert_relative_eq!(hw, expected, epsilon = 1e-4);
        assert_eq!(mean_ci_half_width_pct(&[5.0], 0.95), None);
        assert_eq!(mean_ci_half_width_pct(&[0.0, 0.0], 0.95), None);
        assert_eq!(mean_ci_half_width_pct(&[3.0, 3.0, 3.0], 0.95), Some(0.0));
    }

    #[test]
    fn bootstrap_is_reproducible_and_brackets_the_change() {
        let base = [100.0, 101.0, 99.0, 100.5, 99.5];
        let new = [103.0, 104.0, 102.0, 103.5, 102.5];
        let a = bootstrap_change_ci(&base, &new, 2000, 0.95, 7).unwrap();
        let b = bootstrap_change_ci(&base, &new, 2000, 0.95, 7).unwrap();
        assert_eq!(a, b);
        assert_relative_eq!(a.point, 0.03, epsilon = 1e-12);
        assert!(a.lower > 0.015 && a.upper < 0.045, "{a:?}");
        let m = bootstrap_change_ci(&new, &base, 2000, 0.95, 7).unwrap();
        assert_relative_eq!((1.0 + m.lower) * (1.0 + a.upper), 1.0, epsilon = 1e-12);
    }

    #[test]
    fn lkp_rule_follows_the_robot() {
        let base = [100.0, 101.0, 102.0];
        assert_eq!(
            lkp_shift(&base, &[96.0, 97.0, 98.0], 1.01),
            Some(Shift::Down)
        );
        assert_eq!(
            lkp_shift(&base, &[104.0, 105.0, 106.0], 1.01),
            Some(Shift::Up)
        );
        // Overlapping ranges: the median of new (101.5) is inside base's range.
        assert_eq!(
            lkp_shift(&base, &[100.5, 101.5, 103.0], 1.01),
            Some(Shift::None)
        );
        // Separated but below the 1 % ratio.
        assert_eq!(
            lkp_shift(&base, &[102.005, 102.008, 102.009], 1.01),
            Some(Shift::Small)
        );
        assert_eq!(lkp_shift(&[1.0, 2.0], &[3.0, 4.0], 1.01), None);
        // 64 samples: 2 trimmed from each end, so two wild values do not matter.
        let mut b: Vec<f64> = (0..64).map(|i| 100.0 + (i % 4) as f64 * 0.1).collect();
        b[0] = 1000.0;
        b[1] = 1000.0;
        let s = lkp_summary(&b, 64).unwrap();
        assert!(s.max < 101.0);
    }
}
