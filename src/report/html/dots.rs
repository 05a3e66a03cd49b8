//! The small dot charts in the tables: every run of each side of a row on one axis (base
//! above, patched below, a bar at each side's mean), and the samples of one run's metric.
//! Each dot's tooltip names its run and value.

use crate::compare::{Row, SideStats};
use crate::record::Metric;
use crate::report::compare::num;
use crate::report::svg::{self, esc, Scale};
use std::fmt::Write;

const WIDTH: f64 = 150.0;
const PAD: f64 = 6.0;

fn lane(out: &mut String, scale: &Scale, y: f64, class: &str, side: &SideStats) {
    let _ = write!(
        out,
        "<line class=\"grid\" x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>",
        scale.r0, scale.r1
    );
    for (v, run) in side.values.iter().zip(&side.runs) {
        let _ = write!(
            out,
            "<circle class=\"run {class}\" cx=\"{:.1}\" cy=\"{y:.1}\" r=\"3.2\"><title>run {}: {}</title></circle>",
            scale.at(*v),
            esc(run),
            num(*v)
        );
    }
    let x = scale.at(side.mean);
    let _ = write!(
        out,
        "<line class=\"mean {class}\" x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\"><title>mean {}</title></line>",
        y - 6.0,
        y + 6.0,
        num(side.mean)
    );
}

/// The runs of both sides of a row.
pub fn row(r: &Row) -> String {
    let sides: Vec<(&SideStats, &str, f64)> = [
        (&r.base, "side-base", 9.0),
        (&r.patched, "side-patched", 23.0),
    ]
    .into_iter()
    .filter_map(|(s, class, y)| Some((s.as_ref()?, class, y)))
    .collect();
    let lo = sides.iter().map(|s| s.0.min).fold(f64::INFINITY, f64::min);
    let hi = sides
        .iter()
        .map(|s| s.0.max)
        .fold(f64::NEG_INFINITY, f64::max);
    if sides.is_empty() || !lo.is_finite() || !hi.is_finite() {
        return String::new();
    }
    let scale = Scale::new(lo, hi, PAD, WIDTH - PAD);
    let mut out = svg::open(
        "runs",
        WIDTH,
        32.0,
        &format!("runs of {}: base above, patched below", r.display_name()),
    );
    for (s, class, y) in sides {
        lane(&mut out, &scale, y, class, s);
    }
    let _ = write!(
        out,
        "<title>{} … {} {}</title></svg>",
        num(lo),
        num(hi),
        esc(&r.unit)
    );
    out
}

/// The samples of one metric of one run (passes, per-second samples).
pub fn samples(m: &Metric) -> String {
    let lo = m.samples.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = m.samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m.samples.is_empty() || !lo.is_finite() || !hi.is_finite() {
        return String::new();
    }
    let scale = Scale::new(lo, hi, PAD, WIDTH - PAD);
    let mut out = svg::open("runs", WIDTH, 18.0, &format!("samples of {}", m.key()));
    let _ = write!(
        out,
        "<line class=\"grid\" x1=\"{PAD:.1}\" y1=\"9\" x2=\"{:.1}\" y2=\"9\"/>",
        WIDTH - PAD
    );
    for (i, v) in m.samples.iter().enumerate() {
        let _ = write!(
            out,
            "<circle class=\"run side-base\" cx=\"{:.1}\" cy=\"9\" r=\"3\"><title>sample {}: {}</title></circle>",
            scale.at(*v),
            i + 1,
            num(*v)
        );
    }
    out + "</svg>"
}
