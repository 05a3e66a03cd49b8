//! The store's listings: `patchbench runs` (one line per stored run), `patchbench show` (one
//! run's system, settings and metrics) and `patchbench export` (the JSON document, or CSV
//! with one row per metric); `runs` and `show` also as JSON for scripts (schemas
//! `patchbench.runs/1` and `patchbench.show/1`, docs/json.md).

use crate::record::{Direction, Metric, RunRecord};
use crate::safe_text::{csv_cell, field};
use crate::store::runs::RunSummary;
use crate::sysinfo::SystemInfo;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The `schema` of `runs --format json`.
pub const RUNS_SCHEMA: &str = "patchbench.runs/1";
/// The `schema` of `show --format json`.
pub const SHOW_SCHEMA: &str = "patchbench.show/1";

#[derive(Serialize)]
struct RunsDoc<'a> {
    schema: &'static str,
    store: String,
    runs: Vec<RunLine<'a>>,
}

#[derive(Serialize)]
struct RunLine<'a> {
    id: i64,
    label: Option<&'a str>,
    kind: &'a str,
    started_at: &'a str,
    host: &'a str,
    kernel: &'a str,
    /// Distinct tests among its metrics (their `test` parameter).
    tests: usize,
    metrics: usize,
    incomplete: bool,
}

/// The `runs --format json` document: the store (its path, or its URL without a password)
/// and one object per run.
pub fn runs_json(store: &str, list: &[RunSummary]) -> anyhow::Result<String> {
    let doc = RunsDoc {
        schema: RUNS_SCHEMA,
        store: store.to_string(),
        runs: list
            .iter()
            .map(|r| RunLine {
                id: r.id,
                label: r.label.as_deref(),
                kind: &r.kind,
                started_at: &r.started_at,
                host: &r.host,
                kernel: &r.kernel,
                tests: r.tests,
                metrics: r.metrics,
                incomplete: r.incomplete,
            })
            .collect(),
    };
    Ok(serde_json::to_string_pretty(&doc)? + "\n")
}

#[derive(Serialize)]
struct ShowDoc<'a> {
    schema: &'static str,
    id: i64,
    label: Option<&'a str>,
    kind: &'a str,
    source: Option<&'a str>,
    started_at: &'a str,
    finished_at: &'a str,
    incomplete: bool,
    error: Option<&'a str>,
    system: &'a SystemInfo,
    config: &'a BTreeMap<String, serde_json::Value>,
    /// The noise check's warnings that apply to the run (`compare::meaning`), `source: value`
    /// each.
    noise_warnings: Vec<String>,
    metrics: Vec<ShowMetric<'a>>,
    /// The run's identity.
    #[serde(skip_serializing_if = "Option::is_none")]
    uuid: Option<&'a str>,
    /// The campaign step that made the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    campaign: Option<&'a crate::record::campaign::StepInfo>,
}

#[derive(Serialize)]
struct ShowMetric<'a> {
    key: String,
    name: &'a str,
    params: &'a BTreeMap<String, String>,
    title: &'a str,
    unit: &'a str,
    direction: Direction,
    value: f64,
    /// Samples behind the value, and their spread (the text's N and STDDEV).
    n: usize,
    stddev_pct: Option<f64>,
    samples: &'a [f64],
}

/// The `show --format json` document of run `id`: what the text shows, as fields.
pub fn show_json(id: i64, r: &RunRecord) -> anyhow::Result<String> {
    let doc = ShowDoc {
        schema: SHOW_SCHEMA,
        id,
        label: r.label.as_deref(),
        kind: r.kind.as_str(),
        source: r.source.as_deref(),
        started_at: &r.started_at,
        finished_at: &r.finished_at,
        incomplete: r.incomplete,
        error: r.error.as_deref(),
        system: &r.system,
        config: &r.config,
        noise_warnings: crate::compare::meaning::noise_warning_lines(r),
        uuid: r.uuid.as_deref(),
        campaign: r.campaign.as_ref(),
        metrics: r
            .metrics
            .iter()
            .map(|m| ShowMetric {
                key: m.key(),
                name: &m.name,
                params: &m.params,
                title: &m.title,
                unit: &m.unit,
                direction: m.direction,
                value: m.value,
                n: m.samples.len(),
                stddev_pct: sample_spread_pct(m),
                samples: &m.samples,
            })
            .collect(),
    };
    Ok(serde_json::to_string_pretty(&doc)? + "\n")
}

/// The `runs` table. Labels, hosts and kernels come from the runs (an imported file says
/// what it likes): each shown escaped and cut (`crate::safe_text::field`).
pub fn runs(list: &[RunSummary]) -> String {
    let mut out = format!(
        "{:>4}  {:<12} {:<14} {:<20} {:<16} {:<24} {:>5}\n",
        "ID", "LABEL", "KIND", "DATE", "HOST", "KERNEL", "TESTS"
    );
    let dash = |s: &str| {
        if s.is_empty() {
            "-".to_string()
        } else {
            field(s)
        }
    };
    for r in list {
        let date: String = r.started_at.replace('T', " ").chars().take(19).collect();
        let _ = writeln!(
            out,
            "{:>4}  {:<12} {:<14} {:<20} {:<16} {:<24} {:>5}{}",
            r.id,
            dash(r.label.as_deref().unwrap_or("")),
            field(&r.kind),
            field(&date),
            dash(&r.host),
            dash(&r.kernel),
            if r.tests > 0 { r.tests } else { r.metrics },
            if r.incomplete { "  (incomplete)" } else { "" }
        );
    }
    out
}

