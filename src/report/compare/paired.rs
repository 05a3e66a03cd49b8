//! What the text formats print for a paired comparison (a campaign's two sides): the table
//! of each row's paired estimate, robust estimate and unpaired estimate with which interval
//! is narrower, and the drift, round-order and between-box checks that matter, as lines with
//! their figures. The HTML page and `campaign report` use the same cells and lines.

use super::{grid, sig};
use crate::compare::estimate::{Estimate, Method};
use crate::compare::paired::{Drift, PairedRow};
use crate::compare::{Comparison, Row};

/// `[-4.1% -3.0% -1.9%]` of an estimate.
pub fn estimate_interval(e: &Estimate) -> String {
    let d = if e.upper_pct - e.lower_pct < 0.5 {
        2
    } else {
        1
    };
    let f = |x: f64| {
        if x.is_infinite() {
            "from 0".to_string()
        } else {
            format!("{x:+.d$}%")
        }
    };
    format!("[{} {} {}]", f(e.lower_pct), f(e.point_pct), f(e.upper_pct))
}

/// The paired estimate of a row (the one that labels it), or None.
pub fn paired_estimate(r: &Row) -> Option<&Estimate> {
    r.judgement
        .estimate
        .as_ref()
        .filter(|e| e.method == Method::Paired)
}

/// The unpaired estimate of a row: beside the paired one, or the one that labels it.
pub fn unpaired_estimate(r: &Row) -> Option<&Estimate> {
    match paired_estimate(r) {
        Some(_) => r.judgement.unpaired.as_ref(),
        None => r
            .judgement
            .estimate
            .as_ref()
            .filter(|e| matches!(e.method, Method::Welch | Method::Blocked)),
    }
}

/// The robust cell: `[-4.0% -3.1% -2.0%] at 95.1%`, or the estimate alone with why.
pub fn robust_cell(p: &PairedRow) -> String {
    let Some(r) = &p.robust else {
        return "-".to_string();
    };
    match (r.lower_pct, r.upper_pct, r.achieved) {
        (Some(lo), Some(hi), Some(level)) => {
            let d = if hi - lo < 0.5 { 2 } else { 1 };
            format!(
                "[{lo:+.d$}% {:+.d$}% {hi:+.d$}%] at {:.1}%",
                r.point_pct,
                100.0 * level
            )
        }
        _ => format!("{:+.1}% (too few pairs for an interval)", r.point_pct),
    }
}

/// The header and cells of the paired table.
pub fn table(c: &Comparison) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    c.design.as_ref()?;
    let level = format!("{:.0}%", 100.0 * c.settings.confidence);
    let header: Vec<String> = [
        "paired vs unpaired".to_string(),
        "pairs".to_string(),
        format!("paired {level} CI"),
        "robust (Hodges-Lehmann)".to_string(),
        format!("unpaired {level} CI"),
        "narrower".to_string(),
    ]
    .to_vec();
    let cells = c
        .rows
        .iter()
        .filter_map(|r| {
            let p = r.paired.as_ref()?;
            let mut pairs = p.pairs.to_string();
            if p.left_out.iter().sum::<usize>() > 0 {
                pairs += &format!(" ({}+{} alone)", p.left_out[0], p.left_out[1]);
            }
            Some(vec![
                r.display_name(),
                pairs,
                paired_estimate(r)
                    .map(estimate_interval)
                    .unwrap_or_else(|| "- (too few pairs)".into()),
                robust_cell(p),
                unpaired_estimate(r)
                    .map(estimate_interval)
                    .unwrap_or_else(|| "-".into()),
                p.narrower.map(|n| n.as_str()).unwrap_or("-").to_string(),
            ])
        })
        .collect();
    Some((header, cells))
}

