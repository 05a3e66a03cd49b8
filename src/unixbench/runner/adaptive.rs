//! `run --precision`: how many passes one test gets, decided by Stein's two-stage rule
//! (`crate::stats::precision`) on the statistic the report shows (the pass rates' geometric
//! mean), never by looking after every pass.
//!
//! A test first makes a pilot of [`PILOT_PASSES`] passes. Their spread fixes, once, the number
//! of passes in all; the test then makes exactly that many (or fewer where the time cap binds)
//! and reports the two-stage interval's half-width. The cap is wall time: the passes already
//! made, settle pauses and worker start-up included, tell what one more pass costs.
//!
//! What it narrows is within-run spread (one run's passes); a comparison's verdict depends on
//! the spread between runs, which more passes do not reduce. The report says so.

use crate::stats::precision::{stein_interval, stein_plan};

/// Passes in the pilot, before the number of passes is decided.
pub const PILOT_PASSES: usize = 3;

/// The confidence of the interval the precision is asked for.
pub const CONFIDENCE: f64 = 0.95;

/// The most passes one test may get, whatever the time cap allows.
pub const MAX_PASSES: usize = 50;

/// The pass-count decision for one test of an adaptive run.
#[derive(Debug, Clone)]
pub struct Adaptive {
    target_pct: f64,
    time_cap_s: f64,
    /// Passes in all, once the pilot has decided.
    decided: Option<usize>,
    /// Passes the target needs, before the cap.
    needed: Option<usize>,
}

/// What an adaptive test reached, for the record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reached {
    /// The two-stage half-width of the geometric mean, in %.
    pub half_width_pct: f64,
    /// True when the cap stopped the test before the passes the target needs.
    pub capped: bool,
}

impl Adaptive {
    /// A test aiming at ±`target_pct` % within `time_cap_s` seconds of passes.
    pub fn new(target_pct: f64, time_cap_s: f64) -> Adaptive {
        Adaptive {
            target_pct,
            time_cap_s,
            decided: None,
            needed: None,
        }
    }

    /// The passes to show in progress: the decided count, or the most there may be.
    pub fn planned(&self) -> usize {
        self.decided.unwrap_or(MAX_PASSES)
    }

    /// After a pass: true when the test has its passes. `rates` are the pass rates so far and
    /// `elapsed_s` the wall time the test has used (settling included).
    pub fn done(&mut self, rates: &[f64], elapsed_s: f64) -> bool {
        let n = rates.len();
        if n < PILOT_PASSES {
            return false;
        }
        if self.decided.is_none() {
            let per_pass = elapsed_s / n as f64;
            let cap = if self.time_cap_s.is_nan() {
                n
            } else if per_pass > 0.0 {
                // Saturating: an infinite cap is MAX_PASSES.
                ((self.time_cap_s / per_pass).floor() as usize).clamp(n, MAX_PASSES)
            } else {
                MAX_PASSES
            };
            match stein_plan(rates, self.target_pct, CONFIDENCE, cap) {
                Some(plan) => {
                    self.decided = Some(plan.passes);
                    self.needed = Some(plan.needed);
                }
                // A pass that measured nothing: no spread to plan from; stop at the pilot.
                None => self.decided = Some(n),
            }
        }
        n >= self.decided.unwrap_or(n)
    }

    /// The half-width reached with these pass rates (None before the pilot is complete or
    /// when a rate is not positive).
    pub fn reached(&self, rates: &[f64]) -> Option<Reached> {
        let (lo, hi) = stein_interval(rates, PILOT_PASSES, CONFIDENCE)?;
        Some(Reached {
            half_width_pct: 100.0 * ((hi - lo) / 2.0).exp_m1(),
            capped: self.needed.is_some_and(|need| rates.len() < need),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pilot_decides_once_and_the_test_makes_exactly_that_many() {
        // Pilot ln-rates 0, ±0.02 (s₀ = 0.02): ±1 % at 95 % needs 75 passes, capped at 50.
        let pilot = [1.0, 0.02f64.exp(), (-0.02f64).exp()];
        let mut a = Adaptive::new(1.0, f64::INFINITY);
        assert!(!a.done(&pilot[..2], 2.0));
        let mut rates = pilot.to_vec();
        assert!(!a.done(&rates, 3.0));
        assert_eq!(a.planned(), MAX_PASSES);
        // Later passes, however quiet, do not end the test early.
        while rates.len() < MAX_PASSES - 1 {
            rates.push(1.0);
            assert!(!a.done(&rates, rates.len() as f64));
        }
        rates.push(1.0);
        assert!(a.done(&rates, 50.0));
        let r = a.reached(&rates).unwrap();
        // t(0.975, 2) · 0.02 / √50 = 0.01217 → ±1.22 %, wider than asked: capped.
        assert!((r.half_width_pct - 1.225).abs() < 0.01, "{r:?}");
        assert!(r.capped);
    }

    #[test]
    fn the_time_cap_counts_what_passes_really_took() {
        // 3 pilot passes took 30 s (10 s each, settling included); a 60 s cap allows 6.
        let pilot = [1.0, 0.05f64.exp(), (-0.05f64).exp()];
        let mut a = Adaptive::new(0.5, 60.0);
        assert!(!a.done(&pilot, 30.0));
        assert_eq!(a.planned(), 6);
        // A cap already spent by the pilot: the pilot is all.
        let mut b = Adaptive::new(0.5, 10.0);
        assert!(b.done(&pilot, 30.0));
        assert!(b.reached(&pilot).unwrap().capped);
    }

    #[test]
    fn a_quiet_pilot_is_enough() {
        let pilot = [100.0, 100.1, 99.9];
        let mut a = Adaptive::new(1.0, 1000.0);
        assert!(a.done(&pilot, 3.0));
        let r = a.reached(&pilot).unwrap();
        assert!(r.half_width_pct < 1.0 && !r.capped, "{r:?}");
    }
}
