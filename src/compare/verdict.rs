//! The one implementation of the verdict, shared by every output format: given the samples of
//! each side and the metric's direction, say improved / regressed / no change / within noise
//! (or that no verdict is possible), by the LKP rule or the bootstrap rule.

use crate::record::Direction;
use crate::stats::{self, ChangeCi, Shift};
use serde::Serialize;

/// Which significance rule decides the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// The LKP robot's: ≥3 runs on a side, each median outside the other side's range, medians
    /// differing by more than the noise band.
    Lkp,
    /// criterion's: Welch's t p < significance, and the seeded bootstrap CI of the change
    /// entirely beyond the noise band.
    Bootstrap,
}

/// The knobs of a comparison; all are printed in JSON output.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    pub rule: Rule,
    /// Confidence level of the bootstrap interval (0.95).
    pub confidence: f64,
    /// Significance level of Welch's t-test (0.05).
    pub significance: f64,
    /// Changes within ±noise_pct are "within noise" (1 %).
    pub noise_pct: f64,
    pub resamples: usize,
    pub seed: u64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            rule: Rule::Bootstrap,
            confidence: 0.95,
            significance: 0.05,
            noise_pct: 1.0,
            resamples: 10_000,
            seed: 0x5eed,
        }
    }
}

/// The verdict phrases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Improved,
    Regressed,
    NoChange,
    WithinNoise,
    /// Too few samples (or a metric on one side only): numbers only.
    NoVerdict,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::NoChange => "no change",
            Verdict::WithinNoise => "within noise",
            Verdict::NoVerdict => "no verdict",
        }
    }
}

/// The verdict with the statistics behind it.
#[derive(Debug, Clone, Serialize)]
pub struct Judgement {
    pub verdict: Verdict,
    /// Welch's t-test p-value (both rules report it when each side has ≥2 samples).
    pub p_value: Option<f64>,
    /// Bootstrap CI of the relative change of means (0.03 = +3 %); bootstrap rule only.
    pub ci: Option<ChangeCi>,
    /// Why there is no verdict, when there is none.
    pub reason: Option<String>,
}

/// Judges new against base.
pub fn judge(base: &[f64], new: &[f64], direction: Direction, s: &Settings) -> Judgement {
    let p_value = stats::welch_p_value(base, new);
    // The lkp rule does not use the interval; skipping it keeps big comparisons quick.
    let ci = match s.rule {
        Rule::Bootstrap => stats::bootstrap_change_ci(base, new, s.resamples, s.confidence, s.seed),
        Rule::Lkp => None,
    };
    let noise = s.noise_pct / 100.0;
    let moved = match s.rule {
        Rule::Lkp => match stats::lkp_shift(base, new, 1.0 + noise) {
            None => Err("the lkp rule needs 3 samples on a side"),
            Some(shift) => Ok(shift),
        },
        Rule::Bootstrap => match (p_value, ci) {
            (Some(p), Some(ci)) => Ok(if p >= s.significance {
                Shift::None
            } else if ci.lower > noise {
                Shift::Up
            } else if (1.0 + ci.upper) * (1.0 + noise) < 1.0 {
                Shift::Down
            } else {
                Shift::Small
            }),
            _ => Err("the bootstrap rule needs 2 samples on each side and positive values"),
        },
    };
    let (verdict, reason) = match moved {
        Err(why) => (Verdict::NoVerdict, Some(why.to_string())),
        Ok(Shift::None) => (Verdict::NoChange, None),
        Ok(Shift::Small) => (Verdict::WithinNoise, None),
        Ok(shift) => {
            let better = (shift == Shift::Up) == (direction == Direction::HigherIsBetter);
            (
                if better {
                    Verdict::Improved
                } else {
                    Verdict::Regressed
                },
                None,
            )
        }
    };
    Judgement {
        verdict,
        p_value,
        ci,
        reason,
    }
}
