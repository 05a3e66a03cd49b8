//! The LKP robot's table (comparison.md §4): base mean with `± N%` (population stddev, shown
//! only above 2 %), `%change`, patched mean with its `± N%`, then the metric. After the name
//! we add what the robot lacks: the interval, p, q and runs, and the label.

use super::{interval, stat_note, verdict, verdict_paint};
use crate::compare::{Comparison, SideStats};

pub fn render(c: &Comparison, color: bool) -> String {
    let mut out = format!(
        "{:<16} {}\n---------------- ---------------------------\n",
        clip(&c.base, 16),
        clip(&c.patched, 27)
    );
    out += "         %stddev     %change         %stddev\n";
    out += "             \\          |                \\  \n";
    for r in &c.rows {
        out += &format!(
            "{:>10}{:6}{:>11}{:>11}{:6}  {}  {} {} {}\n",
            value(&r.base),
            stddev(&r.base),
            r.change_pct
                .map(|v| format!("{v:+.1}%"))
                .unwrap_or_default(),
            value(&r.patched),
            stddev(&r.patched),
            r.key,
            interval(r),
            stat_note(r),
            crate::report::color::paint(&verdict(r), verdict_paint(r, color)),
        );
    }
    out
}

fn clip(s: &str, w: usize) -> String {
    s.chars().take(w).collect()
}

/// LKP's number format: 2 decimals below 1000, `%.4g` above 1e8, integers otherwise.
fn value(s: &Option<SideStats>) -> String {
    let Some(x) = s else { return String::new() };
    let v = x.mean;
    if v.abs() < 1000.0 {
        format!("{v:.2}")
    } else if v.abs() > 1e8 {
        let e = v.abs().log10().floor() as i32;
        format!("{:.3}e+{e:02}", v / 10f64.powi(e))
    } else {
        format!("{v:.0}")
    }
}

fn stddev(s: &Option<SideStats>) -> String {
    match s.as_ref().and_then(|x| x.pop_stddev_pct) {
        Some(p) if p > 2.0 => format!(" ±{p:3.0}%"),
        _ => String::new(),
    }
}
