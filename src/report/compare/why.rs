//! The second table of every comparison, "what changed with it": the monitor rows
//! (`crate::record::monitors`) whose change the comparison found, largest first, each with
//! its runs, means, change, interval and p and q (q over the monitor rows alone). Shares and
//! percentages change in points, as LKP prints `perf-profile` shares; counts in %. The rows
//! with too few events to judge (`crate::compare::floors`) are not judged: the human formats
//! count them on one line by family, JSON and CSV list each with verdict `too few`.

use super::{grid, interval, mean, n, pq};
use crate::compare::verdict::Verdict;
use crate::compare::{Comparison, Row};
use crate::record::monitors::is_share;
use std::collections::BTreeMap;

/// The rows the human formats show: the changed ones, at most the settings' `why_rows`.
pub fn shown(c: &Comparison) -> Vec<&Row> {
    let limit = c.settings.why_rows.unwrap_or(usize::MAX);
    c.why
        .iter()
        .filter(|r| r.judgement.verdict.is_flag())
        .take(limit)
        .collect()
}

/// Monitor rows that vary and were judged (not too few events).
pub fn judged(c: &Comparison) -> usize {
    c.why.len() - c.why_family.too_few
}

/// The line that says which rows had too few events to judge, by family
/// ("12 rows with too few events here, not judged: interrupts.* 9, softirqs.* 3"); None when
/// there are none.
pub fn too_few_line(c: &Comparison) -> Option<String> {
    let mut families: BTreeMap<String, usize> = BTreeMap::new();
    for r in c
        .why
        .iter()
        .filter(|r| r.judgement.verdict == Verdict::TooFew)
    {
        let family = r.name.split('.').next().unwrap_or(&r.name);
        *families.entry(format!("{family}.*")).or_default() += 1;
    }
    let total: usize = families.values().sum();
    (total > 0).then(|| {
        let each: Vec<String> = families.iter().map(|(f, k)| format!("{f} {k}")).collect();
        format!(
            "{total} row{} with too few events here, not judged (below the floors of docs/\
             compare.md; `--format json` lists them): {}",
            if total == 1 { "" } else { "s" },
            each.join(", ")
        )
    })
}

/// The change as the second table shows it: points for a share, % otherwise.
pub fn change(r: &Row) -> String {
    match (&r.base, &r.patched) {
        (Some(b), Some(p)) if is_share(&r.name, &r.unit) => {
            format!("{:+.2} pt", p.mean - b.mean)
        }
        _ => super::pct(r.change_pct, 1),
    }
}

/// "higher" or "lower": a monitor row has no better or worse direction.
pub fn which_way(r: &Row) -> &'static str {
    match r.judgement.estimate.as_ref().map(|e| e.point_pct) {
        Some(p) if p > 0.0 => "higher",
        Some(_) => "lower",
        None => "",
    }
}

/// The section for the text formats (`markdown`: a Markdown table), empty when the
/// comparison has no monitor rows (runs of earlier builds or `--no-monitors`).
pub fn text(c: &Comparison, markdown: bool) -> String {
    if c.why.is_empty() {
        return String::new();
    }
    let changed = c.why_family.flagged;
    let rows = shown(c);
    let mut s = format!(
        "\nWhat changed with it: {changed} of {} monitor rows that vary changed (q < {} over \
         the monitor rows alone; expected false ones at most {:.1})\n",
        judged(c),
        c.why_family.alpha,
        c.why_family.expected_false
    );
    if let Some(line) = too_few_line(c) {
        s += &line;
        s.push('\n');
    }
    if rows.is_empty() {
        return s;
    }
    let header: Vec<String> = [
        "monitor", "unit", "n", &c.base, "n", &c.patched, "change", "interval", "p, q", "",
    ]
    .iter()
    .map(|h| h.to_string())
    .collect();
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.display_name(),
                r.unit.clone(),
                n(&r.base),
                mean(&r.base),
                n(&r.patched),
                mean(&r.patched),
                change(r),
                interval(r),
                pq(r),
                which_way(r).to_string(),
            ]
        })
        .collect();
    s += &grid(&header, &cells, markdown);
    if changed > rows.len() {
        s += &format!(
            "({} more changed; `--why all` shows them, `--format json` has every row)\n",
            changed - rows.len()
        );
    }
    s
}
