//! The rule that judges a bisection's steps, on per-round log ratios of the primary metric.
//!
//! **Endpoints first.** A paired campaign of the good endpoint (base) against the bad one
//! (patched) gives, per round, `d = ln(bad / good)`: their mean D̂ is the change on this box,
//! with a paired t interval. Where that interval contains 0 there is nothing to bisect and the
//! bisection stops there, saying so with the interval ([`Endpoints::found`]): "no change" only
//! where the whole interval lies inside the noise band ([`NOISE_BAND_PCT`],
//! [`Endpoints::no_change`]), else "inconclusive", which says to measure longer.
//!
//! **Each step** is a paired campaign of the candidate (patched) against the good endpoint
//! (base): per round `x = ln(candidate / good)`. A candidate before the culprit sits at the
//! good level (x ≈ 0), one at or after it at the bad level (x ≈ D). The step is judged by
//! where the interval of mean x lies against the midpoint D̂/2:
//! - wholly on the good side: `good`; wholly on the bad side: `bad`;
//! - across it: `unsure`, and the step gets more rounds (twice as many, up to a bound); still
//!   unsure at the bound, the candidate is skipped, as `git bisect skip` would.
//!
//! The interval is `mean x ± t · s · √(1/n + 1/(4·R₀))`: n the step's rounds, R₀ the
//! endpoints', so the uncertainty of the midpoint D̂/2 itself is in it; `s` is the per-round sd
//! pooled over every campaign of the bisection so far (same box, same workload, kernels a few
//! commits apart: one noise level), so a step of 2 rounds has the degrees of freedom of all
//! the rounds before it. A step's first rounds are the fewest for which that half-width is at
//! most [`Settings::target`] × |D̂| (n ≈ (t·s / (target·D))², the spec's "useful
//! arithmetic"), at least [`Settings::min_rounds`] (a pair of rounds, which the campaign's
//! random order balances).
//!
//! Why wrong turns stay rare: a candidate at the good level is called bad only if its mean x
//! lies beyond D̂/2 by a whole half-width h, an error of D/2 + h against an interval sized so
//! that h ≤ D/3: at least 2.5 h, about 4 standard errors at 90 %, which is rare, where a
//! fixed threshold on a few runs is wrong whenever the noise moves one mean by D/2. Steps near
//! the midpoint are the ones that cost rounds, and only those (a sequential test with a cap).
//! The simulation (tests/bisect_simulation.rs, docs/bisect.md) measures both rules on the
//! noise model of the paired calibration.

use crate::stats::welch::t_quantile;
use serde::{Deserialize, Serialize};

/// How steps are sized and judged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Two-sided confidence of the steps' intervals (the endpoints' is the campaign's
    /// `--confidence`, 95 % by default: whether there is a change at all is the stricter
    /// question). A wrong turn needs the whole interval beyond the midpoint, so 90 % here
    /// keeps wrong turns rare (the simulation's figures) at fewer rounds than 95 %.
    pub confidence: f64,
    /// The half-width a step's first rounds aim at, as a share of |D̂|.
    pub target: f64,
    /// The fewest rounds of a step.
    pub min_rounds: u32,
    /// The most rounds of a step: unsure there, the candidate is skipped.
    pub max_rounds: u32,
    /// A fixed number of first rounds for every step (`--rounds`), instead of sizing them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_rounds: Option<u32>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            confidence: 0.90,
            target: 1.0 / 3.0,
            min_rounds: 2,
            max_rounds: 16,
            fixed_rounds: None,
        }
    }
}

/// The noise band of the endpoints' "no change", in % (± on the log scale): `compare`'s
/// default band. An interval that holds 0 but reaches beyond it is inconclusive.
pub const NOISE_BAND_PCT: f64 = 1.0;

/// Why there is nothing to bisect, in words every report and message uses: the interval
/// inside the noise band (`no_change`), or holding 0 but reaching beyond it.
pub fn nothing_to_bisect(no_change: bool) -> String {
    if no_change {
        format!("inside the ±{NOISE_BAND_PCT} % noise band")
    } else {
        format!(
            "the interval holds 0 but reaches beyond the ±{NOISE_BAND_PCT} % noise band: \
             measure longer (--rounds, --until)"
        )
    }
}

/// What the endpoints' campaign measured: D̂ = mean ln(bad / good) and its interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Endpoints {
    pub rounds: usize,
    /// D̂, on the log scale.
    pub mean: f64,
    /// The per-round sd of d.
    pub sd: f64,
    pub lower: f64,
    pub upper: f64,
}

