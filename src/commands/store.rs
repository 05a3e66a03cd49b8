//! The store commands: `runs`, `show`, `export`, `rm`, `import` and `compare`. They are
//! flattened into the top-level command, so they read `patchbench runs`, `patchbench compare`.
//! Errors are returned (exit 2); `compare --fail-on-regression` alone returns exit status 1.

use crate::compare::verdict::{Rule, Settings};
use crate::compare::{self, Side};
use crate::error::{usage, Usage};
use crate::import::{self, ImportOptions};
use crate::record::RunRecord;
use crate::report::compare::{self as format, Format};
use crate::store::db::Store;
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Subcommand)]
pub enum StoreCommand {
    /// List the stored runs: id, label, date, host, kernel, tests.
    Runs(RunsArgs),
    /// Show one stored run: its system, settings and every metric.
    Show(ShowArgs),
    /// Write one stored run as JSON (the `--json` document) or CSV (one row per metric).
    Export(ExportArgs),
    /// Delete stored runs.
    Rm(RmArgs),
    /// Store results from files: UnixBench reports/logs, AIM7 multitask output,
    /// will-it-scale CSV, patchbench JSON. Several files are several runs of one side.
    Import(ImportArgs),
    /// Compare base with patched, per metric: n, mean, spread, %change and a verdict.
    Compare(CompareArgs),
    /// Testing aid (hidden): saves a synthetic run slowly through the run sink.
    #[command(hide = true, name = "debug-slow-writer")]
    DebugSlowWriter(DebugArgs),
}

/// The store to use.
#[derive(Debug, Clone, Args)]
pub struct StoreArg {
    /// Result store (SQLite); default: $PATCHBENCH_STORE, else $XDG_DATA_HOME/patchbench/results.db.
    #[arg(long, value_name = "PATH")]
    pub store: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct RunsArgs {
    /// Only runs with this label.
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    /// Run id, as `patchbench runs` lists it.
    #[arg(value_name = "RUN")]
    pub run: String,
    /// For a UnixBench run: print its UnixBench text report instead.
    #[arg(long)]
    pub report: bool,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    Json,
    Csv,
}

#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    #[arg(value_name = "RUN")]
    pub run: String,
    #[arg(long, value_enum, default_value = "json")]
    pub format: ExportFormat,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Args)]
pub struct RmArgs {
    #[arg(value_name = "RUN", required = true)]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Label the imported runs (e.g. base, patched).
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,
    /// Test name for AIM7 and will-it-scale files, which do not name it (default: file stem).
    #[arg(long, value_name = "NAME")]
    pub test: Option<String>,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Base side: a label, a run id, a result file, or several joined by commas.
    #[arg(value_name = "BASE")]
    pub base: String,
    /// Patched side, in the same forms.
    #[arg(value_name = "PATCHED")]
    pub patched: String,
    /// Output format (default: unixbench when there are UnixBench results, else lkp).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Verdict rule.
    #[arg(long, value_enum, default_value = "bootstrap")]
    pub rule: Rule,
    /// Exit with status 1 when a metric regresses significantly by more than PCT percent.
    #[arg(long, value_name = "PCT", value_parser = parse_pct)]
    pub fail_on_regression: Option<f64>,
    /// Changes within ±PCT % are "within noise" (both rules).
    #[arg(long, value_name = "PCT", default_value = "1", value_parser = parse_pct)]
    pub noise: f64,
    /// Significance level of Welch's t-test (bootstrap rule).
    #[arg(long, value_name = "P", default_value = "0.05", value_parser = parse_fraction)]
    pub significance: f64,
    /// Confidence level of the bootstrap interval.
    #[arg(long, value_name = "C", default_value = "0.95", value_parser = parse_fraction)]
    pub confidence: f64,
    /// Bootstrap resamples.
    #[arg(long, value_name = "N", default_value = "10000", value_parser = clap::value_parser!(u32).range(100..))]
    pub resamples: u32,
    /// Test name for AIM7 and will-it-scale files given as a side (default: file stem).
    #[arg(long, value_name = "NAME")]
    pub test: Option<String>,
    /// Seed of the bootstrap (recorded in JSON output; the same seed gives the same CI).
    #[arg(long, value_name = "N", default_value_t = Settings::default().seed)]
    pub seed: u64,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Args)]
pub struct DebugArgs {
    #[arg(long, default_value = "3")]
    pub tests: u32,
    #[arg(long, default_value = "0")]
    pub stall_after: u32,
    #[arg(long, default_value = "0")]
    pub pause_ms: u64,
    #[arg(long)]
    pub label: Option<String>,
    #[command(flatten)]
    pub store: StoreArg,
}

fn parse_pct(s: &str) -> Result<f64, String> {
    match s.trim().trim_end_matches('%').parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a percentage; give e.g. 2 or 2%")),
    }
}

