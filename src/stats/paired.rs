//! The paired estimate of a campaign: each round (block) gives one log ratio
//! `d = ln(patched / base)`; the change is `exp(mean d) − 1` with a Student-t interval on
//! `mean d` with (number of pairs − 1) degrees of freedom. A slow component shared by both
//! sides of a round (time of day, host load) cancels in `d`.

use super::welch::t_quantile;

/// The paired t estimate of the log ratio.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PairedT {
    /// Pairs (rounds) used.
    pub n: usize,
    /// Mean of d = ln(patched / base).
    pub mean: f64,
    /// Sample sd of d (None below 2 pairs).
    pub sd: Option<f64>,
    /// Interval on the log scale at the asked confidence (None below 2 pairs).
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

impl PairedT {
    /// From the per-round log ratios; None when there are none or one is not finite.
    pub fn of(d: &[f64], confidence: f64) -> Option<PairedT> {
        if d.is_empty() || d.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let n = d.len();
        let mean = d.iter().sum::<f64>() / n as f64;
        let sd = (n >= 2).then(|| {
            (d.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64).sqrt()
        });
        let half =
            sd.map(|s| t_quantile(0.5 + confidence / 2.0, (n - 1) as f64) * s / (n as f64).sqrt());
        Some(PairedT {
            n,
            mean,
            sd,
            lo: half.map(|h| mean - h),
            hi: half.map(|h| mean + h),
        })
    }

    /// The change in % (`exp(mean) − 1`).
    pub fn change_pct(&self) -> f64 {
        100.0 * self.mean.exp_m1()
    }

    /// The interval in % of change.
    pub fn interval_pct(&self) -> Option<(f64, f64)> {
        Some((100.0 * self.lo?.exp_m1(), 100.0 * self.hi?.exp_m1()))
    }

    /// Half the interval's width on the log scale, as % (what `--until` aims at).
    pub fn half_width_pct(&self) -> Option<f64> {
        Some(100.0 * ((self.hi? - self.lo?) / 2.0).exp_m1())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_the_formula() {
        // d = 0.01, 0.03, 0.02: mean 0.02, sd 0.01, t(0.975, 2) = 4.3027, half 0.024842.
        let p = PairedT::of(&[0.01, 0.03, 0.02], 0.95).unwrap();
        assert!((p.mean - 0.02).abs() < 1e-12);
        assert!((p.sd.unwrap() - 0.01).abs() < 1e-12);
        assert!((p.hi.unwrap() - p.mean - 0.024842).abs() < 1e-5);
        assert!(PairedT::of(&[0.1], 0.95).unwrap().lo.is_none());
        assert!(PairedT::of(&[], 0.95).is_none());
    }
}
