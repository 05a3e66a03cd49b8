//! The rounds of a paired comparison as text, for `campaign report`: per chosen row, every
//! round with its order, the base value, the patched value and their ratio, then the drift,
//! round-order and between-box checks with their figures (all of them, not only those that
//! matter). It prints what `crate::compare` computed; it decides nothing.

use crate::compare::{Comparison, Row};
use crate::report::compare::{grid, num, paired};

/// The rows to show: those whose key is in `keys`; with no keys, the primary rows, else the
/// first paired row.
fn chosen<'a>(c: &'a Comparison, keys: &[&str]) -> Vec<&'a Row> {
    let paired: Vec<&Row> = c.rows.iter().filter(|r| r.paired.is_some()).collect();
    if !keys.is_empty() {
        return paired
            .into_iter()
            .filter(|r| keys.contains(&r.key.as_str()))
            .collect();
    }
    let primary: Vec<&Row> = paired.iter().copied().filter(|r| r.primary).collect();
    if primary.is_empty() {
        paired.into_iter().take(1).collect()
    } else {
        primary
    }
}

/// The rounds and checks of the rows `keys` (see [`chosen`]), or one line saying why there
/// are none.
pub fn render(c: &Comparison, keys: &[&str]) -> String {
    if c.design.is_none() {
        return "rounds: this comparison is not paired (its sides are not the two sides of one \
                campaign), so it has no rounds\n"
            .to_string();
    }
    let rows = chosen(c, keys);
    if rows.is_empty() {
        return format!(
            "rounds: no paired row{} (rows: {})\n",
            if keys.is_empty() {
                String::new()
            } else {
                format!(" named {}", keys.join(", "))
            },
            c.rows
                .iter()
                .map(|r| r.key.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut out = String::new();
    for r in rows {
        out += &rounds(c, r);
        out.push('\n');
    }
    out
}

/// One row's rounds and checks.
fn rounds(c: &Comparison, r: &Row) -> String {
    let Some(p) = &r.paired else {
        return String::new();
    };
    let boxes = p.rounds.iter().any(|x| !x.r#box.is_empty());
    let mut header = Vec::new();
    if boxes {
        header.push("box".to_string());
    }
    header.extend(
        [
            "round",
            "order",
            c.base.as_str(),
            c.patched.as_str(),
            "ratio",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let cells: Vec<Vec<String>> = p
        .rounds
        .iter()
        .map(|x| {
            let mut row = Vec::new();
            if boxes {
                row.push(x.r#box.clone());
            }
            row.extend([
                x.round.to_string(),
                x.first.as_str().to_string(),
                num(x.base),
                num(x.patched),
                format!("{:+.2}%", x.ratio_pct),
            ]);
            row
        })
        .collect();
    let mut s = format!(
        "{} ({}): {} pairs{}\n",
        r.display_name(),
        r.unit,
        p.pairs,
        if p.left_out.iter().sum::<usize>() > 0 {
            format!(
                ", {} base and {} patched run(s) without a partner left out",
                p.left_out[0], p.left_out[1]
            )
        } else {
            String::new()
        }
    );
    s += &grid(&header, &cells, false);
    let level = format!("{:.0}%", 100.0 * c.settings.confidence);
    s += &format!(
        "paired {level}: {}; robust: {}; unpaired {level}: {}; narrower: {}; verdict: {}\n",
        paired::paired_estimate(r)
            .map(paired::estimate_interval)
            .unwrap_or_else(|| "- (too few pairs)".into()),
        paired::robust_cell(p),
        paired::unpaired_estimate(r)
            .map(paired::estimate_interval)
            .unwrap_or_else(|| "-".into()),
        p.narrower.map(|n| n.as_str()).unwrap_or("-"),
        r.judgement.verdict.as_str()
    );
    for line in paired::row_checks(r, true) {
        s += &line;
        s.push('\n');
    }
    s
}
