//! `patchbench compare`: resolves each side (labels, run ids, result files; incomplete runs
//! left out unless asked for), finds a noise profile in the store for a side with few runs,
//! compares them metric by metric (`crate::compare`) and prints the chosen format
//! (`crate::report::compare`). `--fail-on-regression` alone returns exit status 1. Two sides
//! of `exec` runs whose tool, version or command line differ are refused (exit status 2)
//! unless `--allow-different-tools` is given.

use super::shared::StoreArg;
use crate::compare::model::NoiseProfile;
use crate::compare::verdict::{Rule, Settings, PROFILE_BELOW};
use crate::compare::{self, Side};
use crate::error::{usage, Usage};
use crate::import::{self, ImportOptions};
use crate::record::RunRecord;
use crate::report::compare::{self as format, Format};
use crate::store::db::Store;
use crate::store::profile::{Settings as ProfileSettings, PROFILE_RUNS};
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
    /// Labelling rule: welch (interval, q-values, noise band) or lkp (the 0-day robot's).
    #[arg(long, value_enum, default_value = "welch")]
    pub rule: Rule,
    /// Exit with status 1 when a metric regressed by more than PCT percent (0 to 100):
    /// Holm-adjusted p < α and the whole interval beyond -PCT (a drop to zero always counts).
    #[arg(long, value_name = "PCT", value_parser = crate::args::parse_pct)]
    pub fail_on_regression: Option<f64>,
    /// Noise band (0 to 100): changes within ±PCT % do not matter; "no change" means the
    /// interval is inside it, improved/regressed that it is wholly beyond it.
    #[arg(long, value_name = "PCT", default_value = "1", value_parser = crate::args::parse_pct)]
    pub noise: f64,
    /// Two-sided level of the printed interval. Its one-sided bounds are at α = (1 − C)/2,
    /// which is also the level for q-values and the gate (0.90: α = 0.05). Default: 0.90, or
    /// for the two sides of a stored campaign the campaign's own level (0.95 unless started
    /// with another), so that compare and `campaign report` give the same interval.
    #[arg(long, value_name = "C", value_parser = crate::args::parse_fraction)]
    pub confidence: Option<f64>,
    /// Changes (in %, above 0, at most 1000) for which the plan gives the runs a side needed.
    #[arg(long, value_name = "PCT,...", value_delimiter = ',', default_value = "1,2", value_parser = crate::args::parse_positive_pct)]
    pub plan: Vec<f64>,
    /// Keep interrupted (incomplete) runs; by default they are left out, and the output says
    /// how many.
    #[arg(long)]
    pub include_incomplete: bool,
    /// Do not borrow a between-run spread from the store's noise profile for a side with
    /// fewer than 3 runs.
    #[arg(long)]
    pub no_profile: bool,
    /// Rows of the second table, "what changed with it" (the monitor rows that changed,
    /// largest change first, each with its interval and a q-value over the monitor rows
    /// alone): a number, or `all`.
    #[arg(long, value_name = "N|all", default_value = "20", value_parser = crate::args::parse_why)]
    pub why: crate::args::WhyRows,
    /// Judge two sides of `exec` runs whose tool, tool version or command line differ
    /// (refused by default: they measured different things; the differences are still
    /// warned about).
    #[arg(long)]
    pub allow_different_tools: bool,
    /// Test name for AIM7 and will-it-scale files given as a side (default: file stem).
    #[arg(long, value_name = "NAME")]
    pub test: Option<String>,
    #[command(flatten)]
    pub store: StoreArg,
}