/// What the paired table's columns mean.
pub fn table_note(c: &Comparison) -> String {
    let level = 100.0 * c.settings.confidence;
    format!(
        "Paired: the mean per-round log ratio d = ln(patched/base), t interval over the pairs \
         (pairs − boxes df); it labels the rows. Robust: the Hodges–Lehmann estimate of d with \
         the Wilcoxon signed-rank interval, at the level it achieves (≥ {level:.0}%; none below \
         {} pairs). Unpaired: Welch on the runs of each side (within boxes when there are \
         several), as for runs that are not a campaign's. Narrower: on the log scale. \"alone\": \
         runs of base+patched without a partner in their round, left out of the pairs.",
        min_pairs(c.settings.confidence)
    )
}

/// The paired table as text, with its note and the check lines.
pub fn section(c: &Comparison, markdown: bool) -> String {
    let Some((header, cells)) = table(c) else {
        return String::new();
    };
    let mut s = String::from("\n");
    s += &grid(&header, &cells, markdown);
    s += &table_note(c);
    s.push('\n');
    for line in check_lines(c, false) {
        s += &line;
        s.push('\n');
    }
    s
}

/// The fewest pairs with a signed-rank interval at `confidence`: 1 − 2^(1−n) ≥ confidence.
fn min_pairs(confidence: f64) -> u32 {
    (1.0 - (1.0 - confidence).log2()).ceil().max(1.0) as u32
}

fn drift_text(d: &Drift) -> String {
    format!("{:+.1}% (p={})", d.total_pct, sig(d.p))
}

/// The drift, round-order and between-box lines of a row: the ones that matter, or all of
/// them with `all`.
pub fn row_checks(r: &Row, all: bool) -> Vec<String> {
    let Some(p) = &r.paired else {
        return Vec::new();
    };
    let name = r.display_name();
    let mut out = Vec::new();
    let (b, n) = (&p.drift.base, &p.drift.patched);
    let side_matters =
        b.as_ref().is_some_and(|d| d.matters) || n.as_ref().is_some_and(|d| d.matters);
    if all || side_matters {
        if let (Some(b), Some(n)) = (b, n) {
            out.push(format!(
                "drift: {name}: over the rounds base moved {} and patched {}{}",
                drift_text(b),
                drift_text(n),
                if side_matters {
                    "; what both share cancels in the pairs, which is why the paired interval \
                     is the one to read"
                } else {
                    ""
                }
            ));
        }
    }
    if let Some(d) = &p.drift.ratio {
        if all || d.matters {
            out.push(format!(
                "drift of the change: {name}: the per-round ratio moved {} over the rounds{}",
                drift_text(d),
                if d.matters {
                    "; the change is not steady (thermal state, an update, a neighbour?): an \
                     average describes no single round"
                } else {
                    ""
                }
            ));
        }
    }
    if let Some(o) = &p.order {
        if all || o.matters {
            out.push(format!(
                "round order: {name}: the ratio is {:+.1}% [{:+.1}% {:+.1}%] when patched ran \
                 first ({} rounds) against base first ({}) (p={}){}",
                o.difference_pct,
                o.lower_pct,
                o.upper_pct,
                o.patched_first,
                o.base_first,
                sig(o.p),
                if o.matters {
                    "; running first or second matters: keep the order random or balanced \
                     (--order abba), and settle between steps"
                } else {
                    ""
                }
            ));
        }
    } else if all {
        out.push(format!(
            "round order: {name}: not checked (it needs 2 rounds each way)"
        ));
    }
    if let Some(s) = &p.between_boxes {
        if all || s.p < crate::compare::paired::NOTE_P {
            out.push(format!(
                "between boxes: {name}: {:.0}% of the spread of a run's value is the box it ran \
                 on (sd {:.2}% between boxes, {:.2}% within; F p={}); the pairs are within box, \
                 so it does not enter the paired interval",
                100.0 * s.share,
                100.0 * s.between_sd,
                100.0 * s.within_sd,
                sig(s.p)
            ));
        }
    }
    out
}

/// The check lines of every row (those that matter, or all with `all`).
pub fn check_lines(c: &Comparison, all: bool) -> Vec<String> {
    c.rows.iter().flat_map(|r| row_checks(r, all)).collect()
}
