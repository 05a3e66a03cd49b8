//! `patchbench calibrate`'s output: the false-alarm rates per design, family and kind of row,
//! the planted changes' find rates, the smallest detectable loss of the headline score, and
//! the monitor rows too sporadic to judge; as text, or as JSON (schema
//! `patchbench.calibrate/1`, docs/json.md).

use crate::calibrate::tally::Rate;
use crate::calibrate::{Calibration, DesignResult, POWER};
use crate::safe_text::field;
use serde::Serialize;
use std::fmt::Write;

/// The `schema` of `calibrate --format json`.
pub const SCHEMA: &str = "patchbench.calibrate/1";

#[derive(Serialize)]
struct Doc<'a> {
    schema: &'static str,
    #[serde(flatten)]
    calibration: &'a Calibration,
}

/// The JSON document.
pub fn json(c: &Calibration) -> anyhow::Result<String> {
    let mut s = serde_json::to_string_pretty(&Doc {
        schema: SCHEMA,
        calibration: c,
    })?;
    s.push('\n');
    Ok(s)
}

/// A rate as `4.2 % [2.7, 6.3]`.
pub fn rate(r: &Rate) -> String {
    format!(
        "{:.1} % [{:.1}, {:.1}]",
        100.0 * r.rate,
        100.0 * r.low,
        100.0 * r.high
    )
}

/// A rate as `4.2 %` (for the wide tables).
fn short(r: &Rate) -> String {
    format!("{:.1} %", 100.0 * r.rate)
}

/// The designs that ran.
fn ran(c: &Calibration) -> Vec<&DesignResult> {
    c.designs.iter().filter(|d| d.aa.is_some()).collect()
}

