//! The A/A data `calibrate` resamples: the runs of one configuration (one kernel, one
//! workload, one set of settings), in time order, and the rounds they form.
//!
//! A round is two runs that belong together in a paired table:
//! - runs made by a campaign pair as the campaign paired them, by (campaign, box, round):
//!   the round's two runs, with their slots (which ran first);
//! - plain runs (no campaign) pair with their neighbour in time: runs 1 and 2, 3 and 4, …
//!   (the first ran first). That is what a campaign would have done had it run them, but
//!   without its random order of the sides; a drift over the session is shared by a round's
//!   two runs as in a campaign.
//!
//! The runs are kept slim: the per-unit monitor samples (`RunRecord::monitors`) are dropped,
//! since `compare` reads the monitor rows from `metrics` only; everything compare reads stays.

use crate::record::RunRecord;
use std::collections::BTreeMap;

/// How a pool's rounds were formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RoundsFrom {
    /// The campaign's own rounds.
    Campaign,
    /// Neighbouring runs in time (the runs are not a campaign's).
    Adjacent,
}

/// The runs of one configuration and their rounds.
#[derive(Debug, Clone)]
pub struct Pool {
    /// What the runs are (a label, a campaign, a file), for messages.
    pub name: String,
    /// (id, run), oldest first.
    pub runs: Vec<(String, RunRecord)>,
    /// Rounds: two indices into `runs`, the one that ran first (or slot 0) first.
    pub rounds: Vec<[usize; 2]>,
    pub rounds_from: RoundsFrom,
    /// Runs left out: another configuration than the pool's, or interrupted.
    pub left_out: Vec<String>,
}

/// What makes two runs the same configuration: the command, its settings, the kernel.
fn configuration(r: &RunRecord) -> String {
    format!(
        "{}|{}|{}|{}",
        r.kind.as_str(),
        serde_json::to_string(&r.config).unwrap_or_default(),
        r.system.kernel_release,
        r.system.kernel_version
    )
}

impl Pool {
    /// The pool of `runs`: the complete runs of their most common configuration (the others
    /// are named in `left_out`), sorted by start time, with their rounds.
    pub fn new(name: impl Into<String>, runs: Vec<(String, RunRecord)>) -> Pool {
        let mut left_out = Vec::new();
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for (_, r) in runs.iter().filter(|(_, r)| !r.incomplete) {
            *counts.entry(configuration(r)).or_default() += 1;
        }
        let common = counts
            .iter()
            .max_by_key(|(_, n)| **n)
            .map(|(c, _)| c.clone());
        let mut kept = Vec::new();
        for (id, mut r) in runs {
            if r.incomplete || Some(configuration(&r)) != common {
                left_out.push(id);
                continue;
            }
            // Neither the monitor units nor the noise check are read by the labels, and every
            // table clones its runs.
            r.monitors.clear();
            r.system.noise = None;
            kept.push((id, r));
        }
        kept.sort_by(|a, b| a.1.started_at.cmp(&b.1.started_at));
        let (rounds, rounds_from) = rounds_of(&kept);
        Pool {
            name: name.into(),
            runs: kept,
            rounds,
            rounds_from,
            left_out,
        }
    }
}

/// The rounds of time-ordered runs: the campaign's when every run is a campaign step (rounds
/// with one side only are left out), else neighbours in time.
fn rounds_of(runs: &[(String, RunRecord)]) -> (Vec<[usize; 2]>, RoundsFrom) {
    if !runs.is_empty() && runs.iter().all(|(_, r)| r.campaign.is_some()) {
        let mut blocks: BTreeMap<(String, String, u32), Vec<usize>> = BTreeMap::new();
        for (i, (_, r)) in runs.iter().enumerate() {
            if let Some(s) = &r.campaign {
                blocks
                    .entry((s.campaign.clone(), s.r#box.clone(), s.round))
                    .or_default()
                    .push(i);
            }
        }
        let slot = |i: usize| runs[i].1.campaign.as_ref().map_or(0, |s| s.slot);
        let mut rounds: Vec<[usize; 2]> = blocks
            .into_values()
            .filter_map(|mut v| {
                v.sort_by_key(|&i| (slot(i), i));
                match v.as_slice() {
                    [a, b] => Some([*a, *b]),
                    _ => None,
                }
            })
            .collect();
        rounds.sort();
        return (rounds, RoundsFrom::Campaign);
    }
    let rounds = (0..runs.len() / 2).map(|i| [2 * i, 2 * i + 1]).collect();
    (rounds, RoundsFrom::Adjacent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::campaign::StepInfo;

    fn run(started: &str, campaign: Option<(u32, &str, u32)>) -> (String, RunRecord) {
        let mut r: RunRecord = serde_json::from_value(serde_json::json!({
            "schema": crate::record::SCHEMA, "kind": "unixbench",
            "system": crate::sysinfo::SystemInfo::default(), "config": {}, "started_at": started, "finished_at": started,
            "metrics": []
        }))
        .unwrap();
        r.campaign = campaign.map(|(round, side, slot)| StepInfo {
            campaign: "aa".into(),
            round,
            side: side.into(),
            slot,
            ..Default::default()
        });
        (started.to_string(), r)
    }

    #[test]
    fn plain_runs_pair_with_their_neighbour_in_time() {
        let p = Pool::new(
            "x",
            vec![
                run("3", None),
                run("1", None),
                run("2", None),
                run("4", None),
                run("5", None),
            ],
        );
        assert_eq!(p.rounds_from, RoundsFrom::Adjacent);
        assert_eq!(p.rounds, vec![[0, 1], [2, 3]]);
        assert_eq!(p.runs[0].0, "1");
    }

    #[test]
    fn campaign_runs_pair_by_round_first_slot_first() {
        let p = Pool::new(
            "x",
            vec![
                run("1", Some((1, "patched", 0))),
                run("2", Some((1, "base", 1))),
                run("3", Some((2, "base", 0))),
                run("4", Some((2, "patched", 1))),
                run("5", Some((3, "base", 0))),
            ],
        );
        assert_eq!(p.rounds_from, RoundsFrom::Campaign);
        assert_eq!(p.rounds, vec![[0, 1], [2, 3]]);
    }
}
