//! `compare` calibrated on real A/A data (issue 32): every file of the corpus
//! (tests/fixtures/corpus, scripts/record-corpus.sh; one kernel on both sides) is resampled
//! into 500 A/A tables per design — unpaired 3 v 3, 5 v 5, 10 v 10 and paired 3, 5, 10 rounds
//! (`patchbench::calibrate`) — and `compare` is run on each.
//!
//! The bars:
//! - false alarms: at most 5 % of tables flagging any row, in each family (scores, monitors),
//!   in every design the file's runs allow. 500 tables measure a rate to about ±2 points, so a
//!   family above 5 % is drawn again with [`RECHECK_TABLES`] tables (the same seed: the first
//!   500 are the same tables), about ±0.6 points, and fails the test if still above 5 %.
//!   The draws are seeded, so the test gives the same answer every time on the same corpus;
//! - planted changes, in the 10 v 10 tables (files with 20 runs or more): the headline score
//!   × 0.95 is found in at least 80 % of tables where the score's CV over the runs is at most
//!   2 % (a 5 % loss is then 2.5 sd or more: 10 v 10 finds it), and a steady counter × 2 (CV
//!   at most 10 %) in at least 80 %. A sporadic counter made steady is reported only: how
//!   often it is found is what the report is about, not a promise.
//!
//! `scripts/test.sh --calib` builds it optimised and prints every rate. It runs in an optimised
//! build only (ignored in a debug one): `compare` on 500 tables of 20 runs of 400 rows, six
//! designs, nine files, takes minutes unoptimised.

#[path = "common/corpus.rs"]
mod corpus;

use patchbench::calibrate::tally::Rate;
use patchbench::calibrate::{self, Design, Options, Pool};
use patchbench::report::calibrate::rate;

