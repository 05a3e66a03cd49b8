//! Calibration of the second table ("what changed with it") in seeded simulations: hundreds of
//! correlated monitor rows per table, as the monitors give (faults, context switches,
//! interrupts and CPU shares of one run move together), judged as `compare` judges them, with
//! the correction over the monitor rows alone.
//!
//! The bar (issue #24): with identical sides, at most 5 % of tables flag any monitor row,
//! over CV 0.5-5 % and 3 to 10 runs a side; a table whose scores changed by 5 % and whose
//! monitors did not flags the scores and no monitor row, through `compare::compare` itself
//! (the two families are corrected apart).
//!
//! Issue #32: the monitors' own kinds of noise — counts that are often zero, mostly zero with
//! rare huge bursts, heavy-tailed, quantized CPU shares (whole ticks), small counters below
//! their floor and rows missing from some runs — judged with the floors and resolutions of
//! `compare::floors`, stay at or below the bar at 3, 5 and 10 runs a side, unpaired and in
//! paired rounds (a drift both sides of a round share), while a planted steady counter ×2
//! and a planted score ×0.95 are still found.

use patchbench::compare::floors;
use patchbench::compare::verdict::{RowKind, Settings};
use patchbench::compare::{compare, Side};
use patchbench::record::{Direction, Kind, Metric, RunRecord};

#[path = "common/synthetic.rs"]
mod synthetic;
use synthetic::Rng;

/// Monitor rows per table.
const ROWS: usize = 300;
/// Share of a row's variance that comes from the run (a slow run is slow in every counter).
const SHARED: f64 = 0.6;

/// One side: per row its run values. Each run has one common factor; row r's CV is spread
/// over 0.5-5 % by row, its mean over four decades; `shift` multiplies every row.
fn side(rng: &mut Rng, n: usize, cv_scale: f64, shift: f64) -> Vec<Vec<f64>> {
    let mut rows = vec![Vec::new(); ROWS];
    for _ in 0..n {
        let common = rng.normal();
        for (r, row) in rows.iter_mut().enumerate() {
            let cv = cv_scale * (0.005 + 0.045 * (r % 10) as f64 / 9.0);
            let mean = 10f64.powf((r % 40) as f64 / 10.0) * (1.0 + shift);
            let z = SHARED.sqrt() * common + (1.0 - SHARED).sqrt() * rng.normal();
            row.push(mean * (cv * z).exp());
        }
    }
    rows
}

fn flags(base: &[Vec<f64>], new: &[Vec<f64>]) -> usize {
    let s = Settings {
        details: false,
        ..Settings::default()
    };
    // Continuous monitor rows (rates, times): no resolution.
    let kinds = vec![RowKind::Monitor { resolution: 0.0 }; base.len()];
    synthetic::judge_kinds(base, new, &kinds, Direction::LowerIsBetter, &s)
        .iter()
        .filter(|j| j.verdict.is_flag())
        .count()
}

#[test]
fn a_a_tables_of_hundreds_of_correlated_monitor_rows_flag_at_most_5_percent() {
    const TABLES: usize = 120;
    for (i, &n) in [3usize, 5, 10].iter().enumerate() {
        // CV scale 1: rows from 0.5 to 5 %; 0.2: rows from 0.1 to 1 % (a quiet counter).
        for (j, &scale) in [1.0, 0.2].iter().enumerate() {
            let mut rng = Rng::new(0x5eed + (i * 10 + j) as u64);
            let flagged = (0..TABLES)
                .filter(|_| {
                    let (b, p) = (side(&mut rng, n, scale, 0.0), side(&mut rng, n, scale, 0.0));
                    flags(&b, &p) > 0
                })
                .count();
            let share = flagged as f64 / TABLES as f64;
            eprintln!("n={n} cv scale {scale}: {flagged} of {TABLES} A/A tables flag a row");
            // 5 % plus two binomial standard errors of 120 tables (2 %).
            assert!(share <= 0.09, "n={n} scale {scale}: {share}");
        }
    }
}

#[test]
fn a_real_shift_is_found_in_most_rows() {
    let mut rng = Rng::new(7);
    let (b, p) = (side(&mut rng, 5, 1.0, 0.0), side(&mut rng, 5, 1.0, 0.3));
    let found = flags(&b, &p);
    assert!(found > ROWS / 2, "{found} of {ROWS}");
}

/// A record with a score row and the monitor rows given.
fn record(score: f64, monitors: &[(&str, f64)]) -> RunRecord {
    let mut r = RunRecord::new(
        Kind::WillItScale,
        patchbench::sysinfo::SystemInfo::collect(),
        &(),
    );
    let m = |name: &str, v: f64, d| Metric::new(name, &[], name, "count", d, v, Vec::new());
    r.metrics.push(m(
        "will-it-scale.per_process_ops",
        score,
        Direction::HigherIsBetter,
    ));
    for (name, v) in monitors {
        r.metrics.push(m(name, *v, Direction::LowerIsBetter));
    }
    r
}

