//! The forest plot: one line per row of the comparison, the interval of its change (in %,
//! patched against base) with the point estimate, coloured by its label, over the shaded
//! noise band and the zero line. A row without an interval shows the change of its means as
//! a hollow dot; an interval bound at infinity (a rise from zero) ends in an arrow at the
//! edge.

use super::table::{column_name, verdict_class};
use crate::compare::{Comparison, Row};
use crate::report::compare as text;
use crate::report::svg::{self, esc, Scale};
use std::fmt::Write;

const ROW: f64 = 22.0;
const TOP: f64 = 28.0;
const LABEL: f64 = 400.0;
const PLOT: f64 = 540.0;
/// The narrowest column of intervals and verdicts; a longer text widens it (at
/// [`CHAR_PX`] a character), so no interval is cut at the chart's edge.
const RIGHT: f64 = 280.0;
/// An upper bound of one character's width in the 12px labels.
const CHAR_PX: f64 = 7.5;
const BOTTOM: f64 = 40.0;
/// Longest row name drawn in full (the rest in the tooltip): 54 characters of 12px bold sans
/// fit the label column (about 7px each), so a long name is cut, not clipped at the edge.
const MAX_LABEL: usize = 54;

/// The noise band in %, as the labels use it: ratios within [1/(1+b), 1+b].
fn band(c: &Comparison) -> (f64, f64) {
    let b = c.settings.noise_pct / 100.0;
    (100.0 * (1.0 / (1.0 + b) - 1.0), 100.0 * b)
}