/// The `show` text of run `id`. Every string of the run (it may come from an imported file)
/// is shown escaped and cut (`crate::safe_text::field`).
pub fn show(id: &str, r: &RunRecord) -> String {
    let s = &r.system;
    let mut out = String::new();
    let or_dash = |v: Option<&str>| v.map_or_else(|| "-".to_string(), field);
    let _ = writeln!(
        out,
        "run {}  label {}",
        field(id),
        or_dash(r.label.as_deref())
    );
    let _ = writeln!(
        out,
        "kind {}  source {}",
        r.kind,
        or_dash(r.source.as_deref())
    );
    let _ = writeln!(
        out,
        "started {}  finished {}{}",
        field(&r.started_at),
        field(&r.finished_at),
        if r.incomplete { "  (incomplete)" } else { "" }
    );
    let _ = writeln!(
        out,
        "host {}  kernel {} {}",
        field(&s.hostname),
        field(&s.kernel_release),
        field(&s.kernel_version)
    );
    let _ = writeln!(
        out,
        "cpu {} × {}  memory {} MiB",
        s.cpus,
        field(&s.cpu_model),
        s.memory_bytes >> 20
    );
    let _ = writeln!(
        out,
        "patchbench {} ({}, {})",
        field(&s.patchbench_version),
        field(&s.patchbench_commit),
        field(&s.build_profile)
    );
    for (k, v) in &r.config {
        let _ = writeln!(out, "config {} = {}", field(k), field(&v.to_string()));
    }
    if let Some(c) = &r.campaign {
        let _ = writeln!(
            out,
            "campaign {} round {} side {} (slot {}{}), {} executor, attempt {}",
            c.campaign,
            c.round,
            c.side,
            c.slot,
            if c.r#box.is_empty() {
                String::new()
            } else {
                format!(", box {}", c.r#box)
            },
            c.executor,
            c.attempt
        );
        let _ = writeln!(
            out,
            "campaign kernel {}{}  cmdline {}",
            c.kernel.release,
            c.kernel
                .image
                .as_deref()
                .map(|i| format!(" ({i})"))
                .unwrap_or_default(),
            c.kernel.cmdline
        );
        if let Some(b) = &c.build {
            let _ = writeln!(out, "campaign {}", field(&b.line()));
        }
        if let Some(g) = &c.guest {
            let _ = writeln!(
                out,
                "campaign guest {} {} vCPUs {} MiB on CPUs {:?}",
                g.accelerator, g.vcpus, g.memory_mib, g.cpus
            );
        }
        if let Some(b) = &c.boot {
            let _ = writeln!(
                out,
                "campaign boot {} via {}, {:.1} s after boot",
                b.boot_id, b.via, b.since_boot_s
            );
        }
        for w in crate::record::campaign::run_warnings(r) {
            let _ = writeln!(out, "campaign warning: {w}");
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:<56} {:>14} {:<8} {:>3} {:>8}",
        "METRIC", "VALUE", "UNIT", "N", "STDDEV"
    );
    for m in &r.metrics {
        let sd = sample_spread_pct(m);
        let _ = writeln!(
            out,
            "{:<56} {:>14.2} {:<8} {:>3} {:>8}",
            field(&m.key()),
            m.value,
            field(&m.unit),
            sample_count(m),
            sd.map(|v| format!("±{v:.2}%"))
                .unwrap_or_else(|| "-".to_string())
        );
    }
    out
}

/// How many samples a metric has inside its run (the `N` column), `-` for a value derived from
/// other metrics rather than sampled (the UnixBench index: a geometric mean of test scores).
pub fn sample_count(m: &Metric) -> String {
    if m.samples.is_empty() {
        "-".to_string()
    } else {
        m.samples.len().to_string()
    }
}

/// The spread of a metric's samples inside its run: sample stddev as % of their mean (the
/// `STDDEV` column of `show`).
pub fn sample_spread_pct(m: &Metric) -> Option<f64> {
    crate::stats::stddev_pct(
        crate::stats::stddev(&m.samples),
        crate::stats::mean(&m.samples),
    )
}

/// The CSV export of run `id`: one row per metric. Every cell is neutralised for spreadsheets
/// (`crate::safe_text::csv_cell`: control characters escaped, a cell that would be read as a
/// formula prefixed with `'`).
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
        let cells = [
            id.to_string(),
            r.label.clone().unwrap_or_default(),
            m.key(),
            m.name.to_string(),
            serde_json::to_string(&m.params)?,
            m.title.to_string(),
            m.unit.to_string(),
            serde_json::to_value(m.direction)?
                .as_str()
                .unwrap_or_default()
                .to_string(),
            m.value.to_string(),
            samples.join(";"),
        ];
        w.write_record(cells.iter().map(|c| csv_cell(c).into_owned()))?;
    }
    Ok(w.into_inner()?)
}
