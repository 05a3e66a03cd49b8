//! `patchbench compare`: resolves each side (labels, run ids, result files), compares them
//! metric by metric (`crate::compare`) and prints the chosen format (`crate::report::compare`).
//! `--fail-on-regression` alone returns exit status 1.

use super::shared::StoreArg;
use crate::compare::verdict::{Rule, Settings};
use crate::compare::{self, Side};
use crate::error::{usage, Usage};
use crate::import::{self, ImportOptions};
use crate::report::compare::{self as format, Format};
use crate::store::db::Store;
use clap::Args;
use std::path::Path;

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
    #[arg(long, value_name = "PCT", value_parser = crate::args::parse_pct)]
    pub fail_on_regression: Option<f64>,
    /// Changes within ±PCT % are "within noise" (both rules).
    #[arg(long, value_name = "PCT", default_value = "1", value_parser = crate::args::parse_pct)]
    pub noise: f64,
    /// Significance level of Welch's t-test (bootstrap rule).
    #[arg(long, value_name = "P", default_value = "0.05", value_parser = crate::args::parse_fraction)]
    pub significance: f64,
    /// Confidence level of the bootstrap interval.
    #[arg(long, value_name = "C", default_value = "0.95", value_parser = crate::args::parse_fraction)]
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
            *store = Some(store_arg.open(false)?);
        }
        let Some(s) = store.as_ref() else { continue };
        if kind == "run" {
            runs.push((value.to_string(), super::store::get_run(s, value)?));
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

/// `patchbench compare`.
pub fn execute(a: &CompareArgs) -> anyhow::Result<i32> {
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
    crate::report::print(&format::render(&c, fmt)?)?;
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