/// One table: a header row and rows of cells, the first column left-aligned.
fn table(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    let cols = header.len();
    let width: Vec<usize> = (0..cols)
        .map(|i| {
            rows.iter()
                .chain(std::iter::once(&header.to_vec()))
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in std::iter::once(&header.to_vec()).chain(rows) {
        let mut line = String::from("  ");
        for (i, cell) in r.iter().enumerate() {
            if i == 0 {
                let _ = write!(line, "{cell:<w$}", w = width[i]);
            } else {
                let _ = write!(line, "  {cell:>w$}", w = width[i]);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// The text report.
pub fn text(c: &Calibration) -> String {
    let mut out = String::new();
    let rounds = match c.rounds_from {
        crate::calibrate::pool::RoundsFrom::Campaign => "the campaign's rounds",
        crate::calibrate::pool::RoundsFrom::Adjacent => "neighbouring runs in time",
    };
    let _ = writeln!(
        out,
        "calibrate {}: {} runs of one configuration, {} rounds ({rounds}); {} A/A tables a \
         design, seed {}",
        field(&c.name),
        c.runs,
        c.rounds,
        c.tables,
        c.seed
    );
    if !c.left_out.is_empty() {
        let _ = writeln!(
            out,
            "left out {} runs of another configuration or interrupted: {}",
            c.left_out.len(),
            field(&c.left_out.join(", "))
        );
    }
    if let Some(h) = &c.headline {
        let _ = writeln!(out, "headline row: {}", field(h));
    }
    let designs = ran(c);
    out.push_str(
        "\nFalse alarms: tables with an improved or regressed row though both sides ran the \
         same kernel (95 % Wilson interval)\n",
    );
    let header: Vec<String> = ["design", "tables", "any row", "scores", "monitors"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let rows: Vec<Vec<String>> = designs
        .iter()
        .filter_map(|d| {
            let aa = d.aa.as_ref()?;
            Some(vec![
                d.label.clone(),
                aa.any.tables.to_string(),
                rate(&aa.any),
                rate(&aa.scores),
                rate(&aa.monitors),
            ])
        })
        .collect();
    table(&mut out, &header, &rows);
    for d in c.designs.iter().filter(|d| d.aa.is_none()) {
        let _ = writeln!(
            out,
            "  {}: not drawn ({})",
            d.label,
            d.skipped.as_deref().unwrap_or("")
        );
    }
    let _ = writeln!(
        out,
        "  every table is drawn from these {} runs: an interval says how precisely {} tables \
         measure their rate, not the box's; other runs of this box can read a few points \
         either side (docs/compare.md)",
        c.runs, c.tables
    );
    let min_pairs =
        crate::stats::sign_flip::fewest_pairs(crate::compare::verdict::Settings::default().alpha());
    if designs
        .iter()
        .any(|d| matches!(d.design, crate::calibrate::Design::Paired(n) if n < min_pairs))
    {
        let _ = writeln!(
            out,
            "  a paired verdict needs {min_pairs} rounds: below that the scores of a campaign's \
             rounds are judged as unpaired runs, as compare judges them"
        );
    }
    out.push_str("\nBy kind of row: tables with a flagged row of that kind\n");
    let mut kinds: Vec<String> = Vec::new();
    for d in &designs {
        for (k, _) in d.aa.iter().flat_map(|a| &a.kinds) {
            if !kinds.contains(k) {
                kinds.push(k.clone());
            }
        }
    }
    let header: Vec<String> = std::iter::once("kind".to_string())
        .chain(designs.iter().map(|d| d.label.clone()))
        .collect();
    let rows: Vec<Vec<String>> = kinds
        .iter()
        .map(|k| {
            std::iter::once(k.clone())
                .chain(designs.iter().map(|d| {
                    d.aa.iter()
                        .flat_map(|a| &a.kinds)
                        .find(|(x, _)| x == k)
                        .map_or("-".to_string(), |(_, r)| short(r))
                }))
                .collect()
        })
        .collect();
    table(&mut out, &header, &rows);
    let top: Vec<String> = designs
        .iter()
        .filter_map(|d| {
            let a = d.aa.as_ref()?;
            let (k, n) = a.top_rows.first()?;
            Some(format!("{}: {} ({n} tables)", d.label, field(k)))
        })
        .collect();
    if !top.is_empty() {
        let _ = writeln!(out, "  flagged most often: {}", top.join("; "));
    }
    if let Some(first) = designs.iter().find(|d| !d.planted.is_empty()) {
        out.push_str("\nPlanted changes: tables that found them (flagged, the right way)\n");
        let header: Vec<String> = std::iter::once("change".to_string())
            .chain(designs.iter().map(|d| d.label.clone()))
            .collect();
        let rows: Vec<Vec<String>> = first
            .planted
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let what = match f.plant.change {
                    crate::calibrate::plant::Change::Scale(x) => {
                        format!("{} x{x}", f.plant.what)
                    }
                    crate::calibrate::plant::Change::SteadyAtBaseMax => {
                        format!("{} made steady", f.plant.what)
                    }
                };
                std::iter::once(what)
                    .chain(designs.iter().map(|d| {
                        d.planted
                            .get(i)
                            .map_or("-".to_string(), |f| short(&f.found))
                    }))
                    .collect()
            })
            .collect();
        table(&mut out, &header, &rows);
        for f in &first.planted {
            let cv = f
                .plant
                .cv_pct
                .map(|c| format!(", CV {c:.1} %"))
                .unwrap_or_default();
            let _ = writeln!(out, "  {}: {}{cv}", f.plant.what, field(&f.plant.key));
        }
    }
    let reach: Vec<String> = designs
        .iter()
        .filter_map(|d| {
            let r = d.reach.as_ref()?;
            Some(match r.pct {
                Some(p) => format!("{}: {p} %", d.label),
                None => format!(
                    "{}: above {} %",
                    d.label,
                    r.tried.last().map_or(0.0, |t| t.0)
                ),
            })
        })
        .collect();
    if !reach.is_empty() {
        let _ = writeln!(
            out,
            "\nSmallest loss of the headline score found in at least {:.0} % of tables:\n  {}",
            100.0 * POWER,
            reach.join("; ")
        );
    }
    let _ = writeln!(
        out,
        "\nMonitor rows too sporadic to judge on this box: {}",
        c.sporadic.len()
    );
    for s in c.sporadic.iter().take(30) {
        let _ = writeln!(out, "  {}  {}", field(&s.key), field(&s.why));
    }
    if c.sporadic.len() > 30 {
        let _ = writeln!(
            out,
            "  … and {} more (--format json lists them all)",
            c.sporadic.len() - 30
        );
    }
    out
}