#[test]
fn scores_and_monitors_are_corrected_apart() {
    let mut rng = Rng::new(11);
    let mut sides = Vec::new();
    for shift in [0.0, 0.05] {
        let runs: Vec<(String, RunRecord)> = (0..5)
            .map(|i| {
                let score = 1e6 * (1.0 + shift) * (1.0 + 0.005 * rng.normal());
                let names: Vec<String> = (0..200).map(|k| format!("proc-vmstat.c{k}")).collect();
                let vals: Vec<(&str, f64)> = names
                    .iter()
                    .map(|n| (n.as_str(), 1000.0 * (1.0 + 0.02 * rng.normal())))
                    .collect();
                (format!("r{shift}-{i}"), record(score, &vals))
            })
            .collect();
        sides.push(Side::new(format!("s{shift}"), runs));
    }
    let c = compare(&sides[0], &sides[1], &Settings::default()).unwrap();
    assert_eq!(c.rows.len(), 1, "only the score is in the first table");
    assert!(
        c.rows[0].judgement.verdict.is_flag(),
        "{:?}",
        c.rows[0].judgement
    );
    assert_eq!(c.why.len(), 200);
    assert_eq!(c.why_family.rows, 200);
    assert_eq!(c.why_family.flagged, 0, "{:?}", c.why_family);
}

/// A Poisson count with mean `lambda` (Knuth's product below 30, normal above).
fn poisson(rng: &mut Rng, lambda: f64) -> f64 {
    if lambda > 30.0 {
        return (lambda + lambda.sqrt() * rng.normal()).round().max(0.0);
    }
    let (limit, mut k, mut prod) = ((-lambda).exp(), 0.0, rng.uniform());
    while prod > limit {
        k += 1.0;
        prod *= rng.uniform();
    }
    k
}

/// The families of monitor noise, 40 rows each.
const FAMILIES: usize = 6;
const PER_FAMILY: usize = 40;
/// CPU ticks of a 10 s window on 2 CPUs, and one tick in %.
const TICKS: f64 = 2000.0;

/// One run's value of row `r` (family r / PER_FAMILY), with the run's drift `drift` (a
/// factor near 1) and the row's planted factor `scale`; None when the row is missing from
/// the run.
fn monitor_value(rng: &mut Rng, r: usize, drift: f64, scale: f64) -> Option<f64> {
    let k = r % PER_FAMILY;
    let v = match r / PER_FAMILY {
        // Steady counts, 100 to 100 000, CV 1-5 %, whole numbers.
        0 => {
            let mean = 10f64.powf(2.0 + (k % 4) as f64) * scale * drift;
            (mean * (1.0 + (0.01 + 0.01 * (k % 5) as f64) * rng.normal())).round()
        }
        // Mostly zero with rare huge bursts (20 % of runs, heavy-tailed sizes).
        1 => {
            if rng.uniform() < 0.2 {
                (1e4 * (1.5 * rng.normal()).exp()).round()
            } else {
                0.0
            }
        }
        // Heavy-tailed counts (lognormal, sigma 1).
        2 => (1000.0 * drift * rng.normal().exp()).round(),
        // Quantized CPU shares: whole ticks of a 2000-tick window, 0.5 % to 30 %.
        3 => {
            let share = [0.005, 0.02, 0.1, 0.3][k % 4];
            100.0 * poisson(rng, TICKS * share * drift) / TICKS
        }
        // Small sporadic counters (mean 0.5 to 60): mostly below their floor.
        4 => poisson(rng, [0.5, 3.0, 20.0, 60.0][k % 4]),
        // Steady counts missing from 30 % of runs.
        _ => {
            if rng.uniform() < 0.3 {
                return None;
            }
            (5000.0 * drift * (1.0 + 0.03 * rng.normal())).round()
        }
    };
    Some(v)
}

/// The name, unit and resolution of row r's family.
fn monitor_row(r: usize) -> (&'static str, &'static str, f64) {
    match r / PER_FAMILY {
        3 => ("vmstat.cpu.us", "%", 100.0 / TICKS),
        4 => ("interrupts.RES", "count", 1.0),
        _ => ("proc-vmstat.pgfault", "count", 1.0),
    }
}

/// One side of a monitor table: per row its run values; `drifts` per run (shared with the
/// other side's run of the same round in a paired design); `planted` rows scaled by ×2.
fn monitor_side(rng: &mut Rng, drifts: &[f64], planted: Option<usize>) -> Vec<Vec<f64>> {
    (0..FAMILIES * PER_FAMILY)
        .map(|r| {
            let scale = if planted == Some(r) { 2.0 } else { 1.0 };
            drifts
                .iter()
                .filter_map(|d| monitor_value(rng, r, *d, scale))
                .collect()
        })
        .collect()
}

