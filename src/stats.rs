//! Statistics for "is this change real?". This file holds the summaries (mean, median,
//! standard deviations, geometric mean), the Student-t half-width of a mean (what
//! `run --precision` stops on today), and the LKP robot's trimmed "medians outside the other
//! range" rule with its exact false-alarm rate (comparison.md §3).
//! The submodules hold what a comparison's verdicts are built from:
//!
//! - [`welch`]: Welch's t on the log of run values: interval and p of the ratio of geometric
//!   means, right at small n;
//! - [`paired`], [`blocked`], [`signed_rank`], [`trend`]: a campaign's paired analysis: the
//!   paired t of the per-round log ratios, the estimates with boxes as blocks, the robust
//!   Hodges–Lehmann estimate with its signed-rank interval, and drift over rounds;
//! - [`sign_flip`]: the exact sign-flip test of the per-round ratios, the floor of a paired
//!   row's p whatever their distribution;
//! - [`multiplicity`]: Benjamini–Hochberg q-values and Holm adjusted p-values across a table;
//! - [`power`]: the power of the labelling rule, minimum detectable effect, runs needed;
//! - [`precision`]: the two-stage stop rule (Stein's): `run --precision`'s adaptive passes
//!   (`crate::unixbench::runner::adaptive`) and a campaign's `--until` (`crate::campaign::primary`).
//!
//! Every function takes plain samples and returns `None` where the answer is undefined (too few
//! samples, zero mean), so callers print "no verdict" instead of a made-up number.

pub mod blocked;
pub mod multiplicity;
pub mod paired;
pub mod power;
pub mod precision;
pub mod rank_sum;
pub mod raw_welch;
pub mod sign_flip;
pub mod signed_rank;
pub mod trend;
pub mod welch;

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

/// The chance that the LKP rule flags a row when both sides come from one distribution
/// (an A/A comparison), computed exactly over every ordering of the runs; it is the rate at a
/// spread well above the 1 % ratio threshold (at smaller spreads the threshold lowers it).
/// None beyond 20 runs in all (the enumeration grows as C(n, k)) or with fewer than the rule
/// needs.
pub fn lkp_aa_rate(n_base: usize, n_new: usize) -> Option<f64> {
    let total = n_base + n_new;
    if n_base == 0 || n_new == 0 || n_base.max(n_new) < 3 || total > 20 {
        return None;
    }
    let (mut flagged, mut all) = (0u64, 0u64);
    let (mut b, mut a) = (Vec::with_capacity(total), Vec::with_capacity(total));
    // Every subset of `total` ranks with n_base members: the base side's ranks.
    for mask in 0u32..(1u32 << total) {
        if mask.count_ones() as usize != n_base {
            continue;
        }
        b.clear();
        a.clear();
        for r in 0..total {
            if mask & (1 << r) != 0 {
                b.push(r);
            } else {
                a.push(r);
            }
        }
        all += 1;
        let (sb, sa) = (trimmed(&b, n_base), trimmed(&a, n_base));
        let down = sb.0 > sa.1 && sb.1 > sa.2;
        let up = sa.0 > sb.1 && sa.1 > sb.2;
        flagged += u64::from(down || up);
    }
    Some(flagged as f64 / all as f64)
}

/// (min, median, max) of sorted ranks after LKP's trimming (see [`lkp_summary`]).
fn trimmed(sorted: &[usize], base_len: usize) -> (usize, usize, usize) {
    let mut trim = (sorted.len() / 32).min(3);
    if base_len <= 3 {
        trim = trim.min(1);
    }
    let t = &sorted[trim..sorted.len() - trim];
    (t[0], t[t.len() / 2], t[t.len() - 1])
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

    #[test]
    fn lkp_aa_rate_counts_orderings() {
        // 3 + 3, ranks 0..5: "down" needs b2 > a3, so base holds the top ranks 4 and 5, and
        // b1 > a2: b1 = 3 (new {0,1,2}) or b1 = 2 (new {0,1,3}); 2 orderings down, 2 up by
        // symmetry, of C(6, 3) = 20.
        assert_eq!(lkp_aa_rate(3, 3), Some(0.2));
        assert_eq!(lkp_aa_rate(2, 2), None);
        let r5 = lkp_aa_rate(5, 5).unwrap();
        assert!(r5 > 0.0 && r5 < 0.2, "{r5}");
        assert!(lkp_aa_rate(10, 10).is_some());
        assert_eq!(lkp_aa_rate(11, 10), None);
    }
}
