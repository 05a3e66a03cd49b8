//! The metric a campaign follows (its schedule's `--until` and `status`), its per-round
//! ratios, and the one decision of `--until`: after the pilot, Stein's two-stage rule on the
//! pilot's per-round log ratios says how many rounds the asked half-width needs. Only their
//! spread is used, never their mean, so the decision does not peek at the difference.
//!
//! The pilot's size comes from the time of its first round ([`pilot_rounds`]): as many rounds
//! as fit in [`PILOT_SECS`], at least [`PILOT_ROUNDS`] and at most [`MAX_PILOT_ROUNDS`]. Stein's
//! rule with t on n₀ − 1 degrees of freedom asks, on average, (t / z)² times the rounds the
//! true spread needs, and more with a noisy pilot spread: 4.8x with 3 rounds (t = 4.30), 1.09x
//! with 30 (t = 2.05). A round of two 1-second steps can afford 30 pilot rounds; a round of two
//! kexec boots cannot, and keeps 3. The size depends on a round's wall time only, never on the
//! values, so Stein's interval keeps its coverage (tests/calibration_paired.rs).

use crate::record::campaign::spec::{CampaignSpec, Schedule, PILOT_ROUNDS};
use crate::record::campaign::state::{Decision, Step, StepState};
use crate::record::{Direction, Metric, RunRecord};
use crate::stats::blocked::{between_share, BetweenShare};
use crate::stats::paired::PairedT;
use std::collections::BTreeMap;

/// The fewest rounds with which `compare` gives a paired verdict at a campaign's two-sided
/// `confidence` (`stats::sign_flip::fewest_pairs` at α = (1 − confidence) / 2): 7 at 95 %, 6
/// at 90 %. A campaign's default `--rounds`, and the least `--until` plans.
pub fn fewest_rounds(confidence: f64) -> u32 {
    let alpha = (1.0 - confidence) / 2.0;
    u32::try_from(crate::stats::sign_flip::fewest_pairs(alpha)).unwrap_or(u32::MAX)
}

/// The metric followed: the spec's `--primary`, else the headline of the first run: the
/// System Benchmarks Index at the fewest copies, AIM7's jobs/min at the highest load,
/// will-it-scale's ops at the most tasks, else the first metric where higher is better.
pub fn primary_key(spec: &CampaignSpec, runs: &[RunRecord]) -> Option<String> {
    if let Some(p) = &spec.primary {
        return Some(p.clone());
    }
    let first = runs.first()?;
    headline(&first.metrics).map(Metric::key)
}

/// The headline metric of a run's metrics (see [`primary_key`]); also what `calibrate` plants
/// its changes in.
pub fn headline(metrics: &[Metric]) -> Option<&Metric> {
    let param = |m: &Metric, k: &str| m.params.get(k).and_then(|v| v.parse::<u64>().ok());
    let index = metrics
        .iter()
        .filter(|m| m.name == "unixbench.index" && !m.params.contains_key("category"))
        .min_by_key(|m| param(m, "copies"));
    let aim = || {
        metrics
            .iter()
            .filter(|m| m.name == "aim7.jobs-per-min")
            .max_by_key(|m| param(m, "load"))
    };
    let scale = || {
        metrics
            .iter()
            .filter(|m| m.name.starts_with("will-it-scale.per_"))
            .max_by_key(|m| param(m, "tasks"))
    };
    let score = || {
        metrics
            .iter()
            .filter(|m| m.name == "unixbench.score")
            .min_by_key(|m| param(m, "copies"))
    };
    index
        .or_else(aim)
        .or_else(scale)
        .or_else(score)
        .or_else(|| {
            metrics
                .iter()
                .find(|m| m.direction == Direction::HigherIsBetter)
        })
        .or_else(|| metrics.first())
}

/// The value of metric `key` in a run.
pub fn value(run: &RunRecord, key: &str) -> Option<f64> {
    run.metrics
        .iter()
        .find(|m| m.key() == key)
        .map(|m| m.value)
        .filter(|v| v.is_finite() && *v > 0.0)
}

