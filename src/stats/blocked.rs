//! A campaign's change with its boxes as blocks, on the log scale: the paired estimate from
//! the per-block log ratios d = ln(patched / base) of each (box, round), the unpaired estimate
//! that compares the sides within each box, and the share of the spread that lies between
//! boxes.
//!
//! - [`paired`]: the mean of d over every pair, its standard error from the spread of d
//!   within each box (pooled), with pairs − boxes degrees of freedom. On one box this is the
//!   paired t of the rounds (pairs − 1 df). A box's own level cancels in d, and so does a slow
//!   component shared by both runs of a round (time of day, host load).
//! - [`unpaired`]: with several boxes, the difference of the sides' mean ln(value) within each
//!   box, averaged over the boxes with inverse-variance weights, the variance pooled within
//!   every (box, side) cell. Runs of different boxes are never pooled as runs of one box.
//!   (On one box `compare` keeps Welch's t, `super::welch`.)
//! - [`between_share`]: one-way random-effects variance components of ln(value) with the box
//!   as the group, pooled over the sides: what share of the spread of a run's value is the
//!   box it ran on.
//!
//! All of them return a [`LogRatio`] (or None when undefined) so the intervals, p-values and
//! table corrections of a comparison treat them as they treat Welch's.

use super::welch::{upper_tail, LogRatio};
use statrs::distribution::{ContinuousCDF, FisherSnedecor};
use std::collections::BTreeMap;

/// Groups `(block, value)` by block, in block order.
fn by_block(values: &[(usize, f64)]) -> BTreeMap<usize, Vec<f64>> {
    let mut out: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for &(b, v) in values {
        out.entry(b).or_default().push(v);
    }
    out
}

/// Sum of squared deviations from the mean, and the mean.
fn ss(values: &[f64]) -> (f64, f64) {
    let m = values.iter().sum::<f64>() / values.len() as f64;
    let identical = values.iter().all(|v| *v == values[0]);
    let ss = if identical {
        0.0
    } else {
        values.iter().map(|v| (v - m) * (v - m)).sum()
    };
    (ss, m)
}

/// A LogRatio from a difference, its variance and df (certain when the variance is 0).
fn ratio(diff: f64, var: f64, df: f64) -> Option<LogRatio> {
    if !diff.is_finite() || !var.is_finite() || var < 0.0 || df < 1.0 {
        return None;
    }
    if var == 0.0 {
        return Some(LogRatio {
            diff,
            se: 0.0,
            df: f64::INFINITY,
            p: if diff == 0.0 { 1.0 } else { 0.0 },
        });
    }
    let se = var.sqrt();
    Some(LogRatio {
        diff,
        se,
        df,
        p: (2.0 * upper_tail(diff.abs() / se, df)).clamp(0.0, 1.0),
    })
}

/// The paired estimate from the log ratios `d` of each pair, tagged with their block (box);
/// None with fewer pairs than blocks + 1 or a value that is not finite.
pub fn paired(d: &[(usize, f64)]) -> Option<LogRatio> {
    if d.iter().any(|(_, x)| !x.is_finite()) {
        return None;
    }
    let blocks = by_block(d);
    let n = d.len();
    let df = n.checked_sub(blocks.len())? as f64;
    if df < 1.0 {
        return None;
    }
    let within: f64 = blocks.values().map(|v| ss(v).0).sum();
    let mean = d.iter().map(|(_, x)| x).sum::<f64>() / n as f64;
    ratio(mean, within / df / n as f64, df)
}

