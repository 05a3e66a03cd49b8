//! The synthetic noise of the calibrations (tests/calibration.rs, tests/calibration_paired.rs,
//! tests/why_calibration.rs) and the bisect simulation (tests/bisect_simulation.rs): a seeded
//! SplitMix64 generator with Box–Muller normals (fast in debug builds, where ChaCha took a
//! quarter of a calibration's time), the slow drift every run at a moment shares (a straight
//! trend of 2-6 CV over the span, either way, with a random walk of CV/3 a moment on top), and
//! one table judged as `compare` judges it. Included with `#[path]` by the tests that use it.
#![allow(dead_code)]

use patchbench::compare::model::{from_values, RunValue};
use patchbench::compare::verdict::{judge_table, Judgement, RowInput, RowKind, Settings};
use patchbench::record::Direction;

/// SplitMix64 with Box–Muller normals.
pub struct Rng {
    state: u64,
    spare: Option<f64>,
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng {
            state: seed,
            spare: None,
        }
    }

    /// Uniform in (0, 1].
    pub fn uniform(&mut self) -> f64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        ((z >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }

    pub fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        let (u1, u2) = (self.uniform(), self.uniform());
        let r = (-2.0 * u1.ln()).sqrt();
        let a = 2.0 * std::f64::consts::PI * u2;
        self.spare = Some(r * a.sin());
        r * a.cos()
    }

    /// Uniform in 0..n.
    pub fn below(&mut self, n: usize) -> usize {
        ((self.uniform() * n as f64) as usize).min(n.saturating_sub(1))
    }
}

/// The shared slow drift at each of a span's `moments`: a trend of 2-6 CV in all, either way,
/// and a random walk of CV/3 a step.
pub fn drift(rng: &mut Rng, moments: usize, cv: f64) -> Vec<f64> {
    let total = cv * (2.0 + 4.0 * rng.uniform()) * if rng.uniform() < 0.5 { -1.0 } else { 1.0 };
    let mut walk = 0.0;
    (0..moments)
        .map(|t| {
            walk += cv / 3.0 * rng.normal();
            total * t as f64 / (moments - 1).max(1) as f64 + walk
        })
        .collect()
}

/// One table judged as `compare` judges an unpaired table (`verdict::judge_table`, the
/// correction across its rows): per row the base and the new side's run values.
pub fn judge(
    base: &[Vec<f64>],
    new: &[Vec<f64>],
    direction: Direction,
    s: &Settings,
) -> Vec<Judgement> {
    let kinds = vec![RowKind::Score; base.len()];
    judge_kinds(base, new, &kinds, direction, s)
}

/// The same with each row's kind (score, monitor with its resolution, too few events); a
/// row's sides may have different numbers of runs (a row missing from some runs).
pub fn judge_kinds(
    base: &[Vec<f64>],
    new: &[Vec<f64>],
    kinds: &[RowKind],
    direction: Direction,
    s: &Settings,
) -> Vec<Judgement> {
    let values: Vec<(Vec<RunValue>, Vec<RunValue>)> = base
        .iter()
        .zip(new)
        .map(|(b, p)| (from_values(b, 0), from_values(p, b.len())))
        .collect();
    let rows: Vec<RowInput> = values
        .iter()
        .zip(kinds)
        .map(|((b, p), kind)| RowInput {
            base: b,
            new: p,
            direction,
            base_profile: None,
            new_profile: None,
            names: ("base", "patched"),
            cause: None,
            pairs: None,
            kind: kind.clone(),
        })
        .collect();
    judge_table(&rows, s)
}