/// The per-block log ratios ln(patched / base) of metric `key`, one per (box, round) whose two
/// sides both have it, in block order.
pub fn log_ratios(runs: &[RunRecord], key: &str) -> Vec<f64> {
    let mut blocks: BTreeMap<(String, u32), [Option<f64>; 2]> = BTreeMap::new();
    for r in runs {
        let Some(step) = &r.campaign else { continue };
        let slot = match step.side.as_str() {
            "base" => 0,
            "patched" => 1,
            _ => continue,
        };
        if let Some(v) = value(r, key) {
            blocks.entry(step.block()).or_default()[slot] = Some(v);
        }
    }
    blocks
        .values()
        .filter_map(|[b, p]| Some(((*p)? / (*b)?).ln()))
        .collect()
}

/// The share of the spread of metric `key` that lies between boxes (for `status` in a lab):
/// ln(value) of each side grouped by box, each side about its own mean. None with fewer than
/// 2 boxes, or no box with 2 runs of a side.
pub fn between_box_share(runs: &[RunRecord], key: &str) -> Option<BetweenShare> {
    let mut sides: [BTreeMap<String, Vec<f64>>; 2] = Default::default();
    for r in runs {
        let Some(step) = &r.campaign else { continue };
        let side = match step.side.as_str() {
            "base" => 0,
            "patched" => 1,
            _ => continue,
        };
        if let Some(v) = value(r, key) {
            sides[side]
                .entry(step.r#box.clone())
                .or_default()
                .push(v.ln());
        }
    }
    let groups: Vec<Vec<Vec<f64>>> = sides
        .into_iter()
        .map(|s| s.into_values().collect())
        .collect();
    between_share(&groups)
}

/// The paired estimate of the primary metric so far.
pub fn estimate(spec: &CampaignSpec, runs: &[RunRecord]) -> Option<(String, PairedT)> {
    let key = primary_key(spec, runs)?;
    let d = log_ratios(runs, &key);
    PairedT::of(&d, spec.confidence).map(|p| (key, p))
}

/// The interval `--until` promises, in % of change: Stein's two-stage interval of the primary
/// metric, `mean d ± t(n₀ − 1) · s₀ / √N`, with s₀ the spread of the pilot's per-round log
/// ratios (rounds up to `pilot_rounds`, the decision's), n₀ their count, and the mean over
/// all N pairs. Its coverage is nominal and its half-width is the asked one however many rounds
/// the rule chose (the paired t over every round, which `compare` prints, covers less when the
/// rounds were chosen from the pilot; docs/compare.md). None without a pilot of 2 pairs.
pub fn until_interval(
    spec: &CampaignSpec,
    runs: &[RunRecord],
    pilot_rounds: u32,
) -> Option<UntilInterval> {
    let key = primary_key(spec, runs)?;
    let pilot: Vec<RunRecord> = runs
        .iter()
        .filter(|r| r.campaign.as_ref().is_some_and(|c| c.round <= pilot_rounds))
        .cloned()
        .collect();
    let d0 = log_ratios(&pilot, &key);
    let d = log_ratios(runs, &key);
    if d0.len() < 2 || d.len() < d0.len() {
        return None;
    }
    let pilot_ratios: Vec<f64> = d0.iter().map(|x| x.exp()).collect();
    let s0 = crate::stats::welch::LogSample::of(&pilot_ratios)?.sd()?;
    let t = crate::stats::welch::t_quantile(0.5 + spec.confidence / 2.0, (d0.len() - 1) as f64);
    let mean = d.iter().sum::<f64>() / d.len() as f64;
    let half = t * s0 / (d.len() as f64).sqrt();
    Some(UntilInterval {
        key,
        lower_pct: 100.0 * (mean - half).exp_m1(),
        point_pct: 100.0 * mean.exp_m1(),
        upper_pct: 100.0 * (mean + half).exp_m1(),
        half_width_pct: 100.0 * half.exp_m1(),
        pilot_pairs: d0.len(),
        pairs: d.len(),
    })
}

/// Stein's interval of an `--until` campaign's primary metric.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct UntilInterval {
    pub key: String,
    pub lower_pct: f64,
    pub point_pct: f64,
    pub upper_pct: f64,
    /// Half the interval's width on the log scale, as % (what `--until` aimed at).
    pub half_width_pct: f64,
    pub pilot_pairs: usize,
    pub pairs: usize,
}