fn parse_fraction(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(format!("{s:?} must be between 0 and 1 (e.g. 0.05)")),
    }
}

pub fn execute(cmd: StoreCommand) -> anyhow::Result<i32> {
    match cmd {
        StoreCommand::Runs(a) => runs(&a),
        StoreCommand::Show(a) => show(&a),
        StoreCommand::Export(a) => export(&a),
        StoreCommand::Rm(a) => rm(&a),
        StoreCommand::Import(a) => import_files(&a),
        StoreCommand::Compare(a) => compare_sides(&a),
        StoreCommand::DebugSlowWriter(a) => crate::commands::debug_writer::run(
            &crate::args::StoreOpts {
                label: a.label.clone(),
                store: a.store.store.clone(),
                no_store: false,
            },
            a.tests,
            a.stall_after,
            a.pause_ms,
        ),
    }
}

fn open(arg: &StoreArg, create: bool) -> anyhow::Result<Store> {
    Store::open(&crate::store::store_path(arg.store.as_deref())?, create)
}

fn run_id(s: &str) -> anyhow::Result<i64> {
    s.trim().parse().or_else(|_| {
        usage(format!(
            "{s:?} is not a run id; give a number as listed by `patchbench runs`"
        ))
    })
}

fn get_run(store: &Store, s: &str) -> anyhow::Result<RunRecord> {
    let id = run_id(s)?;
    match store.get(id)? {
        Some(r) => Ok(r),
        None => usage(format!(
            "no run {id} in store {}; `patchbench runs` lists the runs",
            store.path().display()
        )),
    }
}

fn runs(a: &RunsArgs) -> anyhow::Result<i32> {
    let store = open(&a.store, false)?;
    let list = store.list(a.label.as_deref())?;
    println!(
        "{:>4}  {:<12} {:<14} {:<20} {:<16} {:<24} {:>5}",
        "ID", "LABEL", "KIND", "DATE", "HOST", "KERNEL", "TESTS"
    );
    for r in list {
        let date: String = r.started_at.replace('T', " ").chars().take(19).collect();
        println!(
            "{:>4}  {:<12} {:<14} {:<20} {:<16} {:<24} {:>5}{}",
            r.id,
            r.label.unwrap_or_else(|| "-".to_string()),
            r.kind,
            date,
            if r.host.is_empty() {
                "-".to_string()
            } else {
                r.host
            },
            if r.kernel.is_empty() {
                "-".to_string()
            } else {
                r.kernel
            },
            if r.tests > 0 { r.tests } else { r.metrics },
            if r.incomplete { "  (incomplete)" } else { "" }
        );
    }
    Ok(0)
}

fn show(a: &ShowArgs) -> anyhow::Result<i32> {
    let store = open(&a.store, false)?;
    let r = get_run(&store, &a.run)?;
    if a.report {
        if r.tests.is_empty() {
            return crate::error::usage(format!(
                "run {} has no UnixBench results to report; use `patchbench show {}`",
                a.run.trim(),
                a.run.trim()
            ));
        }
        print!("{}", crate::report::unixbench_text::render(&r));
        return Ok(0);
    }
    let s = &r.system;
    println!(
        "run {}  label {}",
        a.run.trim(),
        r.label.as_deref().unwrap_or("-")
    );
    println!(
        "kind {}  source {}",
        r.kind,
        r.source.as_deref().unwrap_or("-")
    );
    println!(
        "started {}  finished {}{}",
        r.started_at,
        r.finished_at,
        if r.incomplete { "  (incomplete)" } else { "" }
    );
    println!(
        "host {}  kernel {} {}",
        s.hostname, s.kernel_release, s.kernel_version
    );
    println!(
        "cpu {} × {}  memory {} MiB",
        s.cpus,
        s.cpu_model,
        s.memory_bytes >> 20
    );
    println!(
        "patchbench {} ({}, {})",
        s.patchbench_version, s.patchbench_commit, s.build_profile
    );
    for (k, v) in &r.config {
        println!("config {k} = {v}");
    }
    println!();
    println!(
        "{:<56} {:>14} {:<8} {:>3} {:>8}",
        "METRIC", "VALUE", "UNIT", "N", "STDDEV"
    );
    for m in &r.metrics {
        let sd = crate::stats::stddev_pct(
            crate::stats::stddev(&m.samples),
            crate::stats::mean(&m.samples),
        );
        println!(
            "{:<56} {:>14.2} {:<8} {:>3} {:>8}",
            m.key(),
            m.value,
            m.unit,
            m.samples.len(),
            sd.map(|v| format!("±{v:.2}%"))
                .unwrap_or_else(|| "-".to_string())
        );
    }
    Ok(0)
}

