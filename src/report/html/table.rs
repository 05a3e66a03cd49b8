//! The tables of the HTML report: the comparison (one row per metric with its label, the
//! interval, p and q, and the runs of each side as dots), the spread and sensitivity table,
//! and, for one run, its metrics with their samples.

use super::dots;
use crate::compare::{Comparison, Row};
use crate::record::RunRecord;
use crate::report::compare::{self as text, ci_header};
use crate::report::svg::esc;
use std::fmt::Write;

/// The CSS class of a verdict: `v-no-change`.
pub fn verdict_class(r: &Row) -> String {
    format!("v-{}", r.judgement.verdict.as_str().replace(' ', "-"))
}

fn th(out: &mut String, text: &str, num: bool) {
    let class = if num { " class=\"num\"" } else { "" };
    let _ = write!(out, "<th{class}>{}</th>", esc(text));
}

fn td(out: &mut String, text: &str, class: &str) {
    let _ = write!(out, "<td class=\"{class}\">{}</td>", esc(text));
}

/// A side's column heading: its name, or its role when the name is a long list (the page's
/// header gives the names in full).
pub fn column_name<'a>(name: &'a str, role: &'a str) -> &'a str {
    if name.chars().count() > 24 {
        role
    } else {
        name
    }
}

/// The comparison table.
pub fn comparison(c: &Comparison) -> String {
    let mut out = String::from("<div class=\"scroll\"><table class=\"comparison\"><thead><tr>");
    th(&mut out, "metric", false);
    th(&mut out, "unit", false);
    for side in [
        column_name(&c.base, "base"),
        column_name(&c.patched, "patched"),
    ] {
        th(&mut out, "n", true);
        th(&mut out, side, true);
        th(&mut out, "±", true);
    }
    for h in ["change", &ci_header(c), "p", "q"] {
        th(&mut out, h, true);
    }
    th(&mut out, "verdict", false);
    th(&mut out, "runs: base, patched", false);
    out += "</tr></thead><tbody>\n";
    for r in &c.rows {
        let e = r.judgement.estimate.as_ref();
        let _ = write!(
            out,
            "<tr{} title=\"{}\">",
            if r.primary { " class=\"primary\"" } else { "" },
            esc(&r.key)
        );
        td(&mut out, &r.display_name(), "metric");
        td(&mut out, &r.unit, "");
        for s in [&r.base, &r.patched] {
            td(&mut out, &text::n(s), "num");
            td(&mut out, &text::mean(s), "num");
            td(&mut out, &text::spread(s), "num");
        }
        td(&mut out, &text::pct(r.change_pct, 2), "num");
        td(&mut out, &text::interval(r), "num");
        td(
            &mut out,
            &e.map(|e| text::sig(e.p)).unwrap_or("-".into()),
            "num",
        );
        td(
            &mut out,
            &e.map(|e| text::sig(e.q)).unwrap_or("-".into()),
            "num",
        );
        td(
            &mut out,
            &text::verdict(r),
            &format!("verdict {}", verdict_class(r)),
        );
        let _ = writeln!(out, "<td>{}</td></tr>", dots::row(r));
    }
    out += "</tbody></table></div>";
    out
}

/// The spread and sensitivity table with what its columns mean (empty when no row has one).
pub fn sensitivity(c: &Comparison) -> String {
    let Some((header, rows)) = text::sensitivity(c) else {
        return String::new();
    };
    let mut out = String::from("<div class=\"scroll\"><table class=\"sensitivity\"><thead><tr>");
    for (i, h) in header.iter().enumerate() {
        th(&mut out, h, i > 0);
    }
    out += "</tr></thead><tbody>";
    for row in rows {
        out += "<tr>";
        for (i, cell) in row.iter().enumerate() {
            td(&mut out, cell, if i > 0 { "num" } else { "metric" });
        }
        out += "</tr>\n";
    }
    out += "</tbody></table></div>";
    out + &super::page::note(&text::sensitivity_note(c))
}

/// One run's metrics: value, unit, samples, their spread, and the samples as dots.
pub fn run_metrics(r: &RunRecord) -> String {
    let mut out = String::from("<div class=\"scroll\"><table class=\"metrics\"><thead><tr>");
    for (h, num) in [
        ("metric", false),
        ("key", false),
        ("value", true),
        ("unit", false),
        ("n", true),
        ("±", true),
        ("samples", false),
    ] {
        th(&mut out, h, num);
    }
    out += "</tr></thead><tbody>\n";
    for m in &r.metrics {
        out += "<tr>";
        td(&mut out, &m.title, "metric");
        td(&mut out, &m.key(), "");
        td(&mut out, &text::num(m.value), "num");
        td(&mut out, &m.unit, "");
        td(&mut out, &crate::report::store::sample_count(m), "num");
        let sd = crate::report::store::sample_spread_pct(m)
            .map(|v| format!("±{v:.2}%"))
            .unwrap_or_else(|| "-".to_string());
        td(&mut out, &sd, "num");
        let _ = writeln!(out, "<td>{}</td></tr>", dots::samples(m));
    }
    out += "</tbody></table></div>";
    out
}
