//! Adjusting the p-values of one comparison's rows for their number.
//!
//! - [`bh_q_values`]: Benjamini–Hochberg q-values. Flagging every row with q < α keeps the
//!   false discovery rate (the expected share of flagged rows that are false) at or below α
//!   for independent or positively dependent rows; with no real change anywhere, the chance
//!   that a table shows any flag is then at most α.
//! - [`holm_adjusted`]: Holm's step-down adjusted p-values. Acting on rows with p < α keeps
//!   the family-wise error rate (the chance of any false flag) at or below α under any
//!   dependence; this is what a CI gate (`--fail-on-regression`) uses.
//!
//! Both return the adjusted values in the order of the input. NaN p-values are not allowed
//! (callers leave out rows without a p-value).

/// Benjamini–Hochberg q-values: `q(i) = min over j ≥ i of p(j) · m / j` for the p-values
/// sorted ascending (ranks j = 1..m), capped at 1.
pub fn bh_q_values(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let order = ascending(p);
    let mut q = vec![0.0; m];
    let mut running = 1.0f64;
    for (rank0, &i) in order.iter().enumerate().rev() {
        running = running.min(p[i] * m as f64 / (rank0 + 1) as f64);
        q[i] = running.min(1.0);
    }
    q
}

/// Holm adjusted p-values: `p̃(i) = max over j ≤ i of (m − j + 1) · p(j)` for the p-values
/// sorted ascending (ranks j = 1..m), capped at 1.
pub fn holm_adjusted(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let order = ascending(p);
    let mut out = vec![0.0; m];
    let mut running = 0.0f64;
    for (rank0, &i) in order.iter().enumerate() {
        running = running.max(p[i] * (m - rank0) as f64);
        out[i] = running.min(1.0);
    }
    out
}

fn ascending(p: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn bh_matches_a_hand_computation() {
        // Sorted: 0.005 (×4/1 = 0.02), 0.01 (×4/2 = 0.02), 0.03 (×4/3 = 0.04), 0.04 (×4/4 = 0.04);
        // running minimum from the top leaves them as they are.
        let q = bh_q_values(&[0.01, 0.04, 0.03, 0.005]);
        for (got, want) in q.iter().zip([0.02, 0.04, 0.04, 0.02]) {
            assert_relative_eq!(*got, want, epsilon = 1e-15);
        }
        // A larger p at a better rank is pulled down: 0.02·3/2 = 0.03 > 0.025·3/3 = 0.025.
        let q = bh_q_values(&[0.02, 0.025, 0.001]);
        for (got, want) in q.iter().zip([0.025, 0.025, 0.003]) {
            assert_relative_eq!(*got, want, epsilon = 1e-15);
        }
        let close = |got: Vec<f64>, want: &[f64]| {
            for (g, w) in got.iter().zip(want) {
                assert_relative_eq!(*g, *w, epsilon = 1e-15);
            }
        };
        close(bh_q_values(&[0.9, 0.8]), &[0.9, 0.9]);
        close(bh_q_values(&[0.6, 0.7, 0.8]), &[0.8, 0.8, 0.8]);
        assert!(bh_q_values(&[]).is_empty());
    }

    #[test]
    fn holm_matches_a_hand_computation() {
        // Sorted: 0.005 ×4 = 0.02, 0.01 ×3 = 0.03, 0.03 ×2 = 0.06, 0.04 ×1 = 0.04 → running
        // maximum 0.02, 0.03, 0.06, 0.06.
        let h = holm_adjusted(&[0.01, 0.04, 0.03, 0.005]);
        for (got, want) in h.iter().zip([0.03, 0.06, 0.06, 0.02]) {
            assert_relative_eq!(*got, want, epsilon = 1e-15);
        }
        assert_eq!(holm_adjusted(&[0.5, 0.6]), vec![1.0, 1.0]);
    }

    #[test]
    fn holm_is_never_below_bh() {
        let p = [0.001, 0.2, 0.013, 0.04, 0.0301, 0.5, 0.011];
        for (h, q) in holm_adjusted(&p).iter().zip(bh_q_values(&p)) {
            assert!(*h >= q - 1e-15, "{h} < {q}");
        }
    }
}
