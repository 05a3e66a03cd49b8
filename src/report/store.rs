//! The store's listings: `patchbench runs` (one line per stored run), `patchbench show` (one
//! run's system, settings and metrics) and `patchbench export` (the JSON document, or CSV
//! with one row per metric).

use crate::record::RunRecord;
use crate::store::db::RunSummary;
use std::fmt::Write;

/// The `runs` table.
pub fn runs(list: &[RunSummary]) -> String {
    let mut out = format!(
        "{:>4}  {:<12} {:<14} {:<20} {:<16} {:<24} {:>5}\n",
        "ID", "LABEL", "KIND", "DATE", "HOST", "KERNEL", "TESTS"
    );
    let dash = |s: &str| {
        if s.is_empty() {
            "-".to_string()
        } else {
            s.to_string()
        }
    };
    for r in list {
        let date: String = r.started_at.replace('T', " ").chars().take(19).collect();
        let _ = writeln!(
            out,
            "{:>4}  {:<12} {:<14} {:<20} {:<16} {:<24} {:>5}{}",
            r.id,
            r.label.as_deref().unwrap_or("-"),
            r.kind,
            date,
            dash(&r.host),
            dash(&r.kernel),
            if r.tests > 0 { r.tests } else { r.metrics },
            if r.incomplete { "  (incomplete)" } else { "" }
        );
    }
    out
}

/// The `show` text of run `id`.
pub fn show(id: &str, r: &RunRecord) -> String {
    let s = &r.system;
    let mut out = String::new();
    let _ = writeln!(out, "run {id}  label {}", r.label.as_deref().unwrap_or("-"));
    let _ = writeln!(
        out,
        "kind {}  source {}",
        r.kind,
        r.source.as_deref().unwrap_or("-")
    );
    let _ = writeln!(
        out,
        "started {}  finished {}{}",
        r.started_at,
        r.finished_at,
        if r.incomplete { "  (incomplete)" } else { "" }
    );
    let _ = writeln!(
        out,
        "host {}  kernel {} {}",
        s.hostname, s.kernel_release, s.kernel_version
    );
    let _ = writeln!(
        out,
        "cpu {} × {}  memory {} MiB",
        s.cpus,
        s.cpu_model,
        s.memory_bytes >> 20
    );
    let _ = writeln!(
        out,
        "patchbench {} ({}, {})",
        s.patchbench_version, s.patchbench_commit, s.build_profile
    );
    for (k, v) in &r.config {
        let _ = writeln!(out, "config {k} = {v}");
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:<56} {:>14} {:<8} {:>3} {:>8}",
        "METRIC", "VALUE", "UNIT", "N", "STDDEV"
    );
    for m in &r.metrics {
        let sd = crate::stats::stddev_pct(
            crate::stats::stddev(&m.samples),
            crate::stats::mean(&m.samples),
        );
        let _ = writeln!(
            out,
            "{:<56} {:>14.2} {:<8} {:>3} {:>8}",
            m.key(),
            m.value,
            m.unit,
            m.samples.len(),
            sd.map(|v| format!("±{v:.2}%"))
                .unwrap_or_else(|| "-".to_string())
        );
    }
    out
}

/// The CSV export of run `id`: one row per metric.
pub fn csv(id: &str, r: &RunRecord) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "run",
        "label",
        "key",
        "name",
        "params",
        "title",
        "unit",
        "direction",
        "value",
        "samples",
    ])?;
    for m in &r.metrics {
        let samples: Vec<String> = m.samples.iter().map(|v| v.to_string()).collect();
        w.write_record([
            id.to_string(),
            r.label.clone().unwrap_or_default(),
            m.key(),
            m.name.clone(),
            serde_json::to_string(&m.params)?,
            m.title.clone(),
            m.unit.clone(),
            serde_json::to_value(m.direction)?
                .as_str()
                .unwrap_or_default()
                .to_string(),
            m.value.to_string(),
            samples.join(";"),
        ])?;
    }
    Ok(w.into_inner()?)
}
