//! The simple formats: `inline` (one line per metric, `+3.3% (15431 -> 15936)`, for mail and
//! commit messages), `markdown` (a review-ready table) and `csv` (one row per metric).

use super::{grid, mean, n, pct, spread, verdict};
use crate::compare::{Comparison, SideStats};

pub fn inline(c: &Comparison) -> String {
    let mut out = String::new();
    for r in &c.rows {
        out += &format!(
            "{}: {} ({} -> {}) n={}/{} {}/{} {}\n",
            r.display_name(),
            pct(r.change_pct, 1),
            mean(&r.base),
            mean(&r.patched),
            n(&r.base),
            n(&r.patched),
            spread(&r.base),
            spread(&r.patched),
            verdict(r),
        );
    }
    out
}

pub fn markdown(c: &Comparison) -> String {
    let header: Vec<String> = [
        "metric", "unit", "n", &c.base, "±", "n", &c.patched, "±", "change", "verdict",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let rows: Vec<Vec<String>> = c
        .rows
        .iter()
        .map(|r| {
            vec![
                r.display_name(),
                r.unit.clone(),
                n(&r.base),
                mean(&r.base),
                spread(&r.base),
                n(&r.patched),
                mean(&r.patched),
                spread(&r.patched),
                pct(r.change_pct, 2),
                verdict(r),
            ]
        })
        .collect();
    grid(&header, &rows, true)
}

pub fn csv(c: &Comparison) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "key",
        "title",
        "unit",
        "direction",
        "base_n",
        "base_mean",
        "base_stddev_pct",
        "patched_n",
        "patched_mean",
        "patched_stddev_pct",
        "change_pct",
        "ci_low_pct",
        "ci_high_pct",
        "p_value",
        "verdict",
        "samples",
    ])?;
    let f = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    let side = |s: &Option<SideStats>| {
        (
            s.as_ref().map(|x| x.n).unwrap_or(0).to_string(),
            f(s.as_ref().map(|x| x.mean)),
            f(s.as_ref().and_then(|x| x.stddev_pct)),
        )
    };
    for r in &c.rows {
        let (bn, bm, bs) = side(&r.base);
        let (pn, pm, ps) = side(&r.patched);
        let ci = r.judgement.ci;
        w.write_record([
            r.key.clone(),
            r.title.clone(),
            r.unit.clone(),
            serde_json::to_value(r.direction)?
                .as_str()
                .unwrap_or_default()
                .to_string(),
            bn,
            bm,
            bs,
            pn,
            pm,
            ps,
            f(r.change_pct),
            f(ci.map(|c| 100.0 * c.lower)),
            f(ci.map(|c| 100.0 * c.upper)),
            f(r.judgement.p_value),
            r.judgement.verdict.as_str().to_string(),
            serde_json::to_value(r.source)?
                .as_str()
                .unwrap_or_default()
                .to_string(),
        ])?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
