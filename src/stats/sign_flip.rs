//! The two-sided p of the sign-flip (randomisation) test of paired differences. Under "no
//! change" each pair's difference is as likely to have either sign, whatever the distribution
//! of its size, so the 2^n ways of flipping the signs of the n differences are equally likely,
//! and p is the share of them whose |sum| is at least the observed one.
//!
//! It holds for any spread of the differences (even, bimodal, heavy- or light-tailed), where
//! the paired t does not at a few pairs: when the per-round ratios are spread evenly, as in
//! the corpus's spawn campaign (`tests/fixtures/corpus`), the paired t flags 7.2 % of A/A
//! tables of 3 rounds at α = 0.05, and 20 % for ratios in two clusters. A comparison takes the
//! larger of the two p's (`compare::verdict`), so the t's interval is kept and its p is never
//! below what the pairs allow. That floor is 2^(1−n): 0.25 at 3 pairs, 0.0625 at 5, 0.031 at 6,
//! 0.002 at 10; below 6 pairs no paired test can reach α = 0.05 without assuming a
//! distribution ([`fewest_pairs`]).
//!
//! Exact up to [`EXACT_MAX`] pairs: half of the 2^n patterns (the other half mirrors them),
//! visited in Gray-code order, so each one flips one sign of the previous one's sum. Beyond,
//! the normal approximation of the same distribution (mean 0, variance Σ d²), which is close
//! there and takes no time: a table of a 30-round campaign has hundreds of rows.

/// The fewest pairs whose smallest two-sided p (2^(1−pairs), every ratio of one sign) is below
/// `alpha`: 6 at 0.05 (`compare`'s default 90 % intervals), 7 at 0.025 (95 %, a campaign's
/// default), 9 at 0.005. With fewer, no paired test holds its false-alarm rate whatever the
/// spread of the ratios, so `compare` gives no paired verdict, and a campaign runs at least
/// this many rounds.
pub fn fewest_pairs(alpha: f64) -> usize {
    (2..64)
        .find(|n| 2f64.powi(1 - *n as i32) < alpha)
        .unwrap_or(64)
}

/// Pairs up to which every sign pattern is counted.
pub const EXACT_MAX: usize = 16;

