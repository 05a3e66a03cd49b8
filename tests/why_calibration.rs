//! Calibration of the second table ("what changed with it") in seeded simulations: hundreds of
//! correlated monitor rows per table, as the monitors give (faults, context switches,
//! interrupts and CPU shares of one run move together), judged as `compare` judges them, with
//! the correction over the monitor rows alone.
//!
//! The bar (issue #24): with identical sides, at most 5 % of tables flag any monitor row,
//! over CV 0.5-5 % and 3 to 10 runs a side; a table whose scores changed by 5 % and whose
//! monitors did not flags the scores and no monitor row, through `compare::compare` itself
//! (the two families are corrected apart).

use patchbench::compare::verdict::Settings;
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
        sensitivity: false,
        ..Settings::default()
    };
    synthetic::judge(base, new, Direction::LowerIsBetter, &s)
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
