//! The simple formats: `inline` (one line per metric, `+3.3% (15431 -> 15936)`, for mail and
//! commit messages), `markdown` (a review-ready table) and `csv` (one row per metric, every
//! figure the comparison computed). A paired row's inline line ends with its unpaired
//! interval and which is narrower; csv has columns for the paired design. Every CSV cell is
//! neutralised for spreadsheets (`crate::safe_text::csv_cell`).

use super::{
    ci_header, interval, mean, n, painted_grid, paired, pct, pq, spread, stat_note, verdict,
    verdict_paint,
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
        if let (Some(_), Some(p)) = (paired::paired_estimate(r), &r.paired) {
            out.pop();
            out += &format!(
                "; paired, unpaired {}{}\n",
                paired::unpaired_estimate(r)
                    .map(paired::estimate_interval)
                    .unwrap_or_else(|| "-".into()),
                p.narrower
                    .map(|n| format!(", {} narrower", n.as_str()))
                    .unwrap_or_default()
            );
        }
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
    header.extend(
        [
            "method",
            "plan_unit",
            "pairs",
            "base_alone",
            "patched_alone",
            "unpaired_method",
            "unpaired_ci_low_pct",
            "unpaired_ci_point_pct",
            "unpaired_ci_high_pct",
            "unpaired_p_value",
            "robust_low_pct",
            "robust_point_pct",
            "robust_high_pct",
            "robust_level",
            "narrower",
            "drift_base_pct",
            "drift_base_p",
            "drift_patched_pct",
            "drift_patched_p",
            "drift_ratio_pct",
            "drift_ratio_p",
            "order_effect_pct",
            "order_effect_p",
            "between_boxes_share",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
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
    // The score rows, then every monitor row (the second table's, unlimited).
    for r in c.rows.iter().chain(&c.why) {
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
        let pr = r.paired.as_ref();
        let u = pr.and(paired::unpaired_estimate(r));
        let robust = pr.and_then(|p| p.robust.as_ref());
        let drift = |d: Option<&crate::compare::paired::Drift>| {
            (f(d.map(|d| d.total_pct)), f(d.map(|d| d.p)))
        };
        let (dbp, dbq) = drift(pr.and_then(|p| p.drift.base.as_ref()));
        let (dpp, dpq) = drift(pr.and_then(|p| p.drift.patched.as_ref()));
        let (drp, drq) = drift(pr.and_then(|p| p.drift.ratio.as_ref()));
        let order = pr.and_then(|p| p.order.as_ref());
        record.extend([
            e.map(|e| e.method.as_str().to_string()).unwrap_or_default(),
            sens.map(|s| match s.unit {
                crate::compare::plan::PlanUnit::RunsASide => "runs-a-side".to_string(),
                crate::compare::plan::PlanUnit::Rounds => "rounds".to_string(),
            })
            .unwrap_or_default(),
            pr.map(|p| p.pairs.to_string()).unwrap_or_default(),
            pr.map(|p| p.left_out[0].to_string()).unwrap_or_default(),
            pr.map(|p| p.left_out[1].to_string()).unwrap_or_default(),
            u.map(|e| e.method.as_str().to_string()).unwrap_or_default(),
            f(u.map(|e| e.lower_pct)),
            f(u.map(|e| e.point_pct)),
            f(u.map(|e| e.upper_pct)),
            f(u.map(|e| e.p)),
            f(robust.and_then(|r| r.lower_pct)),
            f(robust.map(|r| r.point_pct)),
            f(robust.and_then(|r| r.upper_pct)),
            f(robust.and_then(|r| r.achieved)),
            pr.and_then(|p| p.narrower)
                .map(|n| n.as_str().to_string())
                .unwrap_or_default(),
            dbp,
            dbq,
            dpp,
            dpq,
            drp,
            drq,
            f(order.map(|o| o.difference_pct)),
            f(order.map(|o| o.p)),
            f(pr.and_then(|p| p.between_boxes.map(|b| b.share))),
        ]);
        w.write_record(
            record
                .iter()
                .map(|c| crate::safe_text::csv_cell(c).into_owned()),
        )?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