/// Two-sided p of "the differences are symmetric about 0"; 1 with no difference, or with a
/// difference that is not finite (no test).
pub fn p_two_sided(d: &[f64]) -> f64 {
    if d.is_empty() || d.iter().any(|x| !x.is_finite()) {
        return 1.0;
    }
    let observed = d.iter().sum::<f64>().abs();
    let total: f64 = d.iter().map(|x| x.abs()).sum();
    if total == 0.0 {
        return 1.0;
    }
    let n = d.len();
    if n > EXACT_MAX {
        let sd = d.iter().map(|x| x * x).sum::<f64>().sqrt();
        return (2.0 * super::welch::upper_tail(observed / sd, f64::INFINITY)).clamp(0.0, 1.0);
    }
    // Sums equal to the observed one up to rounding count as extreme.
    let tie = 1e-9 * total;
    // Start with every sign +, flip one sign per step; the last sign stays + (its mirror
    // pattern, every sign the other way, has the same |sum|).
    let mut plus = vec![true; n];
    let mut sum = total;
    let half = 1u32 << (n - 1);
    let mut extreme = u32::from(sum >= observed - tie);
    for k in 1..half {
        let i = k.trailing_zeros() as usize;
        let size = d[i].abs();
        sum += if plus[i] { -2.0 * size } else { 2.0 * size };
        plus[i] = !plus[i];
        extreme += u32::from(sum.abs() >= observed - tie);
    }
    f64::from(extreme) / f64::from(half)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sign_everywhere_gives_the_smallest_p_the_pairs_allow() {
        assert_eq!(p_two_sided(&[0.01, 0.02, 0.03]), 0.25);
        assert_eq!(p_two_sided(&[0.01, 0.02, 0.03, 0.04, 0.05]), 0.0625);
        let six = [-0.01, -0.03, -0.02, -0.05, -0.04, -0.01];
        assert_eq!(p_two_sided(&six), 2.0 / 64.0);
    }

    #[test]
    fn fewest_pairs_are_the_fewest_that_can_reach_alpha() {
        let ones = |n: usize| vec![0.01; n];
        for (alpha, want) in [(0.05, 6), (0.025, 7), (0.005, 9)] {
            assert_eq!(fewest_pairs(alpha), want);
            assert!(p_two_sided(&ones(want)) < alpha);
            assert!(p_two_sided(&ones(want - 1)) >= alpha);
        }
    }

    #[test]
    fn p_counts_the_patterns_at_least_as_extreme() {
        // Observed |−1 + 2 + 3| = 4; the eight sums of ±1 ±2 ±3 are 6, 0, 2, −4, 4, −2, 0, −6,
        // of which four reach 4.
        assert_eq!(p_two_sided(&[-1.0, 2.0, 3.0]), 0.5);
        assert_eq!(p_two_sided(&[]), 1.0);
        assert_eq!(p_two_sided(&[0.0, 0.0, 0.0]), 1.0);
        assert_eq!(p_two_sided(&[f64::NAN, 1.0]), 1.0);
    }

    #[test]
    fn the_gray_code_walk_counts_what_every_pattern_counts() {
        for n in 1..=10usize {
            let d: Vec<f64> = (0..n)
                .map(|i| ((i * 7919 + n * 31) % 23) as f64 / 1000.0 - 0.009)
                .collect();
            let observed = d.iter().sum::<f64>().abs();
            let all = 1u32 << n;
            let extreme = (0..all)
                .filter(|mask| {
                    let s: f64 = (0..n)
                        .map(|i| {
                            if mask >> i & 1 == 1 {
                                -d[i].abs()
                            } else {
                                d[i].abs()
                            }
                        })
                        .sum();
                    s.abs() >= observed - 1e-12
                })
                .count();
            let want = extreme as f64 / f64::from(all);
            assert!((p_two_sided(&d) - want).abs() < 1e-12, "{n}: {d:?}");
        }
    }

    #[test]
    fn beyond_the_exact_count_the_normal_approximation_is_close() {
        // 16 pairs counted, and the approximation on the same data: within a few points of p.
        let d: Vec<f64> = (0..16)
            .map(|i| {
                if i % 3 == 0 {
                    -0.01 - 0.001 * i as f64
                } else {
                    0.012
                }
            })
            .collect();
        let exact = p_two_sided(&d);
        let sd = d.iter().map(|x| x * x).sum::<f64>().sqrt();
        let approx =
            2.0 * crate::stats::welch::upper_tail(d.iter().sum::<f64>().abs() / sd, f64::INFINITY);
        assert!((exact - approx).abs() < 0.03, "{exact} {approx}");
        // 17 pairs all of one sign: a p near 0, never 0 of a count.
        let one_sign: Vec<f64> = (1..=17).map(|i| f64::from(i) / 100.0).collect();
        let p = p_two_sided(&one_sign);
        assert!(p > 0.0 && p < 0.001, "{p}");
    }

    #[test]
    fn the_false_alarm_rate_holds_for_evenly_spread_ratios() {
        // Ratios of even size with random signs (what fools the t at 3 and 5 pairs): at 6 and
        // 8 pairs, the share of p < 0.05 over every sign pattern is at most 0.05.
        for n in [6usize, 8] {
            let sizes: Vec<f64> = (0..n).map(|i| 0.01 + 0.001 * i as f64).collect();
            let patterns = 1u32 << n;
            let flagged = (0..patterns)
                .filter(|mask| {
                    let d: Vec<f64> = sizes
                        .iter()
                        .enumerate()
                        .map(|(i, x)| if mask >> i & 1 == 1 { -x } else { *x })
                        .collect();
                    p_two_sided(&d) < 0.05
                })
                .count();
            assert!(
                flagged as f64 / f64::from(patterns) <= 0.05,
                "{n} pairs: {flagged}"
            );
        }
    }
}
