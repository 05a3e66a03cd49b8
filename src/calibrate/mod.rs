//! Calibration on real A/A data: how often `compare` flags a row when both sides ran the same
//! kernel, how often it finds a change planted in the same data, and how small a change of
//! the headline score it can find, on the box the runs came from.
//!
//! From one [`Pool`] (the runs of one configuration) [`calibrate`] draws, for every
//! [`Design`] (unpaired k v k, paired n rounds; `draw`), `tables` seeded A/A tables, runs
//! `compare::compare` on each (without its details: sensitivity, plan, fingerprint, which
//! the counts do not need) and counts the tables that flag any row, per family and per kind
//! of row (`tally`).
//! In the same tables it plants known changes (`plant`) and counts the tables that find
//! them; it finds the smallest loss of the headline score found in at least [`POWER`] of the
//! tables (`reach`), and lists the monitor rows too sporadic to judge (`sporadic`).
//!
//! Tables are spread over threads; each has its own seed, so the result does not depend on
//! the number of threads.

pub mod draw;
pub mod plant;
pub mod pool;
pub mod reach;
pub mod sporadic;
pub mod tally;

use crate::compare::verdict::Settings;
use crate::compare::{self, Side};
pub use draw::Design;
use plant::Plant;
pub use pool::Pool;
use serde::Serialize;
use std::collections::BTreeSet;
use tally::{Flags, Rate, Rates};

/// The share of tables a change must be found in to count as detectable.
pub const POWER: f64 = 0.8;

/// The fewest runs `calibrate` works with (3 v 3).
pub const MIN_RUNS: usize = 6;

/// The designs of the tables: unpaired 3 v 3, 5 v 5, 10 v 10 and paired 3, 5, 10 rounds.
pub const DESIGNS: [Design; 6] = [
    Design::Unpaired(3),
    Design::Unpaired(5),
    Design::Unpaired(10),
    Design::Paired(3),
    Design::Paired(5),
    Design::Paired(10),
];

/// What to compute.
#[derive(Debug, Clone)]
pub struct Options {
    /// Tables per design.
    pub tables: usize,
    pub seed: u64,
    /// Threads (at least 1).
    pub threads: usize,
    pub designs: Vec<Design>,
    /// Plant the changes and count how often they are found.
    pub plants: bool,
    /// Losses (in %) of the headline score tried for the smallest detectable change (none:
    /// skip it).
    pub reach_pct: Vec<f64>,
    /// compare's settings (sensitivity is switched off).
    pub settings: Settings,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            tables: 500,
            seed: 0x00CA_11B8,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            designs: DESIGNS.to_vec(),
            plants: true,
            reach_pct: reach::GRID_PCT.to_vec(),
            settings: Settings::default(),
        }
    }
}

/// A plant's find rate in one design.
#[derive(Debug, Clone, Serialize)]
pub struct Found {
    #[serde(flatten)]
    pub plant: Plant,
    pub found: Rate,
}

/// The outcome of one design.
#[derive(Debug, Clone, Serialize)]
pub struct DesignResult {
    pub design: Design,
    pub label: String,
    /// The A/A rates; None when the pool is too small for the design.
    pub aa: Option<Rates>,
    pub planted: Vec<Found>,
    /// The smallest loss of the headline score found in ≥ POWER of the tables.
    pub reach: Option<reach::Reach>,
    /// Why the design was left out, when it was.
    pub skipped: Option<String>,
    /// Seconds the design's tables took.
    pub seconds: f64,
}

/// The whole calibration of one pool.
#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    pub name: String,
    pub runs: usize,
    pub rounds: usize,
    pub rounds_from: pool::RoundsFrom,
    /// Runs not used (another configuration, or interrupted).
    pub left_out: Vec<String>,
    pub tables: usize,
    pub seed: u64,
    /// The headline row's key.
    pub headline: Option<String>,
    pub designs: Vec<DesignResult>,
    pub sporadic: Vec<sporadic::Sporadic>,
}

/// What one table gives: its A/A flags and, per plant, whether it was found.
struct TableOutcome {
    flags: Flags,
    found: Vec<bool>,
}

/// Runs `job(i)` for `i` in `0..n` over `threads` threads; the results in order of `i`.
pub fn parallel<T: Send>(
    n: usize,
    threads: usize,
    job: &(dyn Fn(usize) -> anyhow::Result<T> + Sync),
) -> anyhow::Result<Vec<T>> {
    let threads = threads.clamp(1, n.max(1));
    let chunks: Vec<anyhow::Result<Vec<T>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| s.spawn(move || (t..n).step_by(threads).map(job).collect()))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a calibration thread panicked")))
            })
            .collect()
    });
    let mut per_thread: Vec<std::vec::IntoIter<T>> = Vec::with_capacity(threads);
    for c in chunks {
        per_thread.push(c?.into_iter());
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        if let Some(x) = per_thread[i % threads].next() {
            out.push(x);
        }
    }
    Ok(out)
}

