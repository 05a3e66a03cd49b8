//! The schedule of a campaign: which side runs in which slot of each round.
//!
//! With `random` order the rounds go in pairs (1-2, 3-4, ...): a coin drawn from the campaign's
//! seed and the pair's number says which side goes first in the pair's first round, and its
//! second round runs the other way round. Each order is thus random (a periodic environment
//! cannot line up with it), yet every pair of rounds is balanced, so a drift within rounds
//! cancels over a pair instead of leaking into every metric's ratio at once (with a coin per
//! round it pushed the share of A/A tables with a flag just above 5 % at CV ≥ 2 %; the
//! calibration in tests/calibration_paired.rs uses this schedule). A round's order depends only
//! on the seed and the round number, so it is the same whenever (and on whichever box) it is
//! planned: rounds added after the pilot of `--until` continue the same sequence. With `abba`
//! odd rounds run base first and even rounds patched first.

use super::spec::{Order, SIDES};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// One planned step: round (from 1), slot in the round (from 0), side, and the box that runs
/// it in a lab ("" on a single machine; `#1`, `#2`, ... until an agent's box takes the place,
/// see [`box_places`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedStep {
    pub round: u32,
    pub slot: u32,
    pub side: String,
    pub r#box: String,
}

/// The places of a lab campaign's boxes before any box took one: `#1` .. `#N`.
pub fn box_places(boxes: u32) -> Vec<String> {
    (1..=boxes).map(|b| format!("#{b}")).collect()
}

/// True for a box place no box has taken yet.
pub fn is_free_place(name: &str) -> bool {
    name.starts_with('#')
}

/// `steps` for each of `boxes` (each box runs every round, both sides: a box is a block).
pub fn for_boxes(steps: &[PlannedStep], boxes: &[String]) -> Vec<PlannedStep> {
    boxes
        .iter()
        .flat_map(|b| {
            steps.iter().map(move |s| PlannedStep {
                r#box: b.clone(),
                ..s.clone()
            })
        })
        .collect()
}

/// The order of the sides in `round`.
pub fn round_order(order: Order, seed: u64, round: u32) -> [&'static str; 2] {
    let mut sides = SIDES;
    match order {
        Order::Abba => {
            if round.is_multiple_of(2) {
                sides.reverse();
            }
        }
        Order::Random => {
            let pair = u64::from(round.saturating_sub(1) / 2);
            let mut rng =
                ChaCha8Rng::seed_from_u64(seed ^ (pair + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            sides.shuffle(&mut rng);
            if round.is_multiple_of(2) {
                sides.reverse();
            }
        }
    }
    sides
}

/// The steps of rounds `first..=last`.
pub fn steps(order: Order, seed: u64, first: u32, last: u32) -> Vec<PlannedStep> {
    (first..=last)
        .flat_map(|round| {
            round_order(order, seed, round)
                .into_iter()
                .enumerate()
                .map(move |(slot, side)| PlannedStep {
                    round,
                    slot: slot as u32,
                    side: side.to_string(),
                    r#box: String::new(),
                })
        })
        .collect()
}

/// A seed for a new campaign, from the OS's random source.
pub fn new_seed() -> u64 {
    rand::random()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abba_alternates_and_every_round_has_both_sides() {
        let s = steps(Order::Abba, 0, 1, 4);
        let sides: Vec<&str> = s.iter().map(|p| p.side.as_str()).collect();
        assert_eq!(
            sides,
            ["base", "patched", "patched", "base", "base", "patched", "patched", "base"]
        );
        assert!(s.iter().all(|p| p.slot < 2));
    }

    #[test]
    fn random_order_is_reproducible_balanced_and_independent_of_the_range() {
        let all = steps(Order::Random, 42, 1, 400);
        let later = steps(Order::Random, 42, 201, 400);
        assert_eq!(&all[400..], &later[..]);
        let base_first = all
            .iter()
            .filter(|p| p.slot == 0 && p.side == "base")
            .count();
        // 400 fair coin flips: within ±4 sd of 200.
        assert!((160..=240).contains(&base_first), "{base_first}");
        for r in all.chunks(2) {
            assert_ne!(r[0].side, r[1].side);
        }
        // Every pair of rounds is balanced: one of each order.
        for pair in all.chunks(4) {
            assert_ne!(pair[0].side, pair[2].side, "{pair:?}");
        }
        assert_ne!(
            steps(Order::Random, 43, 1, 40),
            steps(Order::Random, 42, 1, 40)
        );
    }
}
