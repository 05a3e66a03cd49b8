//! The two profiles side by side: for each profiled unit (a test at a copy count, a load
//! point, a task count) and each of self and children, the symbols with the largest share on
//! each side, as two ranked columns with bars on one scale. A symbol that is in one side's
//! list and not the other's is marked, so a path one kernel takes and the other does not
//! stands out. The shares are the sides' means over their runs (`compare`'s monitor rows
//! `perf-profile.{self,children}.<event>.<symbol>`, a symbol a profiled run left out counting
//! 0 %, `crate::compare::absent_shares`).

use crate::compare::{Comparison, Row};
use crate::report::svg::esc;
use std::collections::BTreeMap;

/// Symbols listed per side.
const TOP: usize = 20;

/// Characters of a symbol shown.
const NAME_CHARS: usize = 48;

/// One list: (symbol, share in %), largest first.
type Ranked<'a> = Vec<(&'a str, f64)>;

/// (unit title, kind, event) -> its rows as (symbol, row).
type Groups<'a> = BTreeMap<(String, &'a str, &'a str), Vec<(&'a str, &'a Row)>>;

/// The section's HTML, or None when neither side has a profile.
pub fn section(c: &Comparison) -> Option<String> {
    let mut groups: Groups = BTreeMap::new();
    for r in &c.why {
        let Some(rest) = r.name.strip_prefix("perf-profile.") else {
            continue;
        };
        let mut parts = rest.splitn(3, '.');
        let (Some(kind), Some(event), Some(symbol)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        groups
            .entry((unit_title(r), kind, event))
            .or_default()
            .push((symbol, r));
    }
    if groups.is_empty() {
        return None;
    }
    let mut s = format!(
        "<p>The top {TOP} symbols of each side's profile by share of the samples (mean over \
         its runs); <b>bold</b>: not in the other side's list.</p>"
    );
    for ((unit, kind, event), rows) in &groups {
        let base = ranked(rows, |r| r.base.as_ref().map(|b| b.mean));
        let patched = ranked(rows, |r| r.patched.as_ref().map(|p| p.mean));
        let largest = base
            .iter()
            .chain(&patched)
            .map(|(_, v)| *v)
            .fold(0.0f64, f64::max)
            .max(1e-9);
        s += &format!(
            "<h3>{} · {} · {}</h3><table class=\"profiles\"><thead><tr><th>{}</th><th>%</th>\
             <th></th><th>{}</th><th>%</th><th></th></tr></thead><tbody>",
            esc(unit),
            esc(kind),
            esc(event),
            esc(&c.base),
            esc(&c.patched)
        );
        for i in 0..base.len().max(patched.len()) {
            s += "<tr>";
            for (list, other) in [(&base, &patched), (&patched, &base)] {
                s += &cell(list.get(i), other, largest);
            }
            s += "</tr>";
        }
        s += "</tbody></table>";
    }
    Some(s)
}

/// What a row's unit is called: its title's part in brackets, else its params.
fn unit_title(r: &Row) -> String {
    match (r.title.find(" ("), r.title.ends_with(')')) {
        (Some(i), true) => r.title[i + 2..r.title.len() - 1].to_string(),
        _ => r
            .params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// A side's symbols above 0 %, largest first, at most [`TOP`].
fn ranked<'a>(rows: &[(&'a str, &Row)], mean: impl Fn(&Row) -> Option<f64>) -> Ranked<'a> {
    let mut out: Ranked<'a> = rows
        .iter()
        .filter_map(|(s, r)| mean(r).filter(|m| *m > 0.0).map(|m| (*s, m)))
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    out.truncate(TOP);
    out
}

/// A symbol's three cells: its name (bold when the other list lacks it), share and bar.
fn cell(entry: Option<&(&str, f64)>, other: &Ranked<'_>, largest: f64) -> String {
    let Some((symbol, share)) = entry else {
        return "<td></td><td></td><td></td>".into();
    };
    // A long (Rust, C++) name is cut, whole in its tooltip.
    let shown: String = if symbol.chars().count() > NAME_CHARS {
        symbol.chars().take(NAME_CHARS - 1).chain(['…']).collect()
    } else {
        symbol.to_string()
    };
    let name = if other.iter().any(|(s, _)| s == symbol) {
        esc(&shown)
    } else {
        format!("<b>{}</b>", esc(&shown))
    };
    let w = 100.0 * share / largest;
    format!(
        "<td title=\"{}\"><code>{name}</code></td><td>{share:.1}</td><td><svg width=\"100\" height=\"10\" \
         role=\"img\"><rect x=\"0\" y=\"1\" width=\"{w:.1}\" height=\"8\" fill=\"#6b8e23\"/>\
         </svg></td>",
        esc(symbol)
    )
}
