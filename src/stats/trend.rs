//! A straight-line trend within blocks: the least-squares slope of y on x when each block (a
//! box of a campaign) has its own level. What the campaign analysis uses to see drift over
//! rounds, of each side's ln(value) and of the per-round log ratio.

use super::welch::upper_tail;

/// The fitted slope, its standard error and two-sided p.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Trend {
    /// Change of y per unit of x.
    pub slope: f64,
    pub se: f64,
    /// Residual degrees of freedom: points − blocks − 1.
    pub df: f64,
    /// Two-sided p of "no trend".
    pub p: f64,
    /// Points that went in.
    pub n: usize,
    /// The range of x within blocks (the widest), so slope × span is the fitted change over it.
    pub span: f64,
}

/// The trend of `(block, x, y)` points; None with fewer than blocks + 2 points, x constant
/// within every block, or a value that is not finite.
pub fn within_blocks(points: &[(usize, f64, f64)]) -> Option<Trend> {
    if points
        .iter()
        .any(|(_, x, y)| !x.is_finite() || !y.is_finite())
    {
        return None;
    }
    let mut blocks: Vec<usize> = points.iter().map(|p| p.0).collect();
    blocks.sort_unstable();
    blocks.dedup();
    let n = points.len();
    let df = n.checked_sub(blocks.len() + 1)? as f64;
    if df < 1.0 {
        return None;
    }
    // Centre x and y within each block.
    let mut centred = Vec::with_capacity(n);
    let mut span = 0.0f64;
    for b in &blocks {
        let of: Vec<(f64, f64)> = points
            .iter()
            .filter(|p| p.0 == *b)
            .map(|p| (p.1, p.2))
            .collect();
        let k = of.len() as f64;
        let (mx, my) = (
            of.iter().map(|p| p.0).sum::<f64>() / k,
            of.iter().map(|p| p.1).sum::<f64>() / k,
        );
        let (lo, hi) = of
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| {
                (l.min(p.0), h.max(p.0))
            });
        span = span.max(hi - lo);
        centred.extend(of.iter().map(|(x, y)| (x - mx, y - my)));
    }
    let sxx: f64 = centred.iter().map(|(x, _)| x * x).sum();
    if sxx <= 0.0 {
        return None;
    }
    let slope = centred.iter().map(|(x, y)| x * y).sum::<f64>() / sxx;
    let resid: f64 = centred.iter().map(|(x, y)| (y - slope * x).powi(2)).sum();
    let se = (resid / df / sxx).sqrt();
    let p = if se > 0.0 {
        (2.0 * upper_tail((slope / se).abs(), df)).clamp(0.0, 1.0)
    } else if slope == 0.0 {
        1.0
    } else {
        0.0
    };
    Some(Trend {
        slope,
        se,
        df,
        p,
        n,
        span,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn slope_matches_a_hand_fit() {
        // y = 2x + noise (0.1, −0.1, 0, 0.1, −0.1) at x = 1..5: slope 2 + Σx̃e/10 = 2 − 0.02.
        let e = [0.1, -0.1, 0.0, 0.1, -0.1];
        let pts: Vec<(usize, f64, f64)> = (0..5)
            .map(|i| (0, (i + 1) as f64, 2.0 * (i + 1) as f64 + e[i]))
            .collect();
        let t = within_blocks(&pts).unwrap();
        assert_relative_eq!(t.slope, 1.98, epsilon = 1e-12);
        assert_eq!((t.df, t.n, t.span), (3.0, 5, 4.0));
        assert!(t.p < 0.001);
        // Two blocks at different levels share one slope.
        let two: Vec<(usize, f64, f64)> = pts
            .iter()
            .flat_map(|&(_, x, y)| [(0, x, y), (1, x, y + 100.0)])
            .collect();
        let t2 = within_blocks(&two).unwrap();
        assert_relative_eq!(t2.slope, 1.98, epsilon = 1e-12);
        assert_eq!(t2.df, 7.0);
        // Flat noise: no trend to speak of.
        let flat: Vec<(usize, f64, f64)> = (0..5).map(|i| (0, i as f64, e[i])).collect();
        assert!(within_blocks(&flat).unwrap().p > 0.3);
        assert_eq!(within_blocks(&pts[..2]), None);
    }
}