fn export(a: &ExportArgs) -> anyhow::Result<i32> {
    let store = open(&a.store, false)?;
    let r = get_run(&store, &a.run)?;
    match a.format {
        ExportFormat::Json => println!("{}", serde_json::to_string_pretty(&r)?),
        ExportFormat::Csv => {
            let mut w = csv::Writer::from_writer(std::io::stdout());
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
                    a.run.trim().to_string(),
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
            w.flush()?;
        }
    }
    Ok(0)
}

fn rm(a: &RmArgs) -> anyhow::Result<i32> {
    let mut store = open(&a.store, false)?;
    let ids: Vec<i64> = a
        .runs
        .iter()
        .map(|s| run_id(s))
        .collect::<anyhow::Result<_>>()?;
    for id in &ids {
        if store.get(*id)?.is_none() {
            return usage(format!(
                "no run {id} in store {}; nothing was deleted",
                store.path().display()
            ));
        }
    }
    for id in ids {
        store.delete(id)?;
        println!("deleted run {id}");
    }
    Ok(0)
}

fn import_files(a: &ImportArgs) -> anyhow::Result<i32> {
    let opts = ImportOptions {
        label: a.label.clone(),
        test: a.test.clone(),
    };
    // Parse everything first: a bad file stores nothing.
    let records: Vec<RunRecord> = a
        .files
        .iter()
        .map(|f| import::import_file(f, &opts))
        .collect::<anyhow::Result<_>>()?;
    let mut store = open(&a.store, true)?;
    let ids = store.insert_all(&records)?;
    for (id, (f, r)) in ids.iter().zip(a.files.iter().zip(&records)) {
        println!(
            "imported {} as run {id} (label {}, {} metrics)",
            f.display(),
            r.label.as_deref().unwrap_or("-"),
            r.metrics.len()
        );
    }
    Ok(0)
}

/// Resolves one side: comma-separated parts, each a result file, a run id or a label
/// (`run:ID`, `label:NAME` and `file:PATH` force one reading).
fn resolve(arg: &str, a: &CompareArgs, store: &mut Option<Store>) -> anyhow::Result<Side> {
    let store_arg = &a.store;
    let mut runs = Vec::new();
    for part in arg.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (kind, value) = match part.split_once(':') {
            Some((k @ ("run" | "label" | "file"), v)) => (k, v),
            _ if Path::new(part).is_file() => ("file", part),
            _ if part.chars().all(|c| c.is_ascii_digit()) => ("run", part),
            _ => ("label", part),
        };
        if kind == "file" {
            let opts = ImportOptions {
                label: None,
                test: a.test.clone(),
            };
            let record = import::import_file(Path::new(value), &opts)?;
            runs.push((value.to_string(), record));
            continue;
        }
        if store.is_none() {
            *store = Some(open(store_arg, false)?);
        }
        let Some(s) = store.as_ref() else { continue };
        if kind == "run" {
            runs.push((value.to_string(), get_run(s, value)?));
            continue;
        }
        let ids = s.ids_with_label(value)?;
        if ids.is_empty() {
            let mut labels: Vec<String> =
                s.list(None)?.into_iter().filter_map(|r| r.label).collect();
            labels.sort();
            labels.dedup();
            return usage(format!(
                "no runs labelled {value:?} in store {} (labels there: {}); give a label, a run id or a file",
                s.path().display(),
                if labels.is_empty() { "none".to_string() } else { labels.join(", ") }
            ));
        }
        for id in ids {
            if let Some(r) = s.get(id)? {
                runs.push((id.to_string(), r));
            }
        }
    }
    if runs.is_empty() {
        return Err(Usage(format!("{arg:?} names no runs")).into());
    }
    Ok(Side {
        name: arg.to_string(),
        runs,
    })
}

fn compare_sides(a: &CompareArgs) -> anyhow::Result<i32> {
    let mut store = None;
    let base = resolve(&a.base, a, &mut store)?;
    let patched = resolve(&a.patched, a, &mut store)?;
    let settings = Settings {
        rule: a.rule,
        confidence: a.confidence,
        significance: a.significance,
        noise_pct: a.noise,
        resamples: a.resamples as usize,
        seed: a.seed,
    };
    let c = compare::compare(&base, &patched, &settings);
    let fmt = a
        .format
        .unwrap_or(if c.rows.iter().any(|r| r.name.starts_with("unixbench.")) {
            Format::Unixbench
        } else {
            Format::Lkp
        });
    if !format::shows_warnings(fmt) {
        for w in &c.warnings {
            eprintln!("warning: not comparable: {w}");
        }
    }
    print!("{}", format::render(&c, fmt)?);
    if let Some(limit) = a.fail_on_regression {
        let bad = c.regressions_beyond(limit);
        if !bad.is_empty() {
            for r in &bad {
                eprintln!(
                    "regression beyond {limit}%: {} {}",
                    r.display_name(),
                    format::pct(r.change_pct, 2)
                );
            }
            return Ok(1);
        }
    }
    Ok(0)
}