/// Resolves one side: comma-separated parts, each a result file, a run id or a label
/// (`run:ID`, `label:NAME` and `file:PATH` force one reading).
/// The interval's level: `--confidence`, else for the two sides of a campaign in the store
/// the campaign's own level (with a note saying so), else 0.90.
fn confidence(
    a: &CompareArgs,
    base: &Side,
    patched: &Side,
    store: &mut Option<Store>,
) -> anyhow::Result<(f64, Option<String>)> {
    const DEFAULT: f64 = 0.90;
    if let Some(c) = a.confidence {
        return Ok((c, None));
    }
    let compare::paired::Detected::Paired(p) = compare::paired::detect(base, patched) else {
        return Ok((DEFAULT, None));
    };
    let name = &p.0.campaign;
    if store.is_none() {
        *store = a.store.open(false).ok();
    }
    let Some(campaign) = store.as_ref().and_then(|s| s.campaign(name).ok().flatten()) else {
        return Ok((DEFAULT, None));
    };
    let level = campaign.spec.confidence;
    Ok((
        level,
        Some(format!(
            "{:.0} % intervals, q < {}: campaign {name}'s own level, as `campaign report \
             {name}` uses (--confidence C for another)",
            100.0 * level,
            ((1.0 - level) / 2.0 * 1e12).round() / 1e12
        )),
    ))
}

fn resolve(arg: &str, a: &CompareArgs, store: &mut Option<Store>) -> anyhow::Result<Side> {
    let store_arg = &a.store;
    let mut runs = Vec::new();
    let mut left_out = 0;
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
            let record = import::read_side_file(Path::new(value), &opts)?;
            runs.push((value.to_string(), compare::lean(record)));
            continue;
        }
        if store.is_none() {
            *store = Some(store_arg.open(false)?);
        }
        let Some(s) = store.as_ref() else { continue };
        if kind == "run" {
            runs.push((
                value.to_string(),
                compare::lean(super::store::get_run(s, value)?),
            ));
            continue;
        }
        let ids = s.ids_with_label(value)?;
        if ids.is_empty() {
            let labels = s.labels()?;
            return usage(format!(
                "no runs labelled {value:?} in store {} (labels there: {}); give a label, a run id or a file",
                s.location(),
                if labels.is_empty() { "none".to_string() } else { labels.join(", ") }
            ));
        }
        for id in ids {
            if let Some(r) = s.get(id)? {
                // Lean as each is read, so the side's full runs are never all in memory.
                runs.push((id.to_string(), compare::lean(r)));
            }
        }
    }
    if runs.is_empty() {
        return Err(Usage(format!("{arg:?} names no runs")).into());
    }
    if !a.include_incomplete {
        let before = runs.len();
        runs.retain(|(_, r)| !r.incomplete);
        left_out = before - runs.len();
        if runs.is_empty() {
            return usage(format!(
                "all {before} runs of {arg:?} are incomplete (interrupted); \
                 --include-incomplete compares them anyway"
            ));
        }
    }
    let mut side = Side::new(arg, runs);
    side.left_out_incomplete = left_out;
    Ok(side)
}

/// A noise profile for a side with few runs: the store's other complete runs of the same
/// host, kernel, kind and settings (not the other side's), grouped by label. The store pools
/// them itself (no record is read), so this costs the same whatever the store holds.
fn noise_profile(side: &Side, other: &Side, store: &Store) -> anyhow::Result<Option<NoiseProfile>> {
    let Some((_, first)) = side.runs.first() else {
        return Ok(None);
    };
    let same = |r: &RunRecord| {
        r.kind == first.kind
            && r.system.hostname == first.system.hostname
            && r.system.kernel_release == first.system.kernel_release
            && r.system.kernel_version == first.system.kernel_version
            && r.config == first.config
    };
    if first.system.hostname.is_empty() || !side.runs.iter().all(|(_, r)| same(r)) {
        return Ok(None);
    }
    let settings = ProfileSettings {
        kind: first.kind.as_str(),
        host: &first.system.hostname,
        kernel_release: &first.system.kernel_release,
        kernel_version: &first.system.kernel_version,
        config: &first.config,
    };
    let excluded: Vec<i64> = other
        .runs
        .iter()
        .filter_map(|(id, _)| id.parse().ok())
        .collect();
    let data = store.profile_data(&settings, &excluded)?;
    let labels: Vec<&str> = data
        .labels
        .iter()
        .map(|l| if l.is_empty() { "-" } else { l.as_str() })
        .collect();
    let runs = if data.runs >= PROFILE_RUNS {
        format!("the latest {} runs", data.runs)
    } else {
        format!("{} runs", data.runs)
    };
    let description = format!(
        "{runs} of host {}, kernel {} with the same settings (labels {})",
        crate::safe_text::field(&first.system.hostname),
        crate::safe_text::field(&first.system.kernel_release),
        labels.join(", ")
    );
    let groups = data
        .groups
        .into_iter()
        .map(|(_, key, n, var)| (key, n, var));
    Ok(NoiseProfile::from_group_variances(description, groups))
}