/// The rows' kinds as `compare` makes them: too few events below the floor, else a monitor
/// row with its family's resolution.
fn kinds(base: &[Vec<f64>], new: &[Vec<f64>]) -> Vec<RowKind> {
    (0..base.len())
        .map(|r| {
            let (name, unit, resolution) = monitor_row(r);
            let largest = base[r].iter().chain(&new[r]).fold(0.0f64, |m, v| m.max(*v));
            match floors::too_few(name, unit, largest) {
                Some(reason) => RowKind::TooFew { reason },
                None => RowKind::Monitor { resolution },
            }
        })
        .collect()
}

/// The flagged rows of one monitor table with n runs a side (paired: each round's drift
/// shared by both sides); `planted`: a steady counter ×2 on the new side.
fn monitor_table(rng: &mut Rng, n: usize, paired: bool, planted: Option<usize>) -> Vec<usize> {
    let drifts =
        |rng: &mut Rng| -> Vec<f64> { (0..n).map(|_| (0.02 * rng.normal()).exp()).collect() };
    let db = drifts(rng);
    let dn = if paired { db.clone() } else { drifts(rng) };
    let (b, p) = (
        monitor_side(rng, &db, None),
        monitor_side(rng, &dn, planted),
    );
    let k = kinds(&b, &p);
    let s = Settings {
        details: false,
        ..Settings::default()
    };
    synthetic::judge_kinds(&b, &p, &k, Direction::LowerIsBetter, &s)
        .iter()
        .enumerate()
        .filter(|(_, j)| j.verdict.is_flag())
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn a_a_tables_of_zeros_bursts_quantized_and_missing_rows_flag_at_most_5_percent() {
    const TABLES: usize = 100;
    for paired in [false, true] {
        for (i, &n) in [3usize, 5, 10].iter().enumerate() {
            let mut rng = Rng::new(0x32 + i as u64 + if paired { 100 } else { 0 });
            let mut by_family = [0usize; FAMILIES];
            let flagged = (0..TABLES)
                .filter(|_| {
                    let rows = monitor_table(&mut rng, n, paired, None);
                    for r in &rows {
                        by_family[r / PER_FAMILY] += 1;
                    }
                    !rows.is_empty()
                })
                .count();
            let design = if paired {
                "paired rounds"
            } else {
                "runs a side"
            };
            eprintln!(
                "monitor noise, {n} {design}: {flagged} of {TABLES} A/A tables flag a row \
                 (flags by family: steady {}, bursts {}, heavy {}, ticks {}, small {}, \
                 missing {})",
                by_family[0], by_family[1], by_family[2], by_family[3], by_family[4], by_family[5]
            );
            // 5 % plus two binomial standard errors of 100 tables.
            assert!(
                flagged as f64 / TABLES as f64 <= 0.09,
                "n={n} {design}: {flagged}"
            );
        }
    }
}

#[test]
fn a_steady_counter_doubling_is_found_among_the_noise() {
    for (i, &n) in [3usize, 5, 10].iter().enumerate() {
        let mut rng = Rng::new(0x2 + i as u64);
        const TABLES: usize = 20;
        // Row 1: a steady count of 1000 at CV 2 %.
        let found = (0..TABLES)
            .filter(|_| monitor_table(&mut rng, n, false, Some(1)).contains(&1))
            .count();
        eprintln!("steady counter ×2, {n} runs a side: found in {found} of {TABLES} tables");
        // At 3 runs a side Welch has about 2 df and the correction runs over ~160 judged
        // rows: a doubling at 3 % noise is found in most tables, not all; from 5 runs, in all.
        let want = if n == 3 { TABLES / 2 } else { TABLES * 9 / 10 };
        assert!(found >= want, "n={n}: {found}");
    }
}

#[test]
fn a_score_down_5_percent_is_found_beside_failed_runs() {
    // 3 v 3 at CV 0.5 %, nine quiet scores beside it, one of which failed in one run.
    let mut rng = Rng::new(95);
    let mut sides = [Vec::new(), Vec::new()];
    for (k, side) in sides.iter_mut().enumerate() {
        for r in 0..10 {
            let shift = if k == 1 && r == 0 { 0.95 } else { 1.0 };
            side.push(
                (0..3)
                    .map(|_| 1e4 * shift * (1.0 + 0.005 * rng.normal()))
                    .collect::<Vec<f64>>(),
            );
        }
    }
    sides[1][5][1] = 0.0;
    let s = Settings::default();
    let j = synthetic::judge(&sides[0], &sides[1], Direction::HigherIsBetter, &s);
    assert!(j[0].verdict.is_flag(), "{:?}", j[0]);
    assert!(!j[5].verdict.is_flag(), "{:?}", j[5]);
    assert!(j[5]
        .reason
        .as_deref()
        .unwrap_or("")
        .contains("failed in 1 of 3 runs"));
    assert_eq!(j.iter().filter(|j| j.verdict.is_flag()).count(), 1);
}
