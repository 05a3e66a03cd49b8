//! The layout of the posted UnixBench comparisons (mechanisms.md §2, comparison.md §6):
//! `System Benchmarks Index Values | base | patched | cmp |` per copy count, one row per index
//! test (its index value, 10 × score / baseline) and the Index Score. With repeats it adds
//! what the posts lacked: n, ± (between-run sample stddev %), the interval, p and q, and the
//! label. With one run a side (a posted table) it keeps the posted layout exactly.

use super::{ci_header, interval, n, painted_grid, pct, pq, spread, verdict, verdict_paint};
use crate::compare::{Comparison, Row, SideStats};
use crate::report::color::Paint;
use crate::unixbench::catalog;
use std::collections::BTreeSet;

pub fn render(c: &Comparison, color: bool) -> String {
    let repeats = c.rows.iter().any(|r| {
        r.judgement.estimate.is_some()
            || [&r.base, &r.patched]
                .iter()
                .any(|s| s.as_ref().is_some_and(|x| x.n > 1))
    });
    let copies: BTreeSet<u32> = c
        .rows
        .iter()
        .filter(|r| r.name.starts_with("unixbench."))
        .filter_map(|r| r.params.get("copies")?.parse().ok())
        .collect();
    let mut shown = BTreeSet::new();
    let mut out = String::new();
    for k in copies {
        let of_block =
            |r: &&Row| r.params.get("copies").map(String::as_str) == Some(&k.to_string());
        let mut rows = Vec::new();
        let mut paints: Vec<Option<Paint>> = Vec::new();
        let paint = |r: &Row| {
            if repeats {
                verdict_paint(r, color)
            } else {
                None
            }
        };
        for r in c
            .rows
            .iter()
            .filter(of_block)
            .filter(|r| r.name == "unixbench.score")
        {
            let Some(baseline) = baseline_of(r) else {
                continue;
            };
            shown.insert(r.key.clone());
            rows.push(cells(r, &r.title, 10.0 / baseline, repeats));
            paints.push(paint(r));
        }
        let total = c
            .rows
            .iter()
            .filter(of_block)
            .find(|r| r.name == "unixbench.index");
        if let Some(t) = total {
            shown.insert(t.key.clone());
            rows.push(cells(
                t,
                "System Benchmarks Index Score (geomean)",
                1.0,
                repeats,
            ));
            paints.push(paint(t));
        }
        if rows.is_empty() {
            continue;
        }
        let title = format!(
            "System Benchmarks Index Values ({k} parallel cop{})",
            if k == 1 { "y" } else { "ies" }
        );
        out += &painted_grid(&header(&title, c, repeats), &rows, false, &paints);
        out += "\n";
    }
    if !shown.is_empty() {
        out += "Index values are 10 × score / baseline; the Index Score of a run is the geometric \
                mean of its index values (UnixBench's rule); columns show the mean over runs, \
                cmp the change of that mean";
        if repeats {
            out += ", ± the between-run sample stddev in %, the interval the change of the \
                    geometric mean over runs, p two-sided, q Benjamini–Hochberg";
        }
        out += ".\n\n";
    }
    let others: Vec<&Row> = c.rows.iter().filter(|r| !shown.contains(&r.key)).collect();
    let rest: Vec<Vec<String>> = others
        .iter()
        .map(|r| cells(r, &r.display_name(), 1.0, repeats))
        .collect();
    let paints: Vec<Option<Paint>> = others
        .iter()
        .map(|r| {
            if repeats {
                verdict_paint(r, color)
            } else {
                None
            }
        })
        .collect();
    if !rest.is_empty() {
        out += &painted_grid(
            &header("Other results (score)", c, repeats),
            &rest,
            false,
            &paints,
        );
    }
    out
}

fn baseline_of(r: &Row) -> Option<f64> {
    catalog::find(r.params.get("test")?)?.baseline
}

fn header(title: &str, c: &Comparison, repeats: bool) -> Vec<String> {
    let mut h = vec![title.to_string()];
    if repeats {
        h.extend(["n".to_string(), c.base.clone(), "±".to_string()]);
        h.extend(["n".to_string(), c.patched.clone(), "±".to_string()]);
        h.extend(["cmp".to_string(), ci_header(c), "p, q".to_string()]);
        h.push("verdict".to_string());
    } else {
        h.extend([c.base.clone(), c.patched.clone(), "cmp".to_string()]);
    }
    h
}

fn cells(r: &Row, title: &str, scale: f64, repeats: bool) -> Vec<String> {
    let value = |s: &Option<SideStats>| {
        s.as_ref()
            .map(|x| format!("{:.2}", x.mean * scale))
            .unwrap_or_else(|| "-".to_string())
    };
    let mut row = vec![title.to_string()];
    if repeats {
        row.extend([n(&r.base), value(&r.base), spread(&r.base)]);
        row.extend([n(&r.patched), value(&r.patched), spread(&r.patched)]);
        row.extend([pct(r.change_pct, 2), interval(r), pq(r), verdict(r)]);
    } else {
        row.extend([value(&r.base), value(&r.patched), pct(r.change_pct, 2)]);
    }
    row
}