impl Endpoints {
    /// From the endpoints' per-round log ratios ln(bad / good); None below 2 rounds or with a
    /// ratio that is not finite.
    pub fn of(d: &[f64], confidence: f64) -> Option<Endpoints> {
        let p = crate::stats::paired::PairedT::of(d, confidence)?;
        Some(Endpoints {
            rounds: p.n,
            mean: p.mean,
            sd: p.sd?,
            lower: p.lo?,
            upper: p.hi?,
        })
    }

    /// Whether there is a change to bisect: the interval excludes 0.
    pub fn found(&self) -> bool {
        self.lower > 0.0 || self.upper < 0.0
    }

    /// Whether the endpoints show no change: the whole interval inside ±[`NOISE_BAND_PCT`].
    pub fn no_change(&self) -> bool {
        let band = (NOISE_BAND_PCT / 100.0).ln_1p();
        self.lower > -band && self.upper < band
    }

    /// What the endpoints say, in words: `change`, `no change` or `inconclusive`.
    pub fn says(&self) -> &'static str {
        if self.found() {
            "change"
        } else if self.no_change() {
            "no change"
        } else {
            "inconclusive"
        }
    }

    /// Why a bisection whose endpoints found nothing stops, after the interval's words.
    pub fn why_nothing(&self) -> String {
        nothing_to_bisect(self.no_change())
    }

    /// The midpoint D̂/2 the steps are judged against.
    pub fn threshold(&self) -> f64 {
        self.mean / 2.0
    }
}

/// The per-round spread of the log ratios, pooled over campaigns: the sum of squared
/// deviations from each campaign's own mean and its degrees of freedom.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub ss: f64,
    pub df: usize,
}

impl Spread {
    /// Adds one campaign's per-round log ratios.
    pub fn add(&mut self, d: &[f64]) {
        if d.len() < 2 || d.iter().any(|x| !x.is_finite()) {
            return;
        }
        let m = d.iter().sum::<f64>() / d.len() as f64;
        self.ss += d.iter().map(|x| (x - m) * (x - m)).sum::<f64>();
        self.df += d.len() - 1;
    }

    /// The same with one more campaign.
    pub fn with(mut self, d: &[f64]) -> Spread {
        self.add(d);
        self
    }

    /// The pooled sd (None without a degree of freedom).
    pub fn sd(&self) -> Option<f64> {
        (self.df > 0).then(|| (self.ss / self.df as f64).sqrt())
    }

    fn t(&self, confidence: f64) -> f64 {
        t_quantile(0.5 + confidence / 2.0, self.df.max(1) as f64)
    }
}

/// How a step came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Good,
    Bad,
    /// The interval lies across the midpoint.
    Unsure,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Good => "good",
            Verdict::Bad => "bad",
            Verdict::Unsure => "unsure",
        }
    }
}

/// A step's judgement: its verdict, the interval it came from, and what comes next.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    pub verdict: Verdict,
    /// Rounds judged.
    pub rounds: usize,
    /// Mean ln(candidate / good), and the interval it was judged by (log scale).
    pub mean: f64,
    pub lower: f64,
    pub upper: f64,
    /// The midpoint D̂/2 (log scale).
    pub threshold: f64,
    /// Where the candidate lies between the endpoints: mean x / D̂ (0 good, 1 bad).
    pub position: f64,
    /// Unsure below the bound: the rounds the step should have in all before it is judged
    /// again. None when the verdict is final (unsure at the bound: skip the candidate).
    pub more: Option<u32>,
}

/// The first rounds of a step: the fewest for which the half-width reaches `target` × |D̂|
/// at the spread pooled so far, within the bounds (`fixed_rounds` when given).
pub fn first_rounds(e: &Endpoints, pooled: &Spread, s: &Settings) -> u32 {
    if let Some(n) = s.fixed_rounds {
        return n.clamp(1, s.max_rounds.max(1));
    }
    let lo = s.min_rounds.max(1);
    let hi = s.max_rounds.max(lo);
    let Some(sd) = pooled.sd().filter(|sd| *sd > 0.0) else {
        return lo;
    };
    let room = (s.target * e.mean.abs() / (pooled.t(s.confidence) * sd)).powi(2)
        - 1.0 / (4.0 * e.rounds.max(1) as f64);
    if room <= 0.0 {
        return hi;
    }
    let n = (1.0 / room).ceil();
    if n >= f64::from(hi) {
        hi
    } else {
        (n as u32).clamp(lo, hi)
    }
}

