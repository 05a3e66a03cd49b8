//! The exact two-sided p of Wilcoxon's rank-sum (Mann–Whitney) test, ties included: the
//! permutation distribution of one side's sum of mid-ranks over every way of splitting the
//! pooled values into the two sides' sizes. It assumes nothing about the values' distribution,
//! so it holds for counts that are often zero, bursty or quantized, and its p can never go
//! below what the runs allow: 2 / C(m + n, m) when the sides do not overlap at all (0.1 at
//! 3 v 3, 0.33 at 2 v 2, 0.008 at 5 v 5).
//!
//! Mid-ranks are doubled so that every sum is an integer; the distribution is counted by
//! dynamic programming over the pooled values (choose k of the first t with doubled sum s),
//! exactly up to [`EXACT_MAX`] values in all and by the normal approximation with the tie
//! correction beyond.

/// Pooled values up to which the distribution is counted exactly.
pub const EXACT_MAX: usize = 60;

/// Two-sided p of "the sides come from one distribution"; 1 when either side is empty or
/// every value is the same.
pub fn p_two_sided(a: &[f64], b: &[f64]) -> f64 {
    let (m, n) = (a.len(), b.len());
    if m == 0 || n == 0 {
        return 1.0;
    }
    let ranks = doubled_midranks(a, b);
    let observed: u64 = ranks[..m].iter().sum();
    let total = m + n;
    // E[sum of doubled ranks of a] = m (N + 1).
    let expected = (m * (total + 1)) as f64;
    let distance = (observed as f64 - expected).abs();
    if distance == 0.0 {
        return 1.0;
    }
    if total > EXACT_MAX {
        return normal_p(&ranks, m, distance);
    }
    let counts = sum_counts(&ranks, m);
    let all: f64 = counts.iter().sum();
    let extreme: f64 = counts
        .iter()
        .enumerate()
        .filter(|(s, _)| (*s as f64 - expected).abs() >= distance - 1e-9)
        .map(|(_, c)| c)
        .sum();
    (extreme / all).clamp(0.0, 1.0)
}

/// The doubled mid-rank of every value, a's first, then b's (tied values share the mean of
/// their ranks).
fn doubled_midranks(a: &[f64], b: &[f64]) -> Vec<u64> {
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let mut order: Vec<usize> = (0..pooled.len()).collect();
    order.sort_by(|&i, &j| pooled[i].total_cmp(&pooled[j]));
    let mut ranks = vec![0u64; pooled.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start;
        while end + 1 < order.len() && pooled[order[end + 1]] == pooled[order[start]] {
            end += 1;
        }
        // Ranks start..=end (1-based: start + 1 ..= end + 1); doubled mean = sum of ends.
        let doubled = (start + 1 + end + 1) as u64;
        for &i in &order[start..=end] {
            ranks[i] = doubled;
        }
        start = end + 1;
    }
    ranks
}

/// How many m-subsets of the ranks have each doubled sum (index: the sum).
fn sum_counts(ranks: &[u64], m: usize) -> Vec<f64> {
    let max: usize = ranks.iter().sum::<u64>() as usize;
    // ways[k][s]: subsets of size k with sum s among the ranks seen so far.
    let mut ways = vec![vec![0.0f64; max + 1]; m + 1];
    ways[0][0] = 1.0;
    for &r in ranks {
        let r = r as usize;
        for k in (1..=m).rev() {
            for s in (r..=max).rev() {
                let add = ways[k - 1][s - r];
                if add != 0.0 {
                    ways[k][s] += add;
                }
            }
        }
    }
    ways.swap_remove(m)
}

/// The normal approximation with the tie correction, for many values.
fn normal_p(ranks: &[u64], m: usize, distance: f64) -> f64 {
    let total = ranks.len() as f64;
    let mean = ranks.iter().sum::<u64>() as f64 / total;
    let var_one = ranks
        .iter()
        .map(|&r| (r as f64 - mean).powi(2))
        .sum::<f64>()
        / total;
    // Sampling m of N without replacement.
    let var = m as f64 * var_one * (total - m as f64) / (total - 1.0);
    if var <= 0.0 {
        return 1.0;
    }
    let z = distance / var.sqrt();
    (2.0 * super::welch::upper_tail(z, f64::INFINITY)).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separated_sides_give_the_smallest_p_the_runs_allow() {
        let p = p_two_sided(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]);
        assert!((p - 0.1).abs() < 1e-12, "{p}");
        let p = p_two_sided(&[5.0, 5.0], &[6.0, 6.0]);
        assert!((p - 1.0 / 3.0).abs() < 1e-12, "{p}");
        let p = p_two_sided(&[0.0; 5], &[7.0; 5]);
        assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
    }

    #[test]
    fn ties_and_identical_sides() {
        assert_eq!(p_two_sided(&[3.0, 3.0, 3.0], &[3.0, 3.0, 3.0]), 1.0);
        assert_eq!(p_two_sided(&[0.0, 0.0, 5.0], &[0.0, 5.0, 0.0]), 1.0);
        // One tie across the sides: less extreme than full separation.
        let p = p_two_sided(&[1.0, 2.0, 3.0], &[3.0, 4.0, 5.0]);
        assert!(p > 0.1 && p < 0.5, "{p}");
        assert_eq!(p_two_sided(&[], &[1.0]), 1.0);
    }

    #[test]
    fn the_normal_approximation_agrees_with_the_count_near_its_limit() {
        let a: Vec<f64> = (0..30).map(|i| i as f64).collect();
        let b: Vec<f64> = (0..30).map(|i| i as f64 + 6.5).collect();
        let exact = p_two_sided(&a, &b);
        let ranks = doubled_midranks(&a, &b);
        let observed: u64 = ranks[..30].iter().sum();
        let approx = normal_p(&ranks, 30, (observed as f64 - 30.0 * 61.0).abs());
        assert!((exact - approx).abs() < 0.01, "{exact} {approx}");
    }
}
