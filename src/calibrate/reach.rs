//! The smallest detectable change of the headline score, by planting: for a loss d of a
//! grid ([`GRID_PCT`]), the headline row of every table's patched side is multiplied by
//! 1 − d, and d is detectable when the row is labelled regressed (estimate below zero) in at
//! least [`super::POWER`] of the tables. The answer is the smallest such d of the grid (None:
//! not even the largest), found by bisection (the find rate grows with d), so about four
//! losses of the nine are tried.
//!
//! Only the score rows matter here: the monitor rows are a family of their own, corrected
//! on their own, so they change no score row's verdict. The tables are drawn from a copy of
//! the pool without them ([`scores_only`]), which makes each comparison cheap.

use super::draw::{self, Design};
use super::plant::{self, Change, Plant};
use super::pool::Pool;
use super::tally::Rate;
use super::{parallel, Options, POWER};
use crate::compare::verdict::Settings;
use crate::record::monitors::is_monitor;
use serde::Serialize;

/// The losses tried, in %.
pub const GRID_PCT: [f64; 9] = [0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0];

/// The smallest detectable loss of the headline score in one design.
#[derive(Debug, Clone, Serialize)]
pub struct Reach {
    /// The smallest loss (in %) found in ≥ POWER of the tables; None: none of the grid.
    pub pct: Option<f64>,
    /// Each loss tried, with its find rate, smallest first.
    pub tried: Vec<(f64, Rate)>,
}

/// The pool with its score rows only.
pub fn scores_only(pool: &Pool) -> Pool {
    let mut p = pool.clone();
    for (_, r) in p.runs.iter_mut() {
        r.metrics.retain(|m| !is_monitor(&m.name));
    }
    p
}

/// The smallest loss of the `headline` plant's row found in ≥ POWER of `o.tables` tables of `design`.
pub fn smallest(
    pool: &Pool,
    design: Design,
    headline: &Plant,
    grid: &[f64],
    o: &Options,
    settings: &Settings,
) -> anyhow::Result<Reach> {
    let mut grid = grid.to_vec();
    grid.sort_by(f64::total_cmp);
    let found_at = |d: f64| -> anyhow::Result<Rate> {
        let plant = Plant {
            change: Change::Scale(1.0 - d / 100.0),
            ..headline.clone()
        };
        let job = |i: usize| -> anyhow::Result<bool> {
            let seed = draw::table_seed(o.seed, design, i);
            let Some((b, p)) = draw::table(pool, design, seed) else {
                anyhow::bail!("the pool is too small for {}", design.label());
            };
            let planted = plant::apply(&[&plant], &b, &p);
            Ok(plant::found(
                &plant,
                &crate::compare::compare(&b, &planted, settings)?,
            ))
        };
        let found = parallel(o.tables, o.threads, &job)?;
        Ok(Rate::new(found.iter().filter(|f| **f).count(), o.tables))
    };
    // Bisection over the grid: the find rate grows with the loss.
    let mut tried = Vec::new();
    let (mut lo, mut hi) = (0, grid.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        let rate = found_at(grid[mid])?;
        tried.push((grid[mid], rate));
        if rate.rate >= POWER {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    tried.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(Reach {
        pct: grid.get(lo).copied(),
        tried,
    })
}
