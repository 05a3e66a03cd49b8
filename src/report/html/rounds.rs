//! The paired section of a campaign's comparison page: the table of each row's paired,
//! robust and unpaired estimates with which interval is narrower, the drift and round-order
//! checks that matter, and per row a chart of the paired ratio round by round: each round's
//! patched/base − 1 as a dot (blue when base ran first, orange when patched did, grey when
//! together), the paired interval shaded with its point as a line, the unpaired interval as
//! dashed lines, and the zero line. With several boxes the rounds are grouped by box.

use crate::compare::paired::First;
use crate::compare::{Comparison, Row};
use crate::report::compare::paired as text;
use crate::report::svg::{self, esc, Scale};
use std::fmt::Write;

const W: f64 = 470.0;
const H: f64 = 200.0;
const LEFT: f64 = 52.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 40.0;
/// Longest title drawn in full (about 6.5 px a character at 13 px bold in 440 px).
const MAX_TITLE: usize = 44;

/// The section (empty for an unpaired comparison).
pub fn section(c: &Comparison) -> String {
    let Some((header, cells)) = text::table(c) else {
        return String::new();
    };
    let mut out = String::from("<div class=\"scroll\"><table class=\"paired\"><thead><tr>");
    for (i, h) in header.iter().enumerate() {
        let class = if i > 0 { " class=\"num\"" } else { "" };
        let _ = write!(out, "<th{class}>{}</th>", esc(h));
    }
    out += "</tr></thead><tbody>";
    for row in cells {
        out += "<tr>";
        for (i, cell) in row.iter().enumerate() {
            let class = if i > 0 { "num" } else { "metric" };
            let _ = write!(out, "<td class=\"{class}\">{}</td>", esc(cell));
        }
        out += "</tr>\n";
    }
    out += "</tbody></table></div>";
    out += &super::page::note(&text::table_note(c));
    for line in text::check_lines(c, false) {
        out += &super::page::note(&line);
    }
    out += "<p class=\"legend\"><span><i class=\"swatch base\"></i>base ran first</span>\
            <span><i class=\"swatch patched\"></i>patched ran first</span>\
            <span>shaded: paired interval, line: its estimate; dashed: unpaired interval</span></p>";
    out += "<div class=\"curves\">";
    for r in c.rows.iter().filter(|r| r.paired.is_some()) {
        out += &chart(c, r);
    }
    out + "</div>"
}

/// The per-round chart of one row.
pub fn chart(c: &Comparison, r: &Row) -> String {
    let Some(p) = &r.paired else {
        return String::new();
    };
    if p.rounds.is_empty() {
        return String::new();
    }
    let paired = text::paired_estimate(r);
    let unpaired = text::unpaired_estimate(r);
    let mut lo = 0.0f64;
    let mut hi = 0.0f64;
    let mut take = |v: f64| {
        if v.is_finite() {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    };
    for x in &p.rounds {
        take(x.ratio_pct);
    }
    for e in [paired, unpaired].into_iter().flatten() {
        take(e.lower_pct);
        take(e.upper_pct);
    }
    let pad = ((hi - lo) * 0.08).max(0.1);
    let y = Scale::new(lo - pad, hi + pad, H - BOTTOM, TOP);
    let n = p.rounds.len();
    let x = Scale::new(0.0, (n as f64 - 1.0).max(1.0), LEFT + 8.0, W - RIGHT - 8.0);
    let mut out = svg::open(
        "rounds",
        W,
        H,
        &format!(
            "per-round ratio of {} against {} for {}",
            c.patched,
            c.base,
            r.display_name()
        ),
    );
    let name = r.display_name();
    let title = if name.chars().count() > MAX_TITLE {
        format!("{}…", name.chars().take(MAX_TITLE - 1).collect::<String>())
    } else {
        name.clone()
    };
    let _ = write!(
        out,
        "<text class=\"title\" x=\"{LEFT:.1}\" y=\"16\">{}</text>\
         <text x=\"{LEFT:.1}\" y=\"29\">patched/base − 1 per round, % ({} pairs)</text>",
        esc(&title),
        p.pairs
    );
    let (x0, x1) = (LEFT, W - RIGHT);
    if let Some(e) = paired {
        let (a, b) = (y.at(e.upper_pct), y.at(e.lower_pct));
        let _ = write!(
            out,
            "<rect class=\"band\" x=\"{x0:.1}\" y=\"{a:.1}\" width=\"{:.1}\" height=\"{:.1}\">\
             <title>paired interval {}</title></rect>\
             <line class=\"mean side-patched\" x1=\"{x0:.1}\" y1=\"{:.1}\" x2=\"{x1:.1}\" y2=\"{:.1}\"/>",
            x1 - x0,
            (b - a).max(1.0),
            esc(&text::estimate_interval(e)),
            y.at(e.point_pct),
            y.at(e.point_pct)
        );
    }
    if let Some(e) = unpaired {
        for v in [e.lower_pct, e.upper_pct] {
            let yy = y.at(v);
            let _ = write!(
                out,
                "<line class=\"zero\" x1=\"{x0:.1}\" y1=\"{yy:.1}\" x2=\"{x1:.1}\" y2=\"{yy:.1}\">\
                 <title>unpaired interval {}</title></line>",
                esc(&text::estimate_interval(e))
            );
        }
    }
    let zero = y.at(0.0);
    let _ = write!(
        out,
        "<line class=\"axis\" x1=\"{x0:.1}\" y1=\"{zero:.1}\" x2=\"{x1:.1}\" y2=\"{zero:.1}\"/>"
    );
    let ticks = svg::ticks(lo - pad, hi + pad, 5);
    svg::y_axis(&mut out, &y, LEFT, &ticks);
    let mut last_box: Option<&str> = None;
    for (i, round) in p.rounds.iter().enumerate() {
        let cx = x.at(i as f64);
        if last_box != Some(round.r#box.as_str()) && !round.r#box.is_empty() {
            let _ = write!(
                out,
                "<line class=\"grid\" x1=\"{cx:.1}\" y1=\"{TOP:.1}\" x2=\"{cx:.1}\" y2=\"{:.1}\"/>",
                H - BOTTOM
            );
        }
        last_box = Some(round.r#box.as_str());
        let class = match round.first {
            First::Base => "side-base",
            First::Patched => "side-patched",
            First::Together => "s-inconclusive",
        };
        let _ = write!(
            out,
            "<circle class=\"run {class}\" cx=\"{cx:.1}\" cy=\"{:.1}\" r=\"4\"><title>round {}{}, \
             {}: {:+.2}% (runs {} and {})</title></circle>",
            y.at(round.ratio_pct),
            round.round,
            esc(&crate::compare::paired::box_suffix(&round.r#box)),
            round.first.as_str(),
            round.ratio_pct,
            esc(&round.base_run),
            esc(&round.patched_run)
        );
    }
    // Round labels under the axis: every one when few, else about 8.
    let step = n.div_ceil(8).max(1);
    for (i, round) in p.rounds.iter().enumerate().step_by(step) {
        let _ = write!(
            out,
            "<text class=\"tick-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            x.at(i as f64),
            H - BOTTOM + 16.0,
            round.round
        );
    }
    let _ = write!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">round</text></svg>",
        (x0 + x1) / 2.0,
        H - 6.0
    );
    out
}