/// The unpaired estimate with blocks: ln values of each side tagged with their block. Blocks
/// that only one side has are left out. None when no block has both sides or no cell has two
/// runs.
pub fn unpaired(base: &[(usize, f64)], new: &[(usize, f64)]) -> Option<LogRatio> {
    let (b, n) = (by_block(base), by_block(new));
    let (mut ss_within, mut df) = (0.0, 0.0);
    let mut cells = Vec::new();
    for (block, bv) in &b {
        let Some(nv) = n.get(block) else { continue };
        let ((sb, mb), (sn, mn)) = (ss(bv), ss(nv));
        ss_within += sb + sn;
        df += (bv.len() - 1 + nv.len() - 1) as f64;
        cells.push((mn - mb, 1.0 / bv.len() as f64 + 1.0 / nv.len() as f64));
    }
    if cells.is_empty() || df < 1.0 {
        return None;
    }
    // Weights ∝ 1 / (1/n_base + 1/n_new): the inverse of each box's variance factor.
    let total_w: f64 = cells.iter().map(|(_, f)| 1.0 / f).sum();
    let diff = cells.iter().map(|(d, f)| d / f).sum::<f64>() / total_w;
    let var = ss_within / df / total_w;
    ratio(diff, var, df)
}

/// How much of the spread of ln(value) lies between boxes.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct BetweenShare {
    /// σ²_between / (σ²_between + σ²_within), from 0 to 1 (0 when the boxes differ by no more
    /// than their runs do).
    pub share: f64,
    /// sd of ln(value) between boxes and within a box (≈ fractions).
    pub between_sd: f64,
    pub within_sd: f64,
    /// The F test of "no box effect" and its p.
    pub f: f64,
    pub p: f64,
    /// Boxes and runs that went in.
    pub boxes: usize,
    pub runs: usize,
}