/// Wall time the pilot of `--until` aims at (see the module's doc).
pub const PILOT_SECS: f64 = 120.0;

/// The most rounds a pilot has: beyond 30, t(n₀ − 1) is within 5 % of z.
pub const MAX_PILOT_ROUNDS: u32 = 30;

/// The pilot's size for rounds of `round_secs` (wall time of one round, all its steps): as
/// many as fit in [`PILOT_SECS`] (or in half of `--max-time`, `max_time_s`, when that is less:
/// the pilot leaves room for the rounds it decides), at least [`PILOT_ROUNDS`], at most
/// [`MAX_PILOT_ROUNDS`] and `max_rounds`.
pub fn pilot_size(round_secs: f64, max_rounds: u32, max_time_s: Option<f64>) -> u32 {
    let budget = max_time_s.map_or(PILOT_SECS, |t| PILOT_SECS.min(t / 2.0));
    let fit = if round_secs > 0.0 {
        (budget / round_secs).floor()
    } else {
        f64::INFINITY
    };
    let n = fit.clamp(f64::from(PILOT_ROUNDS), f64::from(MAX_PILOT_ROUNDS)) as u32;
    n.min(max_rounds)
}

/// The size of an `--until` campaign's pilot, from its steps: None for a fixed schedule, and
/// until every step of round 1 is over (done or failed, on every box); then [`pilot_size`] of
/// round 1's wall time (per box: its steps' times added, or the longest in a duet; the mean
/// over boxes). Steps keep their times, so the size is the same on every resume.
pub fn pilot_rounds(spec: &CampaignSpec, steps: &[Step]) -> Option<u32> {
    let Schedule::Until {
        max_rounds,
        max_time_s,
        ..
    } = &spec.schedule
    else {
        return None;
    };
    let first: Vec<&Step> = steps.iter().filter(|s| s.round == 1).collect();
    if first.is_empty()
        || first
            .iter()
            .any(|s| !matches!(s.state, StepState::Done | StepState::Failed))
    {
        return None;
    }
    let mut per_box: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for s in &first {
        // A step without its times (never started) adds nothing.
        let secs = s
            .started_at
            .as_deref()
            .zip(s.finished_at.as_deref())
            .and_then(|(a, b)| crate::clock::secs_between(a, b));
        per_box.entry(s.r#box.as_str()).or_default().extend(secs);
    }
    let rounds: Vec<f64> = per_box
        .values()
        .map(|t| {
            if spec.duet {
                t.iter().copied().fold(0.0, f64::max)
            } else {
                t.iter().sum()
            }
        })
        .collect();
    let round_secs = crate::stats::mean(&rounds).unwrap_or(0.0);
    Some(pilot_size(round_secs, *max_rounds, *max_time_s))
}

/// Where the pilot of an `--until` campaign stands: what the driver does before each step
/// (its one call here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pilot {
    /// A fixed schedule, or round 1 still running, or a pilot round under way: nothing to do.
    Waiting,
    /// The pilot is to have `rounds` rounds, more than are planned: plan the rest.
    Grow { rounds: u32 },
    /// Round `round` of the pilot's `rounds` just ended (its steps over, the next round not
    /// begun): show the estimate so far ([`firming`]).
    RoundEnded { round: u32, rounds: u32 },
    /// Every step of the pilot's `rounds` rounds is over: decide.
    Over { rounds: u32 },
}

impl Pilot {
    /// The progress line's words for a pilot grown to `rounds`.
    pub fn grown(rounds: u32) -> String {
        format!(
            "the rounds are short: a pilot of {rounds} rounds (as many as fit in {PILOT_SECS} s, \
             at most {MAX_PILOT_ROUNDS}) before --until decides"
        )
    }
}