/// The false-alarm target per family (issue 32): every miss is printed, and listed in
/// docs/compare.md.
const AA_BAR: f64 = 0.05;
/// Tables of a design drawn again when a family's rate over 500 is above [`AA_BAR`]. On the
/// corpus recorded on 2026-12-07: fsbuffer 3 v 3 read 5.4 % [3.7, 7.7] of 500 and 4.5 %
/// [4.1, 4.9] of 10,000 (`calibrate --tables 10000`).
const RECHECK_TABLES: usize = 5000;
/// The planted changes' bar in 10 v 10 tables.
const FOUND_BAR: f64 = 0.80;
/// The headline score's CV (%) up to which its ×0.95 must be found.
const SCORE_CV_PCT: f64 = 2.0;

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "minutes unoptimised: scripts/test.sh --calib builds and runs it optimised"
)]
fn aa_tables_of_real_runs_rarely_flag_and_planted_changes_are_found() {
    let started = std::time::Instant::now();
    let options = Options {
        tables: 500,
        ..Options::default()
    };
    let mut problems = Vec::new();
    let mut misses = Vec::new();
    let mut notes = Vec::new();
    println!(
        "{:<22} {:<9} {:>6} {:>24} {:>24}  planted (score, steady, sporadic)  reach  seconds",
        "file", "design", "tables", "scores", "monitors"
    );
    for (name, path) in corpus::files() {
        let runs: Vec<_> = corpus::read(&path)
            .into_iter()
            .enumerate()
            .map(|(i, (_, r))| (format!("{name}#{}", i + 1), r))
            .collect();
        let pool = Pool::new(name.clone(), runs);
        let c = calibrate::calibrate(&pool, &options)
            .unwrap_or_else(|e| panic!("{name}: calibrate failed: {e:#}"));
        for d in &c.designs {
            let Some(aa) = &d.aa else {
                notes.push(format!(
                    "{name} {}: not drawn ({})",
                    d.label,
                    d.skipped.as_deref().unwrap_or("")
                ));
                continue;
            };
            let found: Vec<String> = d
                .planted
                .iter()
                .map(|f| format!("{:.0} %", 100.0 * f.found.rate))
                .collect();
            let reach = d.reach.as_ref().map_or("-".to_string(), |r| {
                r.pct.map_or(">grid".to_string(), |p| format!("{p} %"))
            });
            println!(
                "{name:<22} {:<9} {:>6} {:>24} {:>24}  {:<33}  {reach:>5}  {:.1}",
                d.label,
                aa.any.tables,
                rate(&aa.scores),
                rate(&aa.monitors),
                found.join(", "),
                d.seconds
            );
            let over = |r: &Rate| r.rate > AA_BAR;
            // A family above the bar in 500 tables: the same design again, with more.
            let again = (over(&aa.scores) || over(&aa.monitors)).then(|| {
                let more = Options {
                    tables: RECHECK_TABLES,
                    designs: vec![d.design],
                    plants: false,
                    reach_pct: Vec::new(),
                    ..options.clone()
                };
                calibrate::calibrate(&pool, &more)
                    .unwrap_or_else(|e| panic!("{name}: calibrate failed: {e:#}"))
                    .designs
                    .remove(0)
                    .aa
                    .unwrap_or_else(|| panic!("{name} {}: not drawn again", d.label))
            });
            for (family, first) in [("scores", &aa.scores), ("monitors", &aa.monitors)] {
                if !over(first) {
                    continue;
                }
                let Some(more) = &again else { continue };
                let r = if family == "scores" {
                    &more.scores
                } else {
                    &more.monitors
                };
                let top = &more.top_rows;
                let line = format!(
                    "{name} {}: {family} flag in {} of 500 A/A tables, {} of {RECHECK_TABLES} \
                     (bar {:.0} %; kinds: {}; most often: {})",
                    d.label,
                    rate(first),
                    rate(r),
                    100.0 * AA_BAR,
                    kinds(&more.kinds),
                    top.iter()
                        .map(|(k, n)| format!("{k} ({n})"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                if over(r) {
                    problems.push(line);
                } else {
                    misses.push(line);
                }
            }
            if d.design != Design::Unpaired(10) {
                continue;
            }
            for f in &d.planted {
                let bar = match f.plant.what {
                    "score" if f.plant.cv_pct.is_some_and(|cv| cv <= SCORE_CV_PCT) => FOUND_BAR,
                    "steady counter" => FOUND_BAR,
                    _ => continue,
                };
                if f.found.rate < bar {
                    problems.push(format!(
                        "{name} 10 v 10: planted {} ({}, CV {:.1} %) found in {} of tables \
                         (bar {:.0} %)",
                        f.plant.what,
                        f.plant.key,
                        f.plant.cv_pct.unwrap_or(f64::NAN),
                        rate(&f.found),
                        100.0 * bar
                    ));
                }
            }
        }
        if let Some(d) = c.designs.iter().find(|d| !d.planted.is_empty()) {
            for f in &d.planted {
                println!(
                    "{:<22}   planted {}: {} (CV {})",
                    "",
                    f.plant.what,
                    f.plant.key,
                    f.plant
                        .cv_pct
                        .map_or("-".to_string(), |c| format!("{c:.1} %"))
                );
            }
        }
        println!(
            "{:<22}   {} monitor rows too sporadic to judge",
            "",
            c.sporadic.len()
        );
    }
    for n in &notes {
        println!("note: {n}");
    }
    for m in &misses {
        println!("above 5 % in 500 tables, within it in {RECHECK_TABLES}: {m}");
    }
    println!("took {:.1} s", started.elapsed().as_secs_f64());
    assert!(
        problems.is_empty(),
        "{} bars missed:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The kinds that flagged, with their rates.
fn kinds(k: &[(String, Rate)]) -> String {
    k.iter()
        .filter(|(_, r)| r.hits > 0)
        .map(|(k, r)| format!("{k} {:.1} %", 100.0 * r.rate))
        .collect::<Vec<_>>()
        .join(", ")
}