/// The share of the spread between boxes: `sides[s][b]` holds the ln values of side s on box
/// b. Each side keeps its own mean, so a real change between the sides is not counted as
/// spread. None with fewer than 2 boxes on every side or no run to spare within them.
pub fn between_share(sides: &[Vec<Vec<f64>>]) -> Option<BetweenShare> {
    let (mut ss_b, mut df_b, mut ss_w, mut df_w, mut n0_num) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let (mut boxes, mut runs) = (0usize, 0usize);
    for side in sides {
        let groups: Vec<&Vec<f64>> = side.iter().filter(|g| !g.is_empty()).collect();
        if groups.len() < 2 {
            continue;
        }
        let n: usize = groups.iter().map(|g| g.len()).sum();
        let grand = groups.iter().flat_map(|g| g.iter()).sum::<f64>() / n as f64;
        for g in &groups {
            let (s, m) = ss(g);
            ss_w += s;
            df_w += (g.len() - 1) as f64;
            ss_b += g.len() as f64 * (m - grand) * (m - grand);
        }
        df_b += (groups.len() - 1) as f64;
        let sum_sq: f64 = groups.iter().map(|g| (g.len() * g.len()) as f64).sum();
        n0_num += n as f64 - sum_sq / n as f64;
        boxes = boxes.max(groups.len());
        runs += n;
    }
    if df_b < 1.0 || df_w < 1.0 {
        return None;
    }
    let (ms_b, ms_w) = (ss_b / df_b, ss_w / df_w);
    let n0 = n0_num / df_b;
    let var_b = ((ms_b - ms_w) / n0).max(0.0);
    let total = var_b + ms_w;
    let f = if ms_w > 0.0 {
        ms_b / ms_w
    } else {
        f64::INFINITY
    };
    let p = if f.is_infinite() {
        0.0
    } else {
        FisherSnedecor::new(df_b, df_w)
            .map(|d| d.sf(f))
            .unwrap_or(f64::NAN)
    };
    Some(BetweenShare {
        share: if total > 0.0 { var_b / total } else { 0.0 },
        between_sd: var_b.sqrt(),
        within_sd: ms_w.sqrt(),
        f,
        p,
        boxes,
        runs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::paired::PairedT;
    use approx::assert_relative_eq;

    #[test]
    fn one_box_is_the_paired_t_of_the_rounds() {
        let d = [0.01, 0.03, 0.02, 0.05];
        let tagged: Vec<(usize, f64)> = d.iter().map(|x| (0, *x)).collect();
        let r = paired(&tagged).unwrap();
        let t = PairedT::of(&d, 0.95).unwrap();
        assert_relative_eq!(r.diff, t.mean, epsilon = 1e-15);
        assert_eq!(r.df, 3.0);
        let (lo, hi) = r.log_interval(0.95);
        assert_relative_eq!(lo, t.lo.unwrap(), epsilon = 1e-12);
        assert_relative_eq!(hi, t.hi.unwrap(), epsilon = 1e-12);
        assert_eq!(paired(&[(0, 0.1)]), None);
        // Two boxes of one pair each leave no degree of freedom.
        assert_eq!(paired(&[(0, 0.1), (1, 0.2)]), None);
    }

    #[test]
    fn boxes_are_blocks_in_the_paired_estimate() {
        // Box 1's effect is 0.1 higher: with boxes as blocks that level costs nothing; the
        // spread within each box is 0.01 (d ± 0.01), 4 pairs, 2 boxes, 2 df.
        let d = [(0, 0.01), (0, 0.03), (1, 0.11), (1, 0.13)];
        let r = paired(&d).unwrap();
        assert_relative_eq!(r.diff, 0.07, epsilon = 1e-12);
        assert_eq!(r.df, 2.0);
        // Pooled within variance (0.0002 + 0.0002) / 2 = 0.0002, over 4 pairs.
        assert_relative_eq!(r.se, (0.0002f64 / 4.0).sqrt(), epsilon = 1e-12);
    }

    #[test]
    fn unpaired_with_boxes_compares_within_each_box() {
        // Box 1 runs 0.5 above box 0 on both sides; the change is +0.02 in each box.
        let base = [(0, 0.0), (0, 0.02), (1, 0.5), (1, 0.52)];
        let new = [(0, 0.02), (0, 0.04), (1, 0.52), (1, 0.54)];
        let r = unpaired(&base, &new).unwrap();
        assert_relative_eq!(r.diff, 0.02, epsilon = 1e-12);
        // Each cell: SS 0.0002; 4 cells, 4 df → s² = 0.0008 / 4 = 0.0002; each box weighs
        // 1 / (1/2 + 1/2) = 1, total 2 → var 0.0002 / 2.
        assert_eq!(r.df, 4.0);
        assert_relative_eq!(r.se, (0.0002f64 / 2.0).sqrt(), epsilon = 1e-12);
        // Pooled as one box, the box levels would swamp it.
        let flat =
            |v: &[(usize, f64)]| -> Vec<(usize, f64)> { v.iter().map(|x| (0, x.1)).collect() };
        let pooled = unpaired(&flat(&base), &flat(&new)).unwrap();
        assert!(pooled.se > 10.0 * r.se, "{pooled:?}");
        assert_eq!(unpaired(&[(0, 0.1)], &[(1, 0.2)]), None);
    }

    #[test]
    fn the_share_between_boxes_follows_the_variance_components() {
        // Two boxes 0.1 apart, runs ±0.01 within: nearly all the spread is the box.
        let side = vec![vec![0.0, 0.02, 0.01], vec![0.1, 0.12, 0.11]];
        let s = between_share(&[side.clone(), side.clone()]).unwrap();
        assert!(s.share > 0.95 && s.p < 0.001, "{s:?}");
        assert_relative_eq!(s.within_sd, 0.01, epsilon = 1e-12);
        // MS_b = 3 · 2 · 0.05² / 1 = 0.015 per side, pooled 0.015; n0 = 3:
        // σ²_b = (0.015 − 0.0001) / 3.
        assert_relative_eq!(
            s.between_sd,
            ((0.015f64 - 0.0001) / 3.0).sqrt(),
            epsilon = 1e-12
        );
        // Boxes that agree: share 0.
        let same = vec![vec![0.0, 0.02, 0.01], vec![0.01, 0.0, 0.02]];
        assert_eq!(between_share(&[same]).unwrap().share, 0.0);
        assert_eq!(between_share(&[vec![vec![0.0, 0.1]]]), None);
    }
}
