//! The page's second table, "what changed with it": the monitor rows the comparison found
//! changed (as `crate::report::compare::why` chooses them), each with its figures and a
//! diverging bar of its change (log scale, left lower, right higher, scaled to the largest
//! change shown).

use crate::compare::Comparison;
use crate::report::compare as text;
use crate::report::compare::why;
use crate::report::svg::esc;

/// The section's HTML (a note when nothing changed or there are no monitor rows).
pub fn section(c: &Comparison) -> String {
    if c.why.is_empty() {
        return "<p>These runs carry no monitor rows (recorded with <code>--no-monitors</code> \
                or by an earlier patchbench).</p>"
            .to_string();
    }
    let rows = why::shown(c);
    let mut s = format!(
        "<p>{} of {} monitor rows that vary changed (q &lt; {} over the monitor rows alone).</p>",
        c.why_family.flagged,
        why::judged(c),
        c.why_family.alpha
    );
    if let Some(line) = why::too_few_line(c) {
        s += &format!("<p>{}</p>", esc(&line));
    }
    if rows.is_empty() {
        return s;
    }
    let size = |r: &crate::compare::Row| {
        r.judgement
            .estimate
            .as_ref()
            .map(|e| (e.point_pct / 100.0).ln_1p())
            .filter(|v| v.is_finite())
    };
    let largest = rows
        .iter()
        .filter_map(|r| size(r))
        .fold(0.0f64, |m, v| m.max(v.abs()))
        .max(1e-9);
    s += "<table><thead><tr><th>monitor</th><th>unit</th><th>n</th><th>";
    s += &esc(&c.base);
    s += "</th><th>n</th><th>";
    s += &esc(&c.patched);
    s += "</th><th>change</th><th>interval</th><th>p, q</th><th>lower ◂ ▸ higher</th></tr></thead><tbody>";
    for r in rows {
        let bar = match size(r) {
            Some(v) => {
                let w = 60.0 * v.abs() / largest;
                let x = if v < 0.0 { 60.0 - w } else { 60.0 };
                let fill = if v < 0.0 { "#3b6fb6" } else { "#c0504d" };
                format!(
                    "<svg width=\"120\" height=\"12\" role=\"img\"><rect x=\"{x:.1}\" y=\"1\" \
                     width=\"{w:.1}\" height=\"10\" fill=\"{fill}\"/><line x1=\"60\" x2=\"60\" \
                     y1=\"0\" y2=\"12\" stroke=\"#333\"/></svg>"
                )
            }
            None => String::new(),
        };
        s += &format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{bar}</td></tr>",
            esc(&r.display_name()),
            esc(&r.unit),
            esc(&text::n(&r.base)),
            esc(&text::mean(&r.base)),
            esc(&text::n(&r.patched)),
            esc(&text::mean(&r.patched)),
            esc(&why::change(r)),
            esc(&text::interval(r)),
            esc(&text::pq(r)),
        );
    }
    s + "</tbody></table>"
}
