//! Drawing one A/A table from a pool: two disjoint sets of runs of the same configuration,
//! as if one were the base and the other the patched kernel.
//!
//! - Unpaired k v k: 2k distinct runs drawn at random; the first k are the base side. Their
//!   campaign sections are dropped, so `compare` judges them as plain runs (unpaired).
//! - Paired n rounds: n distinct rounds drawn at random and kept in time order; in each, a
//!   coin says which of its two runs is the base (with one kernel on both sides the two are
//!   exchangeable, which is what an A/A table assumes). Each run gets a campaign section that
//!   says one campaign, its side, the round's place in the table (1..n) and its slot, so
//!   `compare::paired` pairs them round by round.
//!
//! Every table has its own seed ([`table_seed`]), so a table is the same whatever the number
//! of threads that draw them or the order they are drawn in.

use super::pool::Pool;
use crate::compare::Side;
use crate::record::campaign::StepInfo;
use crate::record::RunRecord;
use rand::seq::index::sample;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// The design of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "design", content = "n", rename_all = "kebab-case")]
pub enum Design {
    /// k runs a side.
    Unpaired(usize),
    /// n rounds, one run of each side each.
    Paired(usize),
}

impl Design {
    /// `5 v 5` or `5 rounds`.
    pub fn label(self) -> String {
        match self {
            Design::Unpaired(k) => format!("{k} v {k}"),
            Design::Paired(n) => format!("{n} rounds"),
        }
    }

    /// The runs (unpaired) or rounds (paired) a pool needs for this design.
    pub fn needs(self) -> usize {
        match self {
            Design::Unpaired(k) => 2 * k,
            Design::Paired(n) => n,
        }
    }

    /// Whether the pool holds enough for a table of this design.
    pub fn fits(self, pool: &Pool) -> bool {
        match self {
            Design::Unpaired(_) => pool.runs.len() >= self.needs(),
            Design::Paired(_) => pool.rounds.len() >= self.needs(),
        }
    }

    fn code(self) -> u64 {
        match self {
            Design::Unpaired(k) => k as u64,
            Design::Paired(n) => (1 << 20) + n as u64,
        }
    }
}

/// The seed of table `i` of a design under the run's seed `seed` (a fixed mix, so tables do
/// not depend on how they are spread over threads).
pub fn table_seed(seed: u64, design: Design, i: usize) -> u64 {
    let mut x = seed ^ design.code().wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ((i as u64) << 32);
    // splitmix64's finaliser.
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// One A/A table of `design` from `pool` (None when the pool is too small for it).
pub fn table(pool: &Pool, design: Design, seed: u64) -> Option<(Side, Side)> {
    if !design.fits(pool) {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    match design {
        Design::Unpaired(k) => {
            let picked = sample(&mut rng, pool.runs.len(), 2 * k).into_vec();
            let side = |name: &str, idx: &[usize]| {
                let runs = idx
                    .iter()
                    .map(|&i| {
                        let (id, r) = &pool.runs[i];
                        let mut r = r.clone();
                        r.campaign = None;
                        (id.clone(), r)
                    })
                    .collect();
                Side::new(name, runs)
            };
            Some((side("base", &picked[..k]), side("patched", &picked[k..])))
        }
        Design::Paired(n) => {
            let mut picked = sample(&mut rng, pool.rounds.len(), n).into_vec();
            picked.sort_unstable();
            let (mut base, mut patched) = (Vec::with_capacity(n), Vec::with_capacity(n));
            for (place, &ri) in picked.iter().enumerate() {
                let round = pool.rounds[ri];
                let swap = rng.random_bool(0.5);
                for (slot, &i) in round.iter().enumerate() {
                    let to_base = (slot == 0) != swap;
                    let (id, r) = &pool.runs[i];
                    let r = in_round(r, place as u32 + 1, slot as u32, to_base);
                    if to_base {
                        base.push((id.clone(), r));
                    } else {
                        patched.push((id.clone(), r));
                    }
                }
            }
            Some((Side::new("base", base), Side::new("patched", patched)))
        }
    }
}

/// A copy of `r` as the run of `side` in round `round` (slot `slot`) of the table's campaign.
fn in_round(r: &RunRecord, round: u32, slot: u32, base: bool) -> RunRecord {
    let mut r = r.clone();
    let mut step = r.campaign.take().unwrap_or_else(|| StepInfo {
        executor: "local".to_string(),
        ..Default::default()
    });
    step.campaign = "calibrate".to_string();
    step.r#box = String::new();
    step.round = round;
    step.slot = slot;
    step.side = if base { "base" } else { "patched" }.to_string();
    step.duet = false;
    r.campaign = Some(step);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::paired::{detect, Detected};

    fn pool(n: usize) -> Pool {
        let runs = (0..n)
            .map(|i| {
                let t = format!("2026-01-01T00:{:02}:00Z", i);
                let r: RunRecord = serde_json::from_value(serde_json::json!({
                    "schema": crate::record::SCHEMA, "kind": "unixbench",
                    "system": crate::sysinfo::SystemInfo::default(), "config": {},
                    "started_at": t, "finished_at": t, "metrics": []
                }))
                .unwrap();
                (i.to_string(), r)
            })
            .collect();
        Pool::new("p", runs)
    }

    #[test]
    fn unpaired_tables_are_disjoint_and_reproducible() {
        let p = pool(12);
        let (b, n) = table(&p, Design::Unpaired(5), 7).unwrap();
        let ids = |s: &Side| s.runs.iter().map(|r| r.0.clone()).collect::<Vec<_>>();
        assert_eq!(b.runs.len(), 5);
        assert!(ids(&b).iter().all(|i| !ids(&n).contains(i)));
        let again = table(&p, Design::Unpaired(5), 7).unwrap();
        assert_eq!(ids(&again.0), ids(&b));
        assert!(table(&p, Design::Unpaired(10), 7).is_none());
    }

    #[test]
    fn paired_tables_pair_by_round() {
        let p = pool(12);
        let (b, n) = table(&p, Design::Paired(5), 3).unwrap();
        let Detected::Paired(d) = detect(&b, &n) else {
            panic!("not paired")
        };
        assert_eq!(d.0.pairs, 5);
        // Each round's two runs are neighbours in time (2i, 2i+1).
        for ((bi, _), (ni, _)) in b.runs.iter().zip(&n.runs) {
            let (x, y): (usize, usize) = (bi.parse().unwrap(), ni.parse().unwrap());
            assert_eq!(x / 2, y / 2);
        }
    }

    #[test]
    fn seeds_differ_by_design_and_table() {
        let a = table_seed(1, Design::Unpaired(3), 0);
        assert_ne!(a, table_seed(1, Design::Unpaired(3), 1));
        assert_ne!(a, table_seed(1, Design::Paired(3), 0));
    }
}
