//! The output formats of `patchbench compare`. Each one prints a [`Comparison`] computed
//! elsewhere; none decides anything. `unixbench` is the layout of the posted tables, `lkp` the
//! robot's `%stddev %change %stddev`, `inline` one line per metric for mail, and `markdown`,
//! `csv`, `json` for reviews and machines.

mod lkp;
mod plain;
mod unixbench;

use crate::compare::{Comparison, Row, SideStats};

/// Output format of `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Unixbench,
    Lkp,
    Inline,
    Markdown,
    Csv,
    Json,
}

/// Renders the comparison. Warnings are part of the text for the human formats; csv and json
/// leave them to the caller (json carries them in a field).
pub fn render(c: &Comparison, format: Format) -> anyhow::Result<String> {
    Ok(match format {
        Format::Unixbench => preamble(c) + &unixbench::render(c),
        Format::Lkp => preamble(c) + &lkp::render(c),
        Format::Inline => preamble(c) + &plain::inline(c),
        Format::Markdown => preamble(c) + &plain::markdown(c),
        Format::Csv => plain::csv(c)?,
        Format::Json => serde_json::to_string_pretty(c)? + "\n",
    })
}

/// True when the format's text already contains the warnings.
pub fn shows_warnings(format: Format) -> bool {
    !matches!(format, Format::Csv | Format::Json)
}

fn preamble(c: &Comparison) -> String {
    let mut s = String::new();
    for w in &c.warnings {
        s += &format!("warning: not comparable: {w}\n");
    }
    s += &format!(
        "{}: {} run(s) [{}]; {}: {} run(s) [{}]; rule: {}\n",
        c.base,
        c.base_runs.len(),
        c.base_runs.join(", "),
        c.patched,
        c.patched_runs.len(),
        c.patched_runs.join(", "),
        rule_description(c),
    );
    for n in &c.notes {
        s += &format!("note: {n}\n");
    }
    s + "\n"
}

fn rule_description(c: &Comparison) -> String {
    let s = &c.settings;
    match s.rule {
        crate::compare::verdict::Rule::Lkp => format!(
            "lkp (≥3 samples on a side, each median outside the other's range, change > {}%)",
            s.noise_pct
        ),
        crate::compare::verdict::Rule::Bootstrap => format!(
            "bootstrap (Welch p < {}, {:.0}% CI of the change beyond ±{}%, {} resamples, seed {})",
            s.significance,
            100.0 * s.confidence,
            s.noise_pct,
            s.resamples,
            s.seed
        ),
    }
}

/// `+3.3%`, or `-` when undefined.
pub(crate) fn pct(v: Option<f64>, decimals: usize) -> String {
    match v {
        Some(x) => format!("{x:+.decimals$}%"),
        None => "-".to_string(),
    }
}

/// A number with a sensible number of digits for a table.
pub(crate) fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{v:.4e}")
    } else if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

pub(crate) fn mean(s: &Option<SideStats>) -> String {
    s.as_ref()
        .map(|x| num(x.mean))
        .unwrap_or_else(|| "-".to_string())
}

pub(crate) fn n(s: &Option<SideStats>) -> String {
    s.as_ref()
        .map(|x| x.n.to_string())
        .unwrap_or_else(|| "0".to_string())
}

pub(crate) fn spread(s: &Option<SideStats>) -> String {
    match s.as_ref().and_then(|x| x.stddev_pct) {
        Some(v) => format!("±{v:.1}%"),
        None => "-".to_string(),
    }
}

/// The verdict column: the verdict, or why there is none.
pub(crate) fn verdict(r: &Row) -> String {
    match (&r.judgement.reason, r.judgement.verdict) {
        (Some(why), crate::compare::verdict::Verdict::NoVerdict) => format!("no verdict ({why})"),
        (_, v) => v.as_str().to_string(),
    }
}

/// A table with `|` separators and padded columns; the first column is left-aligned, the
/// others right-aligned. With `markdown`, a `|---|` line follows the header.
pub(crate) fn grid(header: &[String], rows: &[Vec<String>], markdown: bool) -> String {
    let cols = header.len();
    let mut width = vec![0; cols];
    for r in std::iter::once(header).chain(rows.iter().map(Vec::as_slice)) {
        for (i, cell) in r.iter().enumerate().take(cols) {
            width[i] = width[i].max(cell.chars().count());
        }
    }
    let line = |r: &[String]| -> String {
        let mut s = String::new();
        if markdown {
            s.push_str("| ");
        }
        for (i, cell) in r.iter().enumerate().take(cols) {
            let pad = width[i].saturating_sub(cell.chars().count());
            if i == 0 {
                s += &format!("{cell}{} | ", " ".repeat(pad));
            } else {
                s += &format!("{}{cell} | ", " ".repeat(pad));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(header);
    if markdown {
        let dashes: Vec<String> = width
            .iter()
            .enumerate()
            .map(|(i, w)| {
                // GitHub wants at least three characters per delimiter cell.
                if i == 0 {
                    "-".repeat((*w).max(3))
                } else {
                    format!("{}:", "-".repeat((*w).max(3) - 1))
                }
            })
            .collect();
        out += &line(&dashes);
    }
    for r in rows {
        out += &line(r);
    }
    out
}