/// compare with the calibration's settings.
fn judge(base: &Side, patched: &Side, s: &Settings) -> anyhow::Result<compare::Comparison> {
    compare::compare(base, patched, s)
}

/// The kinds of row the pool's runs have (scores and monitor kinds).
fn kinds_seen(pool: &Pool) -> BTreeSet<&'static str> {
    pool.runs
        .iter()
        .flat_map(|(_, r)| r.metrics.iter())
        .map(|m| {
            if crate::record::monitors::is_monitor(&m.name) {
                tally::kind_of(&m.name)
            } else {
                tally::SCORES
            }
        })
        .collect()
}

/// Calibrates `compare` on `pool`.
pub fn calibrate(pool: &Pool, o: &Options) -> anyhow::Result<Calibration> {
    let mut settings = o.settings.clone();
    settings.details = false;
    let plants = if o.plants {
        plant::choose(pool)
    } else {
        Vec::new()
    };
    let seen = kinds_seen(pool);
    let scores_only = reach::scores_only(pool);
    let mut designs = Vec::new();
    for &design in &o.designs {
        let started = std::time::Instant::now();
        if !design.fits(pool) {
            designs.push(DesignResult {
                design,
                label: design.label(),
                aa: None,
                planted: Vec::new(),
                reach: None,
                skipped: Some(match design {
                    Design::Unpaired(k) => {
                        format!("needs {} runs, the pool has {}", 2 * k, pool.runs.len())
                    }
                    Design::Paired(n) => {
                        format!("needs {n} rounds, the pool has {}", pool.rounds.len())
                    }
                }),
                seconds: 0.0,
            });
            continue;
        }
        let job = |i: usize| -> anyhow::Result<TableOutcome> {
            let seed = draw::table_seed(o.seed, design, i);
            let (Some((b, p)), Some((sb, sp))) = (
                draw::table(pool, design, seed),
                draw::table(&scores_only, design, seed),
            ) else {
                anyhow::bail!("the pool is too small for {}", design.label());
            };
            let flags = Flags::of(&judge(&b, &p, &settings)?);
            let mut found = vec![false; plants.len()];
            // The score plants one at a time, in the score rows alone; the counter plants
            // together, in the whole table (plant's module doc).
            for (j, pl) in plants.iter().enumerate().filter(|(_, pl)| pl.in_scores()) {
                let planted = plant::apply(&[pl], &sb, &sp);
                found[j] = plant::found(pl, &judge(&sb, &planted, &settings)?);
            }
            let counters: Vec<&Plant> = plants.iter().filter(|pl| !pl.in_scores()).collect();
            if !counters.is_empty() {
                let mut p = p;
                plant::apply_in(&counters, &b, &mut p);
                let c = judge(&b, &p, &settings)?;
                for (j, pl) in plants.iter().enumerate().filter(|(_, pl)| !pl.in_scores()) {
                    found[j] = plant::found(pl, &c);
                }
            }
            Ok(TableOutcome { flags, found })
        };
        let outcomes = parallel(o.tables, o.threads, &job)?;
        let flags: Vec<Flags> = outcomes.iter().map(|t| t.flags.clone()).collect();
        let planted = plants
            .iter()
            .enumerate()
            .map(|(j, pl)| Found {
                plant: pl.clone(),
                found: Rate::new(outcomes.iter().filter(|t| t.found[j]).count(), o.tables),
            })
            .collect();
        let reach = match (&plants.first(), o.reach_pct.is_empty()) {
            (Some(h), false) if h.what == "score" => Some(reach::smallest(
                &scores_only,
                design,
                h,
                &o.reach_pct,
                o,
                &settings,
            )?),
            _ => None,
        };
        designs.push(DesignResult {
            design,
            label: design.label(),
            aa: Some(Rates::of(&flags, &seen)),
            planted,
            reach,
            skipped: None,
            seconds: started.elapsed().as_secs_f64(),
        });
    }
    Ok(Calibration {
        name: pool.name.clone(),
        runs: pool.runs.len(),
        rounds: pool.rounds.len(),
        rounds_from: pool.rounds_from,
        left_out: pool.left_out.clone(),
        tables: o.tables,
        seed: o.seed,
        headline: plants
            .iter()
            .find(|p| p.what == "score")
            .map(|p| p.key.clone()),
        designs,
        sporadic: sporadic::rows(pool),
    })
}