/// The x range: every finite bound, point and change, the band and zero, padded.
fn domain(c: &Comparison) -> (f64, f64) {
    let (blo, bhi) = band(c);
    let mut lo = blo.min(0.0);
    let mut hi = bhi.max(0.0);
    for r in &c.rows {
        let mut vals = vec![r.change_pct];
        if let Some(e) = &r.judgement.estimate {
            vals.extend([Some(e.lower_pct), Some(e.point_pct), Some(e.upper_pct)]);
        }
        for v in vals.into_iter().flatten().filter(|v| v.is_finite()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    let pad = (hi - lo) * 0.06;
    (lo - pad, hi + pad)
}

fn label(r: &Row) -> String {
    let name = r.display_name();
    if name.chars().count() > MAX_LABEL {
        let cut: String = name.chars().take(MAX_LABEL - 1).collect();
        format!("{cut}…")
    } else {
        name
    }
}

/// The plot of every row of `c`.
pub fn plot(c: &Comparison) -> String {
    if c.rows.is_empty() {
        return String::new();
    }
    let (lo, hi) = domain(c);
    let scale = Scale::new(lo, hi, LABEL, LABEL + PLOT);
    let height = TOP + ROW * c.rows.len() as f64 + BOTTOM;
    let longest = c
        .rows
        .iter()
        .map(|r| note(r).chars().count() + 1 + text::verdict(r).chars().count())
        .max()
        .unwrap_or(0);
    let width = LABEL + PLOT + RIGHT.max(12.0 + CHAR_PX * longest as f64 + 8.0);
    let bottom = TOP + ROW * c.rows.len() as f64;
    let mut out = svg::open(
        "forest",
        width,
        height,
        &format!(
            "change of {} against {} per row, with its interval and the noise band",
            c.patched, c.base
        ),
    );
    let (blo, bhi) = band(c);
    let _ = write!(
        out,
        "<rect class=\"band\" x=\"{:.1}\" y=\"{TOP:.1}\" width=\"{:.1}\" height=\"{:.1}\">\
         <title>noise band ±{}%: changes inside it do not matter</title></rect>",
        scale.at(blo),
        (scale.at(bhi) - scale.at(blo)).max(1.0),
        bottom - TOP,
        c.settings.noise_pct
    );
    let ticks = svg::ticks(lo, hi, 8);
    for t in &ticks {
        let x = scale.at(*t);
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{x:.1}\" y1=\"{TOP:.1}\" x2=\"{x:.1}\" y2=\"{bottom:.1}\"/>"
        );
    }
    for edge in [blo, bhi] {
        let x = scale.at(edge);
        let _ = write!(
            out,
            "<line class=\"band-edge\" x1=\"{x:.1}\" y1=\"{TOP:.1}\" x2=\"{x:.1}\" y2=\"{bottom:.1}\"/>"
        );
    }
    let zero = scale.at(0.0);
    let _ = write!(
        out,
        "<line class=\"zero\" x1=\"{zero:.1}\" y1=\"{:.1}\" x2=\"{zero:.1}\" y2=\"{bottom:.1}\"/>",
        TOP - 6.0
    );
    let _ = write!(
        out,
        "<text class=\"title\" x=\"8\" y=\"14\">change of {} against {}, % ({} interval; shaded: ±{}% noise band)</text>\
         <text class=\"label\" x=\"{:.1}\" y=\"14\">interval, verdict</text>",
        esc(column_name(&c.patched, "patched")),
        esc(column_name(&c.base, "base")),
        esc(&text::ci_header(c)),
        c.settings.noise_pct,
        LABEL + PLOT + 12.0
    );
    for (i, r) in c.rows.iter().enumerate() {
        let y = TOP + ROW * i as f64 + ROW / 2.0;
        row(&mut out, &scale, y, r);
    }
    svg::x_axis(&mut out, &scale, bottom, &ticks, "%");
    format!("<div class=\"scroll\">{out}</svg></div>")
}

fn row(out: &mut String, scale: &Scale, y: f64, r: &Row) {
    let class = verdict_class(r).replacen("v-", "s-", 1);
    let weight = if r.primary {
        " style=\"font-weight:700\""
    } else {
        ""
    };
    let _ = write!(
        out,
        "<g class=\"forest-row\"><title>{}: {} {}</title>\
         <text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\"{weight}>{}</text>",
        esc(&r.display_name()),
        esc(&text::interval(r)),
        esc(&text::verdict(r)),
        LABEL - 8.0,
        y + 4.0,
        esc(&label(r))
    );
    match &r.judgement.estimate {
        Some(e) => {
            let (x0, x1) = (scale.at(e.lower_pct), scale.at(e.upper_pct));
            let _ = write!(
                out,
                "<line class=\"ci {class}\" x1=\"{x0:.1}\" y1=\"{y:.1}\" x2=\"{x1:.1}\" y2=\"{y:.1}\"/>"
            );
            for (bound, x, dir) in [(e.lower_pct, x0, -1.0), (e.upper_pct, x1, 1.0)] {
                if bound.is_infinite() {
                    let _ = write!(
                        out,
                        "<polygon class=\"{class}\" points=\"{:.1},{y:.1} {:.1},{:.1} {:.1},{:.1}\"/>",
                        x + 6.0 * dir,
                        x,
                        y - 4.0,
                        x,
                        y + 4.0
                    );
                }
            }
            let _ = write!(
                out,
                "<circle class=\"{class}\" cx=\"{:.1}\" cy=\"{y:.1}\" r=\"4\"/>",
                scale.at(e.point_pct)
            );
        }
        None => {
            if let Some(ch) = r.change_pct.filter(|v| v.is_finite()) {
                let _ = write!(
                    out,
                    "<circle class=\"hollow {class}\" cx=\"{:.1}\" cy=\"{y:.1}\" r=\"4\"/>",
                    scale.at(ch)
                );
            }
        }
    }
    let _ = write!(
        out,
        "<text class=\"label\" x=\"{:.1}\" y=\"{:.1}\">{} <tspan class=\"{}\">{}</tspan></text></g>",
        LABEL + PLOT + 12.0,
        y + 4.0,
        esc(&note(r)),
        verdict_class(r).replacen("v-", "t-", 1),
        esc(&text::verdict(r))
    );
}

/// A row's interval (or its change without one), as the right-hand column shows it.
fn note(r: &Row) -> String {
    match &r.judgement.estimate {
        Some(_) => text::interval(r),
        None => format!("{} (no interval)", text::pct(r.change_pct, 1)),
    }
}