/// Where the pilot stands ([`Pilot`]) for a campaign with `planned_rounds` planned and these
/// steps; [`Pilot::Waiting`] too once decided (the driver asks only before the decision).
pub fn pilot(spec: &CampaignSpec, planned_rounds: u32, steps: &[Step]) -> Pilot {
    let Some(rounds) = pilot_rounds(spec, steps) else {
        return Pilot::Waiting;
    };
    if rounds > planned_rounds {
        return Pilot::Grow { rounds };
    }
    let over = |r: u32| {
        steps
            .iter()
            .filter(|s| s.round == r)
            .all(|s| matches!(s.state, StepState::Done | StepState::Failed))
    };
    if (1..=rounds).all(over) {
        return Pilot::Over { rounds };
    }
    let last = (1..=rounds).take_while(|r| over(*r)).last();
    let untouched = |r: u32| {
        steps
            .iter()
            .filter(|s| s.round == r)
            .all(|s| s.state == StepState::Planned)
    };
    match last {
        Some(round) if round >= 2 && untouched(round + 1) => Pilot::RoundEnded { round, rounds },
        _ => Pilot::Waiting,
    }
}

/// The rounds `--until` would plan at the spread of the complete rounds so far: Stein's count
/// from all of them (t on their number less one), as the estimate firms up during the pilot and
/// after. The spread only, never the mean.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Firming {
    /// Complete rounds (pairs) so far.
    pub pairs: usize,
    /// sd of their log ratios.
    pub sd: f64,
    /// Rounds for ±`pct` at that spread.
    pub rounds: u64,
    pub pct: f64,
}

impl Firming {
    /// `rounds for ±1 %: about 230 at the spread of 12 rounds so far (sd 7.40 % a round)`.
    pub fn describe(&self) -> String {
        format!(
            "rounds for ±{} %: about {} at the spread of {} rounds so far (sd {:.2} % a round)",
            self.pct,
            self.rounds,
            self.pairs,
            100.0 * self.sd
        )
    }
}

/// The [`Firming`] estimate of an `--until` campaign; None for a fixed schedule or with fewer
/// than 2 complete rounds.
pub fn firming(spec: &CampaignSpec, runs: &[RunRecord]) -> Option<Firming> {
    let Schedule::Until { pct, .. } = &spec.schedule else {
        return None;
    };
    let key = primary_key(spec, runs)?;
    let ratios: Vec<f64> = log_ratios(runs, &key).iter().map(|x| x.exp()).collect();
    let plan = crate::stats::precision::stein_plan(&ratios, *pct, spec.confidence, usize::MAX)?;
    Some(Firming {
        pairs: ratios.len(),
        sd: crate::stats::welch::LogSample::of(&ratios)?.sd()?,
        rounds: plan.needed as u64,
        pct: *pct,
    })
}

