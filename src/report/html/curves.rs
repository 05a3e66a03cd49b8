//! The curves: will-it-scale's ops/s against task count (one chart per testcase and mode)
//! and AIM7's jobs/min against load (one per test). Each side is a line through its means
//! with every run's value as a dot; the tooltip of a dot names its run.

use crate::compare::curves::Curve;
use crate::report::compare::num;
use crate::report::svg::{self, esc, Scale};
use std::fmt::Write;

const W: f64 = 460.0;
const H: f64 = 280.0;
const LEFT: f64 = 58.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 44.0;

/// The side's CSS class: the first side is `base`, the second `patched`.
fn class(i: usize) -> &'static str {
    if i == 0 {
        "side-base"
    } else {
        "side-patched"
    }
}

/// The charts of every curve, side by side, with a legend (empty without curves).
pub fn charts(curves: &[Curve]) -> String {
    if curves.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    if let Some(first) = curves.first() {
        out += "<p class=\"legend\">";
        for (i, s) in first.sides.iter().enumerate() {
            let _ = write!(
                out,
                "<span><i class=\"swatch {}\"></i>{}</span>",
                if i == 0 { "base" } else { "patched" },
                esc(&s.side)
            );
        }
        out += "<span>line: mean over runs; dots: each run</span></p>";
    }
    out += "<div class=\"curves\">";
    for c in curves {
        out += &chart(c);
    }
    out + "</div>"
}

fn title(c: &Curve) -> String {
    if c.mode.is_empty() {
        format!("{} {}", c.kind, c.test)
    } else {
        format!("{} {} ({})", c.kind, c.test, c.mode)
    }
}

/// One curve's chart.
pub fn chart(c: &Curve) -> String {
    let points = c.sides.iter().flat_map(|s| &s.points);
    let (mut xmin, mut xmax, mut ymax) = (u64::MAX, 0u64, 0f64);
    for p in points {
        xmin = xmin.min(p.x);
        xmax = xmax.max(p.x);
        for v in p.values.iter().chain([&p.mean]) {
            if v.is_finite() {
                ymax = ymax.max(*v);
            }
        }
    }
    if xmin > xmax {
        return String::new();
    }
    let xs = Scale::new(xmin as f64, xmax as f64, LEFT, W - RIGHT);
    let ys = Scale::new(
        0.0,
        if ymax > 0.0 { ymax * 1.08 } else { 1.0 },
        H - BOTTOM,
        TOP,
    );
    let name = title(c);
    let mut out = svg::open(
        "curve",
        W,
        H,
        &format!("{name}: {} against {}", c.unit, c.x_label),
    );
    let _ = write!(
        out,
        "<text class=\"title\" x=\"{LEFT:.1}\" y=\"16\">{}</text>",
        esc(&name)
    );
    let yt = svg::ticks(ys.d0, ys.d1, 5);
    for t in &yt {
        let y = ys.at(*t);
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{LEFT:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>",
            W - RIGHT
        );
    }
    let span = xmax - xmin;
    let xt: Vec<f64> = if span <= 12 {
        (xmin..=xmax).map(|x| x as f64).collect()
    } else {
        svg::ticks(xmin as f64, xmax as f64, 6)
    };
    svg::x_axis(&mut out, &xs, H - BOTTOM, &xt, "");
    svg::y_axis(&mut out, &ys, LEFT, &yt);
    let _ = write!(
        out,
        "<text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
         <text class=\"label\" x=\"14\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {:.1})\">{}</text>",
        (LEFT + W - RIGHT) / 2.0,
        H - 8.0,
        esc(&c.x_label),
        (TOP + H - BOTTOM) / 2.0,
        (TOP + H - BOTTOM) / 2.0,
        esc(&c.unit)
    );
    for (i, side) in c.sides.iter().enumerate() {
        let cls = class(i);
        let path: Vec<String> = side
            .points
            .iter()
            .map(|p| format!("{:.1},{:.1}", xs.at(p.x as f64), ys.at(p.mean)))
            .collect();
        let _ = write!(
            out,
            "<polyline class=\"curve {cls}\" points=\"{}\"><title>{}: mean over runs</title></polyline>",
            path.join(" "),
            esc(&side.side)
        );
        for p in &side.points {
            for (v, run) in p.values.iter().zip(&p.runs) {
                let _ = write!(
                    out,
                    "<circle class=\"run {cls}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\">\
                     <title>{} run {}: {} {} at {} {}</title></circle>",
                    xs.at(p.x as f64),
                    ys.at(*v),
                    esc(&side.side),
                    esc(run),
                    num(*v),
                    esc(&c.unit),
                    esc(&c.x_label),
                    p.x
                );
            }
        }
    }
    out + "</svg>"
}
