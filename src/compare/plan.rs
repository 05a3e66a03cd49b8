//! Sensitivity of a comparison and the run plan, per row: the smallest change this
//! comparison could have flagged with 80 % power (the minimum detectable effect, MDE), and how
//! many runs a side would flag a change of X % (default 1 % and 2 %), from the between-run
//! spread measured (or borrowed from a noise profile).
//!
//! The MDE is for the labelling rule actually used, so it is always larger than the noise
//! band: a change inside the band can never be flagged. For a target X at or inside the band
//! the plan says the band must be lowered and gives the runs needed with the band at X / 2.

use crate::stats::power::{self, Design};
use serde::Serialize;

/// Most runs a side the plan looks at.
pub const MAX_RUNS: usize = 10_000;

/// Runs a side needed to flag one target change.
#[derive(Debug, Clone, Serialize)]
pub struct PlanEntry {
    pub target_pct: f64,
    /// Runs a side (None: more than [`MAX_RUNS`]).
    pub runs: Option<usize>,
    /// The noise band (in %) this count assumes: the comparison's, or X / 2 when X is not
    /// beyond it.
    pub band_pct: f64,
    /// True when the band had to be lowered for this target.
    pub band_lowered: bool,
}

/// What a plan counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlanUnit {
    /// Runs on each side (an unpaired comparison).
    RunsASide,
    /// Rounds of a campaign, each with one run of each side (a paired comparison).
    Rounds,
}

/// What a row could detect, and what it would take.
#[derive(Debug, Clone, Serialize)]
pub struct Sensitivity {
    /// sd of ln(run value) the figures rest on, in %; for a paired row, sd of the per-round
    /// log ratio d.
    pub spread_pct: f64,
    /// Where that spread came from: "runs", "noise profile" or "pairs".
    pub spread_from: &'static str,
    /// What the plan's counts are.
    pub unit: PlanUnit,
    /// Smallest change (in %) flagged with 80 % power at this comparison's runs.
    pub mde_pct: Option<f64>,
    pub plan: Vec<PlanEntry>,
}

/// The sensitivity of a row with `n_base`/`n_new` runs and spread `sd` (log) with `df`.
#[allow(clippy::too_many_arguments)]
pub fn sensitivity(
    n_base: usize,
    n_new: usize,
    sd: f64,
    df: f64,
    spread_from: &'static str,
    noise_pct: f64,
    alpha: f64,
    targets: &[f64],
) -> Sensitivity {
    let band = (noise_pct / 100.0).ln_1p();
    let design = Design {
        n_base,
        n_new,
        sd,
        df,
        band,
        alpha,
    };
    let mde = if n_base >= 1 && n_new >= 1 && sd > 0.0 {
        power::min_detectable_effect(&design).map(|e| 100.0 * e.exp_m1())
    } else if sd == 0.0 {
        Some(noise_pct)
    } else {
        None
    };
    let plan = targets
        .iter()
        .map(|&x| {
            let lowered = x <= noise_pct;
            let band_pct = if lowered { x / 2.0 } else { noise_pct };
            PlanEntry {
                target_pct: x,
                runs: power::runs_needed(
                    (x / 100.0).ln_1p(),
                    sd,
                    (band_pct / 100.0).ln_1p(),
                    alpha,
                    MAX_RUNS,
                ),
                band_pct,
                band_lowered: lowered,
            }
        })
        .collect();
    Sensitivity {
        spread_pct: 100.0 * sd,
        spread_from,
        unit: PlanUnit::RunsASide,
        mde_pct: mde,
        plan,
    }
}

/// The sensitivity of a paired row: `pairs` rounds over `blocks` boxes whose log ratios have
/// spread `sd_d`; the plan counts rounds (on one box).
pub fn paired_sensitivity(
    pairs: usize,
    blocks: usize,
    sd_d: f64,
    noise_pct: f64,
    alpha: f64,
    targets: &[f64],
) -> Sensitivity {
    let band = (noise_pct / 100.0).ln_1p();
    let design = Design::paired(pairs, blocks, sd_d, band, alpha);
    let mde = if sd_d > 0.0 && design.df >= 1.0 {
        power::min_detectable_effect(&design).map(|e| 100.0 * e.exp_m1())
    } else if sd_d == 0.0 {
        Some(noise_pct)
    } else {
        None
    };
    let plan = targets
        .iter()
        .map(|&x| {
            let lowered = x <= noise_pct;
            let band_pct = if lowered { x / 2.0 } else { noise_pct };
            PlanEntry {
                target_pct: x,
                runs: power::rounds_needed(
                    (x / 100.0).ln_1p(),
                    sd_d,
                    (band_pct / 100.0).ln_1p(),
                    alpha,
                    MAX_RUNS,
                ),
                band_pct,
                band_lowered: lowered,
            }
        })
        .collect();
    Sensitivity {
        spread_pct: 100.0 * sd_d,
        spread_from: "pairs",
        unit: PlanUnit::Rounds,
        mde_pct: mde,
        plan,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_lowers_the_band_for_small_targets() {
        let s = sensitivity(5, 5, 0.01, 8.0, "runs", 1.0, 0.05, &[1.0, 2.0, 3.0]);
        let mde = s.mde_pct.unwrap();
        // 5 + 5 runs at 1 % spread flag 3 % with 88 % power: the MDE is a little below 3 %.
        assert!(mde > 1.0 && mde < 3.0, "{mde}");
        assert!(s.plan[0].band_lowered && s.plan[0].band_pct == 0.5);
        assert!(!s.plan[1].band_lowered);
        let (n1, n2, n3) = (
            s.plan[0].runs.unwrap(),
            s.plan[1].runs.unwrap(),
            s.plan[2].runs.unwrap(),
        );
        assert!(n1 > n2 && n2 > n3 && n3 <= 5, "{n1} {n2} {n3}");
    }

    #[test]
    fn a_paired_plan_counts_rounds_from_the_spread_of_the_ratios() {
        // d with sd 1.4 % (two runs of 1 % each, nothing shared): rounds for 2 % equal runs a
        // side at 1 % each give or take the df (paired: n − 1, unpaired: 2n − 2).
        let p = paired_sensitivity(10, 1, 0.014, 1.0, 0.05, &[2.0]);
        let u = sensitivity(10, 10, 0.01, 18.0, "runs", 1.0, 0.05, &[2.0]);
        assert_eq!((p.unit, p.spread_from), (PlanUnit::Rounds, "pairs"));
        let (rp, ru) = (p.plan[0].runs.unwrap(), u.plan[0].runs.unwrap());
        assert!(rp >= ru && rp <= ru + 3, "{rp} {ru}");
        // A shared component cancels: d spread 0.3 % needs far fewer rounds.
        let quiet = paired_sensitivity(10, 1, 0.003, 1.0, 0.05, &[2.0]);
        assert!(quiet.plan[0].runs.unwrap() < rp);
        assert!(quiet.mde_pct.unwrap() < p.mde_pct.unwrap());
    }
}