/// The `--until` decision from the pilot's runs (its `pilot_rounds` rounds, [`pilot_rounds`]),
/// or None when the schedule is fixed or the pilot gave fewer than 2 complete rounds.
/// `round_secs` is the mean wall time of a pilot round and `spent_secs` the campaign's time so
/// far (for `--max-time`).
pub fn decide(
    spec: &CampaignSpec,
    pilot_runs: &[RunRecord],
    pilot_rounds: u32,
    round_secs: f64,
    spent_secs: f64,
) -> Option<Decision> {
    let Schedule::Until {
        pct,
        max_rounds,
        max_time_s,
    } = &spec.schedule
    else {
        return None;
    };
    let key = primary_key(spec, pilot_runs)?;
    let d = log_ratios(pilot_runs, &key);
    if d.len() < 2 {
        return None;
    }
    // stein_plan works on rates: the per-round ratios are exactly that.
    let ratios: Vec<f64> = d.iter().map(|x| x.exp()).collect();
    let plan = crate::stats::precision::stein_plan(&ratios, *pct, spec.confidence, usize::MAX)?;
    let needed = u32::try_from(plan.needed).unwrap_or(u32::MAX);
    let pilot = d.len() as u32;
    let by_time = max_time_s.map(|t| {
        let left = (t - spent_secs).max(0.0);
        let more = if round_secs > 0.0 {
            (left / round_secs).floor() as u32
        } else {
            u32::MAX
        };
        pilot.saturating_add(more)
    });
    // Never fewer than the pairs `compare` needs for a paired verdict, unless the caps say so.
    let mut rounds = needed.max(fewest_rounds(spec.confidence));
    let mut bound = None;
    // A bound is said only where it cut the rounds short of what Stein's rule needs.
    if rounds > *max_rounds {
        rounds = *max_rounds;
        bound = (needed > rounds).then(|| "--max-rounds".to_string());
    }
    if let Some(t) = by_time.filter(|t| *t < rounds) {
        rounds = t;
        bound = (needed > rounds)
            .then(|| "--max-time".to_string())
            .or(bound);
    }
    let rounds = rounds.max(pilot);
    let s0 = crate::stats::welch::LogSample::of(&ratios)?.sd()?;
    let t = crate::stats::welch::t_quantile(0.5 + spec.confidence / 2.0, (d.len() - 1) as f64);
    Some(Decision {
        primary: key,
        pilot_rounds,
        pilot_pairs: d.len(),
        pilot_sd: s0,
        rounds_needed: needed,
        rounds,
        bound,
        half_width_pct: 100.0 * (t * s0 / f64::from(rounds).sqrt()).exp_m1(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::campaign::StepInfo;
    use crate::record::Kind;

    fn run_on(side: &str, round: u32, index: f64, bx: &str) -> RunRecord {
        let mut r = run(side, round, index);
        if let Some(s) = r.campaign.as_mut() {
            s.r#box = bx.to_string();
        }
        r
    }

    #[test]
    fn the_until_interval_is_steins() {
        let spec: CampaignSpec = serde_json::from_value(serde_json::json!({
            "name": "c", "sides": [{"name": "base"}, {"name": "patched"}], "workload": ["run"],
            "schedule": {"until": {"pct": 1.0, "max_rounds": 50}}, "order": "random", "seed": 1,
            "executor": "local", "step_timeout_s": 60.0, "confidence": 0.95,
            "program": "patchbench", "started_on": "x"
        }))
        .unwrap();
        // Pilot ratios 1.00, 1.02, 1.04 (sd of ln ≈ 0.0198), then 1.02 twice.
        let mut runs = Vec::new();
        for (round, ratio) in [(1, 1.00), (2, 1.02), (3, 1.04), (4, 1.02), (5, 1.02)] {
            runs.push(run("base", round, 100.0));
            runs.push(run("patched", round, 100.0 * ratio));
        }
        let u = until_interval(&spec, &runs, 3).unwrap();
        assert_eq!((u.pilot_pairs, u.pairs), (3, 5));
        let d: Vec<f64> = [1.0f64, 1.02, 1.04].iter().map(|x| x.ln()).collect();
        let m = d.iter().sum::<f64>() / 3.0;
        let s0 = (d.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 2.0).sqrt();
        let half = 4.302653 * s0 / 5f64.sqrt();
        assert!(
            (u.half_width_pct - 100.0 * half.exp_m1()).abs() < 1e-4,
            "{u:?}"
        );
        let mean = (2.0 * 1.02f64.ln() + d.iter().sum::<f64>()) / 5.0;
        assert!((u.point_pct - 100.0 * mean.exp_m1()).abs() < 1e-9);
    }

    #[test]
    fn the_pilot_fills_two_minutes_with_3_to_30_rounds() {
        // Two 1-s steps with start-up: 30 rounds; two 10-s steps: 5; kexec boots: 3.
        assert_eq!(pilot_size(3.0, 250, None), 30);
        assert_eq!(pilot_size(0.0, 250, None), 30);
        assert_eq!(pilot_size(24.0, 250, None), 5);
        assert_eq!(pilot_size(300.0, 250, None), 3);
        // Never beyond --max-rounds.
        assert_eq!(pilot_size(3.0, 8, None), 8);
        assert_eq!(pilot_size(300.0, 2, None), 2);
        // At most half of --max-time, never under 3.
        assert_eq!(pilot_size(3.0, 250, Some(60.0)), 10);
        assert_eq!(pilot_size(3.0, 250, Some(600.0)), 30);
        assert_eq!(pilot_size(3.0, 250, Some(5.0)), 3);
    }

    fn step(round: u32, slot: u32, state: StepState, secs: Option<u32>) -> Step {
        Step {
            id: i64::from(2 * round + slot),
            campaign_id: 1,
            round,
            slot,
            side: if slot == 0 { "base" } else { "patched" }.into(),
            r#box: String::new(),
            state,
            attempts: 1,
            owner: None,
            lease_until: None,
            started_at: secs.map(|_| "2026-01-01T00:00:00Z".to_string()),
            finished_at: secs.map(|s| format!("2026-01-01T00:00:{s:02}Z")),
            run_uuid: None,
            error: None,
            console_tail: None,
        }
    }

    #[test]
    fn the_pilot_grows_from_round_1_then_reports_each_round_then_decides() {
        let spec: CampaignSpec = serde_json::from_value(serde_json::json!({
            "name": "c", "sides": [{"name": "base"}, {"name": "patched"}], "workload": ["run"],
            "schedule": {"until": {"pct": 1.0, "max_rounds": 250}}, "order": "random", "seed": 1,
            "executor": "local", "step_timeout_s": 60.0, "confidence": 0.95,
            "program": "patchbench", "started_on": "x"
        }))
        .unwrap();
        use StepState::{Done, Failed, Planned, Running};
        let mut steps = vec![
            step(1, 0, Done, Some(2)),
            step(1, 1, Running, None),
            step(2, 0, Planned, None),
            step(2, 1, Planned, None),
            step(3, 0, Planned, None),
            step(3, 1, Planned, None),
        ];
        assert_eq!(pilot(&spec, 3, &steps), Pilot::Waiting);
        // Round 1 took 4 s (a failed step counts its time too): 30 rounds.
        steps[1] = step(1, 1, Failed, Some(2));
        assert_eq!(pilot_rounds(&spec, &steps), Some(30));
        assert_eq!(pilot(&spec, 3, &steps), Pilot::Grow { rounds: 30 });
        assert_eq!(pilot(&spec, 30, &steps), Pilot::Waiting);
        for r in 4..=30 {
            steps.push(step(r, 0, Planned, None));
            steps.push(step(r, 1, Planned, None));
        }
        steps[2] = step(2, 0, Done, Some(2));
        steps[3] = step(2, 1, Done, Some(2));
        assert_eq!(
            pilot(&spec, 30, &steps),
            Pilot::RoundEnded {
                round: 2,
                rounds: 30
            }
        );
        steps[4] = step(3, 0, Running, None);
        assert_eq!(pilot(&spec, 30, &steps), Pilot::Waiting);
        for s in steps.iter_mut() {
            *s = step(s.round, s.slot, Done, Some(2));
        }
        assert_eq!(pilot(&spec, 30, &steps), Pilot::Over { rounds: 30 });
        // Long rounds keep the pilot of 3.
        let slow: Vec<Step> = (1..=3)
            .flat_map(|r| [step(r, 0, Done, Some(59)), step(r, 1, Done, Some(59))])
            .collect();
        assert_eq!(pilot(&spec, 3, &slow), Pilot::Over { rounds: 3 });
    }

    #[test]
    fn the_estimate_firms_up_from_the_spread_alone() {
        let spec: CampaignSpec = serde_json::from_value(serde_json::json!({
            "name": "c", "sides": [{"name": "base"}, {"name": "patched"}], "workload": ["run"],
            "schedule": {"until": {"pct": 1.0, "max_rounds": 250}}, "order": "random", "seed": 1,
            "executor": "local", "step_timeout_s": 60.0, "confidence": 0.95,
            "program": "patchbench", "started_on": "x"
        }))
        .unwrap();
        let mut runs = Vec::new();
        for (round, ratio) in [(1, 1.00), (2, 1.02), (3, 1.04)] {
            runs.push(run("base", round, 100.0));
            runs.push(run("patched", round, 100.0 * ratio));
        }
        let f = firming(&spec, &runs).unwrap();
        // As Stein's rule would plan from these 3 rounds (see precision's tests: 75 at sd 2 %).
        assert_eq!(f.pairs, 3);
        assert!(f.rounds > 50 && f.rounds < 100, "{f:?}");
        assert!(
            f.describe().starts_with("rounds for ±1 %: about"),
            "{}",
            f.describe()
        );
        // The same spread shifted: the same estimate (the mean never enters).
        let shifted: Vec<RunRecord> = runs
            .iter()
            .map(|r| {
                let mut r = r.clone();
                if r.campaign.as_ref().unwrap().side == "patched" {
                    r.metrics[1].value *= 1.5;
                }
                r
            })
            .collect();
        assert_eq!(firming(&spec, &shifted).unwrap().rounds, f.rounds);
    }

    #[test]
    fn the_share_between_boxes_reads_the_runs_of_each_box() {
        let key = "unixbench.index[copies=1]";
        let mut runs = Vec::new();
        for round in 1..=4u32 {
            let wobble = 1.0 + 0.005 * f64::from(round % 2);
            runs.push(run_on("base", round, 100.0 * wobble, "a"));
            runs.push(run_on("patched", round, 103.0 * wobble, "a"));
            runs.push(run_on("base", round, 130.0 * wobble, "b"));
            runs.push(run_on("patched", round, 134.0 * wobble, "b"));
        }
        let s = between_box_share(&runs, key).unwrap();
        assert!(s.share > 0.95 && s.boxes == 2 && s.runs == 16, "{s:?}");
        // One box: nothing to share.
        let one: Vec<RunRecord> = runs
            .iter()
            .filter(|r| r.campaign.as_ref().is_some_and(|c| c.r#box == "a"))
            .cloned()
            .collect();
        assert_eq!(between_box_share(&one, key), None);
    }

    fn run(side: &str, round: u32, index: f64) -> RunRecord {
        let mut r = RunRecord::new(
            Kind::Unixbench,
            Default::default(),
            &BTreeMap::<String, String>::new(),
        );
        r.metrics = vec![
            Metric::new(
                "unixbench.index",
                &[("copies", "2".into())],
                "",
                "",
                Direction::HigherIsBetter,
                index * 2.0,
                vec![],
            ),
            Metric::new(
                "unixbench.index",
                &[("copies", "1".into())],
                "",
                "",
                Direction::HigherIsBetter,
                index,
                vec![],
            ),
            Metric::new(
                "unixbench.score",
                &[("copies", "1".into()), ("test", "pipe".into())],
                "",
                "",
                Direction::HigherIsBetter,
                5.0,
                vec![],
            ),
        ];
        r.campaign = Some(StepInfo {
            campaign: "c".into(),
            round,
            side: side.into(),
            slot: 0,
            r#box: String::new(),
            executor: "local".into(),
            attempt: 1,
            ..Default::default()
        });
        r
    }

    #[test]
    fn the_headline_is_the_index_at_the_fewest_copies_and_ratios_pair_by_round() {
        let runs = vec![
            run("base", 1, 100.0),
            run("patched", 1, 110.0),
            run("patched", 2, 99.0),
            run("base", 2, 90.0),
            run("base", 3, 100.0), // round 3 has no patched run yet
        ];
        let key = headline(&runs[0].metrics).map(Metric::key);
        assert_eq!(key.as_deref(), Some("unixbench.index[copies=1]"));
        let d = log_ratios(&runs, "unixbench.index[copies=1]");
        assert_eq!(d.len(), 2);
        assert!((d[0] - 1.1f64.ln()).abs() < 1e-12 && (d[1] - 1.1f64.ln()).abs() < 1e-12);
    }
}
