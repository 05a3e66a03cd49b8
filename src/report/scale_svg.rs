//! The SVG plot: for every testcase, ops/s against tasks with one line per mode and the linear
//! (perfect scaling) line, as will-it-scale's postprocess.py draws them.

use crate::report::scale::{Curve, Row};
use anyhow::{anyhow, Result};
use plotters::prelude::*;

const PANEL: (u32, u32) = (800, 420);

/// The plot of every curve, one panel under another, as SVG text.
pub fn svg(curves: &[Curve]) -> Result<String> {
    let mut text = String::new();
    {
        let size = (PANEL.0, PANEL.1 * curves.len().max(1) as u32);
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow!("plot: {e}"))?;
        let panels = root.split_evenly((curves.len().max(1), 1));
        for (curve, area) in curves.iter().zip(panels.iter()) {
            draw_curve(curve, area).map_err(|e| anyhow!("plot of {}: {e}", curve.test))?;
        }
        root.present().map_err(|e| anyhow!("plot: {e}"))?;
    }
    Ok(text)
}

/// A line's name, colour and points.
type Series = (&'static str, RGBColor, Vec<(f64, f64)>);

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn draw_curve(curve: &Curve, area: &Area<'_>) -> Result<(), Box<dyn std::error::Error>> {
    let series: [Series; 3] = [
        (
            "processes",
            RGBColor(31, 119, 180),
            line(curve, |r| r.processes),
        ),
        ("threads", RGBColor(214, 39, 40), line(curve, |r| r.threads)),
        ("linear", RGBColor(150, 150, 150), line(curve, |r| r.linear)),
    ];
    let max_x = curve.rows.iter().map(|r| r.tasks).max().unwrap_or(1) as f64;
    let max_y = series
        .iter()
        .flat_map(|(_, _, pts)| pts.iter().map(|p| p.1))
        .fold(1.0f64, f64::max)
        * 1.1;
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("{}: {}", curve.test, curve.description),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..max_x * 1.04, 0f64..max_y)?;
    chart
        .configure_mesh()
        .x_desc("tasks")
        .x_labels((max_x as usize + 1).min(17))
        .x_label_formatter(&|v| format!("{v:.0}"))
        .light_line_style(WHITE)
        .y_desc("operations per second")
        .y_label_formatter(&|v| si(*v))
        .draw()?;
    for (name, color, pts) in series {
        if pts.len() < 2 {
            continue;
        }
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart.draw_series(pts.iter().map(|p| Circle::new(*p, 3, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    Ok(())
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

/// A rate with an SI suffix for axis labels: 950, 12.5k, 8.4M, 1.2G.
fn si(v: f64) -> String {
    let a = v.abs();
    let (div, suffix) = if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let x = v / div;
    if x.fract().abs() < 1e-9 {
        format!("{x:.0}{suffix}")
    } else {
        format!("{x:.1}{suffix}")
    }
}

#[cfg(test)]
mod tests {
    use super::si;

    #[test]
    fn axis_labels_use_si_suffixes() {
        assert_eq!(si(0.0), "0");
        assert_eq!(si(950.0), "950");
        assert_eq!(si(12_500.0), "12.5k");
        assert_eq!(si(8_000_000.0), "8M");
        assert_eq!(si(8_400_000.0), "8.4M");
        assert_eq!(si(1.2e9), "1.2G");
    }
}
