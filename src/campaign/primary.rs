//! The metric a campaign follows (its schedule's `--until` and `status`), its per-round
//! ratios, and the one decision of `--until`: after the pilot, Stein's two-stage rule on the
//! pilot's per-round log ratios says how many rounds the asked half-width needs. Only their
//! spread is used, never their mean, so the decision does not peek at the difference.

use crate::record::campaign::spec::{CampaignSpec, Schedule, PILOT_ROUNDS};
use crate::record::campaign::state::Decision;
use crate::record::{Direction, Metric, RunRecord};
use crate::stats::blocked::{between_share, BetweenShare};
use crate::stats::paired::PairedT;
use std::collections::BTreeMap;

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

fn headline(metrics: &[Metric]) -> Option<&Metric> {
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
/// ratios (rounds up to [`PILOT_ROUNDS`]), n₀ their count, and the mean over all N pairs. Its
/// coverage is nominal and its half-width is the asked one however many rounds the rule chose
/// (the paired t over every round, which `compare` prints, covers less when the rounds were
/// chosen from the pilot; docs/compare.md). None without a pilot of 2 pairs.
pub fn until_interval(spec: &CampaignSpec, runs: &[RunRecord]) -> Option<UntilInterval> {
    let key = primary_key(spec, runs)?;
    let pilot: Vec<RunRecord> = runs
        .iter()
        .filter(|r| r.campaign.as_ref().is_some_and(|c| c.round <= PILOT_ROUNDS))
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

/// The `--until` decision from the pilot's runs, or None when the schedule is fixed or the
/// pilot gave fewer than 2 complete rounds. `round_secs` is the mean wall time of a pilot round
/// and `spent_secs` the campaign's time so far (for `--max-time`).
pub fn decide(
    spec: &CampaignSpec,
    pilot_runs: &[RunRecord],
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
    let mut rounds = needed;
    let mut bound = None;
    if rounds > *max_rounds {
        rounds = *max_rounds;
        bound = Some("--max-rounds".to_string());
    }
    if let Some(t) = by_time.filter(|t| *t < rounds) {
        rounds = t;
        bound = Some("--max-time".to_string());
    }
    let rounds = rounds.max(pilot);
    let s0 = crate::stats::welch::LogSample::of(&ratios)?.sd()?;
    let t = crate::stats::welch::t_quantile(0.5 + spec.confidence / 2.0, (d.len() - 1) as f64);
    Some(Decision {
        primary: key,
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
        let u = until_interval(&spec, &runs).unwrap();
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