/// `patchbench compare`.
pub fn execute(a: &CompareArgs) -> anyhow::Result<i32> {
    let mut store = None;
    let mut base = resolve(&a.base, a, &mut store)?;
    let mut patched = resolve(&a.patched, a, &mut store)?;
    if !a.allow_different_tools {
        let fingerprint = compare::comparability::fingerprint(&base, &patched);
        if let Some(what) = compare::comparability::different_tools(&fingerprint, &base, &patched) {
            return usage(format!(
                "the sides ran different tools or arguments ({what}); compare does not judge \
                 them (--allow-different-tools to judge them anyway)"
            ));
        }
    }
    if !a.no_profile && base.runs.len().min(patched.runs.len()) < PROFILE_BELOW {
        // A store that does not exist has no profile (and is not created).
        if store.is_none() {
            store = a.store.open(false).ok();
        }
        if let Some(s) = &store {
            if base.runs.len() < PROFILE_BELOW {
                base.profile = noise_profile(&base, &patched, s)?;
            }
            if patched.runs.len() < PROFILE_BELOW {
                patched.profile = noise_profile(&patched, &base, s)?;
            }
        }
    }
    let (confidence, campaign_note) = confidence(a, &base, &patched, &mut store)?;
    let settings = Settings {
        rule: a.rule,
        confidence,
        noise_pct: a.noise,
        plan_pct: a.plan.clone(),
        details: true,
        why_rows: a.why.0,
    };
    let mut c = compare::compare(&base, &patched, &settings)?;
    c.notes.extend(campaign_note);
    let fmt = a
        .format
        .unwrap_or(if c.rows.iter().any(|r| r.name.starts_with("unixbench.")) {
            Format::Unixbench
        } else {
            Format::Lkp
        });
    if !format::shows_warnings(fmt) {
        for w in format::warning_lines(&c) {
            crate::safe_text::eprint_line(&w);
        }
    }
    let color = crate::report::color::enabled();
    crate::report::print(&crate::report::comparison(&c, fmt, color)?)?;
    if let Some(limit) = a.fail_on_regression {
        let unjudged = c
            .rows
            .iter()
            .filter(|r| r.judgement.estimate.is_none())
            .count();
        if unjudged > 0 {
            crate::safe_text::eprint_line(&format!(
                "note: {unjudged} of {} rows could not be gated (too few runs, or a metric on \
                 one side only)",
                c.rows.len()
            ));
        }
        // A failed run is no measurement, never a certain drop; but a workload that fails on
        // the patched side fails the gate (a CI job must not pass on it), said as such.
        let mut failed_patched = false;
        for (r, f) in c.failed_runs() {
            failed_patched |= f.patched;
            crate::safe_text::eprint_line(&format!(
                "{}: {}: {}; a failed run is not a measurement{}",
                if f.patched { "gate" } else { "note" },
                r.display_name(),
                f.describe(),
                if f.patched {
                    ", and a workload that fails on the patched side fails the gate"
                } else {
                    "; the base side's failures are reported, not gated: check the runs"
                }
            ));
        }
        let bad = c.regressions_beyond(limit);
        if failed_patched && bad.is_empty() {
            return Ok(1);
        }
        if !bad.is_empty() {
            for r in &bad {
                crate::safe_text::eprint_line(&format!(
                    "regression beyond {limit}%: {} {} {}",
                    r.display_name(),
                    format::pct(r.change_pct, 2),
                    r.judgement
                        .estimate
                        .as_ref()
                        .map(|e| format!(
                            "[{:+.1}% {:+.1}%] Holm p={:.3}",
                            e.lower_pct, e.upper_pct, e.holm
                        ))
                        .unwrap_or_default()
                ));
            }
            return Ok(1);
        }
    }
    Ok(0)
}
