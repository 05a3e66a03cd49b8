//! The simple formats: `inline` (one line per metric, `+3.3% (15431 -> 15936)`, for mail and
//! commit messages), `markdown` (a review-ready table) and `csv` (one row per metric, every
//! figure the comparison computed). Every CSV cell is neutralised for spreadsheets
//! (`crate::safe_text::csv_cell`).

use super::{
    ci_header, interval, mean, n, painted_grid, pct, pq, spread, stat_note, verdict, verdict_paint,
};
use crate::compare::model::Level;
use crate::compare::{Comparison, SideStats};

pub fn inline(c: &Comparison, color: bool) -> String {
    let mut out = String::new();
    for r in &c.rows {
        out += &format!(
            "{}: {} ({} -> {}) {} {} {}/{} {}\n",
            r.display_name(),
            pct(r.change_pct, 1),
            mean(&r.base),
            mean(&r.patched),
            interval(r),
            stat_note(r),
            spread(&r.base),
            spread(&r.patched),
            crate::report::color::paint(&verdict(r), verdict_paint(r, color)),
        );
    }
    out
}

pub fn markdown(c: &Comparison, color: bool) -> String {
    let ci = ci_header(c);
    let header: Vec<String> = [
        "metric", "unit", "n", &c.base, "±", "n", &c.patched, "±", "change", &ci, "p, q", "verdict",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let rows: Vec<Vec<String>> = c
        .rows
        .iter()
        .map(|r| {
            vec![
                if r.primary {
                    format!("**{}**", r.display_name())
                } else {
                    r.display_name()
                },
                r.unit.clone(),
                n(&r.base),
                mean(&r.base),
                spread(&r.base),
                n(&r.patched),
                mean(&r.patched),
                spread(&r.patched),
                pct(r.change_pct, 2),
                interval(r),
                pq(r),
                verdict(r),
            ]
        })
        .collect();
    let paints: Vec<_> = c.rows.iter().map(|r| verdict_paint(r, color)).collect();
    painted_grid(&header, &rows, true, &paints)
}

pub fn csv(c: &Comparison) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = [
        "key",
        "title",
        "unit",
        "direction",
        "primary",
        "base_n",
        "base_mean",
        "base_stddev_pct",
        "patched_n",
        "patched_mean",
        "patched_stddev_pct",
        "change_pct",
        "confidence",
        "ci_low_pct",
        "ci_point_pct",
        "ci_high_pct",
        "p_value",
        "q_value",
        "holm_p",
        "df",
        "verdict",
        "note",
        "between_run_pct",
        "within_run_pct",
        "samples_per_run",
        "dominates",
        "mde_pct",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for t in &c.settings.plan_pct {
        header.push(format!("runs_for_{t}pct"));
        header.push(format!("runs_for_{t}pct_at_noise_pct"));
    }
    w.write_record(
        header
            .iter()
            .map(|c| crate::safe_text::csv_cell(c).into_owned()),
    )?;
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
        let e = r.judgement.estimate.as_ref();
        let sens = r.sensitivity.as_ref();
        let mut record = vec![
            r.key.clone(),
            r.title.clone(),
            r.unit.clone(),
            serde_json::to_value(r.direction)?
                .as_str()
                .unwrap_or_default()
                .to_string(),
            r.primary.to_string(),
            bn,
            bm,
            bs,
            pn,
            pm,
            ps,
            f(r.change_pct),
            c.settings.confidence.to_string(),
            f(e.map(|e| e.lower_pct)),
            f(e.map(|e| e.point_pct)),
            f(e.map(|e| e.upper_pct)),
            f(e.map(|e| e.p)),
            f(e.map(|e| e.q)),
            f(e.map(|e| e.holm)),
            f(e.map(|e| e.df)),
            r.judgement.verdict.as_str().to_string(),
            super::row_note(r).unwrap_or_default(),
            f(sens
                .filter(|s| s.spread_from == "runs")
                .map(|s| s.spread_pct)
                .or(r.spread.between_pct)),
            f(r.spread.within_pct),
            f(r.spread.samples_per_run),
            match r.spread.dominates {
                Some(Level::BetweenRuns) => "between-runs".to_string(),
                Some(Level::WithinRuns) => "within-runs".to_string(),
                None => String::new(),
            },
            f(sens.and_then(|s| s.mde_pct)),
        ];
        for i in 0..c.settings.plan_pct.len() {
            let p = sens.and_then(|s| s.plan.get(i));
            record.push(
                p.and_then(|p| p.runs)
                    .map(|n| n.to_string())
                    .unwrap_or_default(),
            );
            record.push(f(p.map(|p| p.band_pct)));
        }
        w.write_record(
            record
                .iter()
                .map(|c| crate::safe_text::csv_cell(c).into_owned()),
        )?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
