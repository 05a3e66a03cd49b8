//! The SVG plot of `scale --svg`: for every testcase, ops/s against tasks with one line per mode
//! and the linear (perfect scaling) line, as will-it-scale's postprocess.py draws them, one
//! panel under another. Drawn with the report's own kit (`crate::report::svg`), as a
//! standalone file: its colours are in its own `<style>`, and each point's tooltip gives its
//! value.

use crate::report::scale::{Curve, Row};
use crate::report::svg::{self, esc, Scale};
use anyhow::Result;
use std::fmt::Write;

const W: f64 = 800.0;
const PANEL_H: f64 = 420.0;
const LEFT: f64 = 84.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 44.0;
const BOTTOM: f64 = 52.0;

/// A line of a panel: its name (also its CSS class) and the column it draws.
type Series = (&'static str, fn(&Row) -> Option<f64>);

/// The lines of a panel.
const SERIES: [Series; 3] = [
    ("processes", |r| r.processes),
    ("threads", |r| r.threads),
    ("linear", |r| r.linear),
];

/// The colours and text of the standalone file.
const STYLE: &str = "<style>\
    .axis,.tick{stroke:#333;stroke-width:1}\
    .tick-label,.axis-label{font:12px sans-serif;fill:#333}\
    .caption{font:bold 16px sans-serif;fill:#111}\
    .legend{font:13px sans-serif;fill:#111}\
    .processes{stroke:#1f77b4;fill:#1f77b4}\
    .threads{stroke:#d62728;fill:#d62728}\
    .linear{stroke:#969696;fill:#969696}\
    polyline{fill:none;stroke-width:2}\
    </style>";

/// The plot of every curve, one panel under another, as SVG text.
pub fn svg(curves: &[Curve]) -> Result<String> {
    let height = PANEL_H * curves.len().max(1) as f64;
    let mut out = svg::open(
        "scale",
        W,
        height,
        "will-it-scale: operations per second against tasks",
    );
    out = out.replacen("<svg ", "<svg xmlns=\"http://www.w3.org/2000/svg\" ", 1);
    out.push_str(STYLE);
    let _ = write!(
        out,
        "<rect width=\"{W:.0}\" height=\"{height:.0}\" fill=\"white\"/>"
    );
    for (i, curve) in curves.iter().enumerate() {
        panel(&mut out, curve, i as f64 * PANEL_H);
    }
    out.push_str("</svg>\n");
    Ok(out)
}

/// One testcase's panel, its top at `y0`.
fn panel(out: &mut String, curve: &Curve, y0: f64) {
    let lines: Vec<(&str, Vec<(f64, f64)>)> = SERIES
        .iter()
        .map(|(name, f)| (*name, line(curve, f)))
        .collect();
    let max_x = curve.rows.iter().map(|r| r.tasks).max().unwrap_or(1).max(1) as f64;
    let max_y = lines
        .iter()
        .flat_map(|(_, pts)| pts.iter().map(|p| p.1))
        .fold(1.0f64, f64::max)
        * 1.1;
    let x = Scale::new(0.0, max_x * 1.04, LEFT, W - RIGHT);
    let y = Scale::new(0.0, max_y, y0 + PANEL_H - BOTTOM, y0 + TOP);
    let _ = write!(
        out,
        "<text class=\"caption\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}: {}</text>",
        W / 2.0,
        y0 + 24.0,
        esc(&curve.test),
        esc(&curve.description)
    );
    let x_ticks: Vec<f64> = svg::ticks(0.0, max_x, (max_x as usize).clamp(1, 16))
        .into_iter()
        .filter(|t| t.fract() == 0.0)
        .collect();
    svg::x_axis(out, &x, y.r0, &x_ticks, "");
    svg::y_axis(out, &y, x.r0, &svg::ticks(0.0, max_y, 6));
    let _ = write!(
        out,
        "<text class=\"axis-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">tasks</text>\
         <text class=\"axis-label\" transform=\"translate({:.1},{:.1}) rotate(-90)\" \
         text-anchor=\"middle\">operations per second</text>",
        (x.r0 + x.r1) / 2.0,
        y.r0 + 40.0,
        LEFT - 60.0,
        (y.r0 + y.r1) / 2.0
    );
    let mut legend = 0;
    for (name, pts) in &lines {
        let class = name;
        if pts.len() < 2 {
            continue;
        }
        let path: Vec<String> = pts
            .iter()
            .map(|(px, py)| format!("{:.1},{:.1}", x.at(*px), y.at(*py)))
            .collect();
        let _ = write!(
            out,
            "<polyline class=\"{class}\" points=\"{}\"/>",
            path.join(" ")
        );
        for (px, py) in pts.iter().skip(1) {
            let _ = write!(
                out,
                "<circle class=\"{class}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\">\
                 <title>{name}, {px:.0} tasks: {py:.0} ops/s</title></circle>",
                x.at(*px),
                y.at(*py)
            );
        }
        let ly = y0 + TOP + 8.0 + 18.0 * legend as f64;
        let _ = write!(
            out,
            "<line class=\"{class}\" x1=\"{:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" \
             stroke-width=\"2\"/><text class=\"legend\" x=\"{:.1}\" y=\"{:.1}\">{name}</text>",
            LEFT + 12.0,
            LEFT + 32.0,
            LEFT + 38.0,
            ly + 4.0
        );
        legend += 1;
    }
}

/// The (tasks, value) points of one column, starting from will-it-scale's (0, 0).
fn line(curve: &Curve, f: impl Fn(&Row) -> Option<f64>) -> Vec<(f64, f64)> {
    let pts: Vec<(f64, f64)> = curve
        .rows
        .iter()
        .filter_map(|r| f(r).map(|v| (r.tasks as f64, v)))
        .collect();
    if pts.is_empty() {
        return pts;
    }
    std::iter::once((0.0, 0.0)).chain(pts).collect()
}

/// The plot of a record, or None before its first point.
pub fn svg_of(record: &crate::record::RunRecord) -> Result<Option<Vec<u8>>> {
    let points = crate::report::scale::points(record);
    if points.is_empty() {
        return Ok(None);
    }
    svg(&crate::report::scale::curves(points)).map(|s| Some(s.into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve() -> Curve {
        let row = |tasks: usize, p: f64, t: f64| Row {
            tasks,
            processes: Some(p),
            processes_idle: None,
            threads: Some(t),
            threads_idle: None,
            linear: Some(1000.0 * tasks as f64),
        };
        Curve {
            test: "getppid1".to_string(),
            description: "getppid <&> loop".to_string(),
            rows: vec![row(1, 1000.0, 990.0), row(2, 1900.0, 1950.0)],
            one_task: Some(1000.0),
        }
    }

    #[test]
    fn every_mode_is_a_line_with_its_points_and_text_is_escaped() {
        let text = svg(&[curve(), curve()]).unwrap();
        assert!(text.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(text.trim_end().ends_with("</svg>"));
        assert_eq!(
            text.matches("<polyline").count(),
            6,
            "3 lines in each of 2 panels"
        );
        assert_eq!(text.matches("<circle").count(), 12, "2 points a line");
        assert!(text.contains("getppid1: getppid &lt;&amp;&gt; loop"));
        assert!(text.contains("<title>threads, 2 tasks: 1950 ops/s</title>"));
        assert!(text.contains("height=\"840\""));
    }
}