/// The rounds the endpoints need in all so that the uncertainty of the midpoint D̂/2 takes at
/// most half of a step's half-width budget (`target` × |D̂|): 1/(4·R₀) ≤ (target·|D̂| /
/// (t·s))² / 2, at most `4 × max_rounds`. None when they have enough. A change found but
/// measured too loosely to place the midpoint would make every step near it unsure; more
/// endpoint rounds are cheaper than more rounds at every step.
pub fn endpoint_rounds(e: &Endpoints, pooled: &Spread, s: &Settings) -> Option<u32> {
    if s.fixed_rounds.is_some() {
        return None;
    }
    let sd = pooled.sd().filter(|sd| *sd > 0.0)?;
    let room = (s.target * e.mean.abs() / (pooled.t(s.confidence) * sd)).powi(2);
    let cap = 4 * s.max_rounds.max(1);
    let need = (1.0 / (2.0 * room)).ceil();
    let need = if need >= f64::from(cap) {
        cap
    } else {
        need as u32
    };
    (need as usize > e.rounds).then_some(need)
}

/// Judges a step from its per-round log ratios `x` = ln(candidate / good), with the spread
/// pooled over the campaigns before it (`before`; this step's own rounds are added here).
/// None when `x` is empty or not finite.
pub fn judge(x: &[f64], e: &Endpoints, before: &Spread, s: &Settings) -> Option<Judgement> {
    if x.is_empty() || x.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let n = x.len();
    let mean = x.iter().sum::<f64>() / n as f64;
    let pooled = before.with(x);
    let sd = pooled.sd().unwrap_or(e.sd);
    let half = pooled.t(s.confidence)
        * sd
        * (1.0 / n as f64 + 1.0 / (4.0 * e.rounds.max(1) as f64)).sqrt();
    let (lower, upper) = (mean - half, mean + half);
    let threshold = e.threshold();
    // Oriented so that the bad side is above the midpoint.
    let sign = if e.mean < 0.0 { -1.0 } else { 1.0 };
    let (olo, ohi, oth) = if sign > 0.0 {
        (lower, upper, threshold)
    } else {
        (-upper, -lower, -threshold)
    };
    let verdict = if ohi < oth {
        Verdict::Good
    } else if olo > oth {
        Verdict::Bad
    } else {
        Verdict::Unsure
    };
    let more = (verdict == Verdict::Unsure && (n as u32) < s.max_rounds)
        .then(|| (2 * n as u32).max(n as u32 + 1).min(s.max_rounds));
    Some(Judgement {
        verdict,
        rounds: n,
        mean,
        lower,
        upper,
        threshold,
        position: if e.mean != 0.0 { mean / e.mean } else { 0.0 },
        more,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoints(mean: f64, sd: f64, rounds: usize) -> Endpoints {
        // Ratios mean ± sd·k with the asked sd.
        let half = rounds / 2;
        let mut d: Vec<f64> = (0..rounds)
            .map(|i| mean + if i < half { -1.0 } else { 1.0 })
            .collect();
        if rounds % 2 == 1 {
            d[rounds - 1] = mean;
        }
        let raw = Endpoints::of(&d, 0.95).unwrap();
        let scale = sd / raw.sd;
        let d: Vec<f64> = d.iter().map(|v| mean + (v - mean) * scale).collect();
        Endpoints::of(&d, 0.95).unwrap()
    }

    #[test]
    fn the_endpoints_find_a_change_only_when_their_interval_excludes_zero() {
        let e = Endpoints::of(&[-0.10, -0.12, -0.11, -0.09], 0.95).unwrap();
        assert!(e.found() && (e.mean + 0.105).abs() < 1e-12, "{e:?}");
        assert!((e.threshold() + 0.0525).abs() < 1e-12);
        let none = Endpoints::of(&[-0.05, 0.04, 0.01], 0.95).unwrap();
        assert!(!none.found());
        // It holds 0 but reaches far beyond the ±1 % band: inconclusive, not "no change".
        assert!(
            !none.no_change() && none.says() == "inconclusive",
            "{none:?}"
        );
        assert!(none.why_nothing().contains("measure longer"));
        // Every round within 0.2 % of the other side: inside the band, "no change".
        let same = Endpoints::of(&[-0.002, 0.001, 0.0005, -0.001, 0.0015], 0.95).unwrap();
        assert!(!same.found() && same.no_change() && same.says() == "no change");
        assert!(same.why_nothing().contains("inside the ±1 % noise band"));
        // A 10 % change is a change, whatever the band.
        assert_eq!(e.says(), "change");
        assert!(Endpoints::of(&[0.1], 0.95).is_none());
        assert!(Endpoints::of(&[0.1, f64::NAN], 0.95).is_none());
    }

    #[test]
    fn candidates_at_either_level_are_judged_and_the_midpoint_is_unsure() {
        // A 10 % slowdown measured with a 1 % spread per round.
        let e = endpoints(-0.10, 0.01, 5);
        let before = Spread::default().with(&[-0.11, -0.09, -0.10, -0.095, -0.105]);
        let s = Settings::default();
        let good = judge(&[0.004, -0.006], &e, &before, &s).unwrap();
        assert_eq!(good.verdict, Verdict::Good, "{good:?}");
        assert!(good.position.abs() < 0.1 && good.more.is_none());
        let bad = judge(&[-0.097, -0.104], &e, &before, &s).unwrap();
        assert_eq!(bad.verdict, Verdict::Bad, "{bad:?}");
        let mid = judge(&[-0.049, -0.051], &e, &before, &s).unwrap();
        assert_eq!(mid.verdict, Verdict::Unsure);
        assert_eq!(mid.more, Some(4));
        // At the bound an unsure step asks for nothing more: the candidate is skipped.
        let x = vec![-0.05; 16];
        let at_bound = judge(&x, &e, &before, &s).unwrap();
        assert_eq!((at_bound.verdict, at_bound.more), (Verdict::Unsure, None));
        // An improvement is bisected the same way, mirrored.
        let up = endpoints(0.10, 0.01, 5);
        assert_eq!(
            judge(&[0.099, 0.101], &up, &before, &s).unwrap().verdict,
            Verdict::Bad
        );
        assert_eq!(
            judge(&[0.001, -0.001], &up, &before, &s).unwrap().verdict,
            Verdict::Good
        );
    }

    #[test]
    fn first_rounds_follow_the_spread_over_the_size_of_the_change() {
        let s = Settings::default();
        let tight = endpoints(-0.10, 0.01, 5);
        let sp = |sd: f64| Spread {
            ss: sd * sd * 20.0,
            df: 20,
        };
        // t(0.95, 20) = 1.7247; half-width aim 0.1/3: 1/n ≤ (0.0333 / (1.7247 s))² − 1/20.
        assert_eq!(first_rounds(&tight, &sp(0.01), &s), 2);
        let n = first_rounds(&tight, &sp(0.03), &s);
        let room = (0.1f64 / 3.0 / (1.724718 * 0.03)).powi(2) - 0.05;
        assert_eq!(n, (1.0 / room).ceil() as u32, "{n}");
        assert_eq!(n, 3);
        // Too noisy for the target: the bound.
        assert_eq!(first_rounds(&tight, &sp(0.2), &s), 16);
        // --rounds fixes them.
        let fixed = Settings {
            fixed_rounds: Some(3),
            ..s
        };
        assert_eq!(first_rounds(&tight, &sp(0.2), &fixed), 3);
        // Nothing pooled yet: the fewest.
        assert_eq!(first_rounds(&tight, &Spread::default(), &s), 2);
    }

    #[test]
    fn loose_endpoints_get_more_rounds_tight_ones_none() {
        let s = Settings::default();
        let sp = |sd: f64| Spread {
            ss: sd * sd * 4.0,
            df: 4,
        };
        // t(0.95, 4) = 2.1318: room = (0.0333 / (2.1318 · 0.02))² = 0.611: R₀ ≥ 1/1.22 → 1.
        assert_eq!(
            endpoint_rounds(&endpoints(-0.10, 0.02, 5), &sp(0.02), &s),
            None
        );
        // sd 0.05: room = 0.0978, R₀ ≥ 5.11 → 6.
        assert_eq!(
            endpoint_rounds(&endpoints(-0.10, 0.05, 5), &sp(0.05), &s),
            Some(6)
        );
        // Hopeless: the cap.
        assert_eq!(
            endpoint_rounds(&endpoints(-0.10, 0.5, 5), &sp(0.5), &s),
            Some(64)
        );
        let fixed = Settings {
            fixed_rounds: Some(2),
            ..s
        };
        assert_eq!(
            endpoint_rounds(&endpoints(-0.10, 0.5, 5), &sp(0.5), &fixed),
            None
        );
    }

    #[test]
    fn the_spread_pools_within_campaigns() {
        let mut sp = Spread::default();
        sp.add(&[1.0, 3.0]); // ss 2, df 1
        sp.add(&[10.0, 10.0, 13.0]); // mean 11: ss 1 + 1 + 4 = 6, df 2
        sp.add(&[5.0]); // no degree of freedom
        assert_eq!(sp.df, 3);
        assert!((sp.ss - 8.0).abs() < 1e-12);
        assert!((sp.sd().unwrap() - (8.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!(Spread::default().sd(), None);
    }
}
