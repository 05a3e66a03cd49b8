//! Counting what A/A tables flag: per table, whether any row of the scores family
//! (`Comparison::rows`), of the monitor family (`Comparison::why`), and of each kind of row
//! was labelled improved or regressed; and the rates over many tables with a Wilson interval.
//!
//! The kinds of row are the scores and the monitor rows grouped by their name's prefix
//! ([`KINDS`]: `proc-vmstat`, `interrupts`, …).

use crate::compare::{Comparison, Row};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The kind of every score row.
pub const SCORES: &str = "scores";

/// Monitor kinds by name prefix, the longer prefix first where two share a start.
pub const KINDS: &[&str] = &[
    "proc-vmstat",
    "interrupts",
    "softirqs",
    "vmstat.cpu",
    "vmstat.system",
    "schedstat",
    "time",
    "perf-stat",
    "perf-profile",
    "cgroup",
    "meminfo",
];

/// The kind of a monitor row called `name` (`other` for a prefix not in [`KINDS`]).
pub fn kind_of(name: &str) -> &'static str {
    KINDS
        .iter()
        .find(|k| {
            name.strip_prefix(**k)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
        })
        .copied()
        .unwrap_or("other")
}

/// What one table flagged.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    pub scores: bool,
    pub monitors: bool,
    /// The kinds with a flagged row.
    pub kinds: BTreeSet<&'static str>,
    /// The keys of the flagged rows (for the rows that flag most often).
    pub rows: Vec<String>,
}

impl Flags {
    /// What `c` flagged.
    pub fn of(c: &Comparison) -> Flags {
        let mut f = Flags::default();
        let flagged = |r: &&Row| r.judgement.verdict.is_flag();
        for r in c.rows.iter().filter(flagged) {
            f.scores = true;
            f.kinds.insert(SCORES);
            f.rows.push(r.key.clone());
        }
        for r in c.why.iter().filter(flagged) {
            f.monitors = true;
            f.kinds.insert(kind_of(&r.name));
            f.rows.push(r.key.clone());
        }
        f
    }
}

/// A share of tables, with its 95 % Wilson interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rate {
    pub hits: usize,
    pub tables: usize,
    pub rate: f64,
    pub low: f64,
    pub high: f64,
}

impl Rate {
    /// `hits` of `tables` (a rate of 0 with the interval [0, 1] for no tables).
    pub fn new(hits: usize, tables: usize) -> Rate {
        let (low, high) = wilson(hits, tables);
        Rate {
            hits,
            tables,
            rate: if tables == 0 {
                0.0
            } else {
                hits as f64 / tables as f64
            },
            low,
            high,
        }
    }
}

/// The 95 % Wilson score interval of `hits` successes in `n` trials.
pub fn wilson(hits: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    const Z: f64 = 1.959_963_984_540_054;
    let (n, p) = (n as f64, hits as f64 / n as f64);
    let d = 1.0 + Z * Z / n;
    let centre = (p + Z * Z / (2.0 * n)) / d;
    let half = Z * (p * (1.0 - p) / n + Z * Z / (4.0 * n * n)).sqrt() / d;
    // At 0 or n hits the bound on that side is the rate itself (rounding must not move it).
    let low = if hits == 0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let high = if hits as f64 == n {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    (low, high)
}

/// The rates of a set of tables.
#[derive(Debug, Clone, Serialize)]
pub struct Rates {
    /// Tables with a flag in either family.
    pub any: Rate,
    pub scores: Rate,
    pub monitors: Rate,
    /// Per kind of row that flagged at least once, or that the tables had (in [`KINDS`]
    /// order, scores first).
    pub kinds: Vec<(String, Rate)>,
    /// The rows flagged most often: (key, tables).
    pub top_rows: Vec<(String, usize)>,
}

impl Rates {
    /// The rates of `flags`; `kinds_seen` are the kinds the tables had rows of.
    pub fn of(flags: &[Flags], kinds_seen: &BTreeSet<&'static str>) -> Rates {
        let n = flags.len();
        let count =
            |f: &dyn Fn(&Flags) -> bool| Rate::new(flags.iter().filter(|x| f(x)).count(), n);
        let mut kinds = Vec::new();
        for k in std::iter::once(SCORES)
            .chain(KINDS.iter().copied())
            .chain(["other"])
        {
            let hits = flags.iter().filter(|f| f.kinds.contains(k)).count();
            if hits > 0 || kinds_seen.contains(k) {
                kinds.push((k.to_string(), Rate::new(hits, n)));
            }
        }
        let mut by_row: BTreeMap<&str, usize> = BTreeMap::new();
        for f in flags {
            for r in &f.rows {
                *by_row.entry(r).or_default() += 1;
            }
        }
        let mut top: Vec<(String, usize)> = by_row
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        top.truncate(5);
        Rates {
            any: count(&|f| f.scores || f.monitors),
            scores: count(&|f| f.scores),
            monitors: count(&|f| f.monitors),
            kinds,
            top_rows: top,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_prefix() {
        assert_eq!(kind_of("proc-vmstat.pgfault"), "proc-vmstat");
        assert_eq!(kind_of("vmstat.cpu.us"), "vmstat.cpu");
        assert_eq!(kind_of("vmstat.system.cs"), "vmstat.system");
        assert_eq!(kind_of("time.minor_page_faults.per-op"), "time");
        assert_eq!(kind_of("timex.x"), "other");
    }

    #[test]
    fn wilson_matches_known_values() {
        // 0 of 500: upper bound about 0.0076; 25 of 500: about [0.034, 0.073].
        let (lo, hi) = wilson(0, 500);
        assert!(lo.abs() < 1e-12, "{lo}");
        assert!((hi - 0.00762).abs() < 2e-4, "{hi}");
        let (lo, hi) = wilson(25, 500);
        assert!(
            (lo - 0.0341).abs() < 1e-3 && (hi - 0.0728).abs() < 1e-3,
            "{lo} {hi}"
        );
    }
}
