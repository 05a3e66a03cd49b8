//! `patchbench model`: user-space models of the two hardware mechanisms behind the kernel
//! changes this project is built around (see the project's mechanisms notes), run by the
//! will-it-scale harness so they get the same tasks, start gate, sampling and records.
//!
//! - `model-setbit`: setting a bit that is already set, with an atomic read-modify-write every
//!   time (`always`) or only after a plain load finds it clear (`test-first`).
//! - `model-isize`: one writer appends data and publishes the new size; readers check that the
//!   bytes below the size they read are there (`fence`, `acquire`, `seqcount`).

mod isize;
mod setbit;

use crate::counter_harness::session::{self, HarnessOpts, ModeChoice};
use crate::counter_harness::{Mode, Outcome};
use crate::error::usage;
use anyhow::Result;
use clap::Args;
use std::collections::BTreeMap;

/// Default measured seconds per point: the models show their effect in seconds.
const DEFAULT_DURATION: f64 = 2.0;
const DEFAULT_WARMUP: f64 = 1.0;

#[derive(Debug, Clone, Args)]
pub struct ModelArgs {
    /// model-setbit or model-isize (`--list` describes them).
    #[arg(value_name = "MODEL")]
    pub model: Option<String>,
    /// List the models and their variants and exit.
    #[arg(long)]
    pub list: bool,
    /// Variants to run, comma separated (default: every correct variant of the model).
    /// model-setbit: always, test-first. model-isize: fence, acquire, seqcount, and
    /// publish-first (a deliberately wrong writer that publishes the size before the data).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub variants: Vec<String>,
    /// model-setbit: every iteration also reads a second word in the flags' cache line.
    #[arg(long)]
    pub read_mix: bool,
    /// model-isize: keep measuring each point until the readers made this many reads.
    #[arg(long, value_name = "N", default_value_t = 10_000_000)]
    pub reads: u64,
    /// Tasks as threads (default), processes sharing one mapping, or both.
    #[arg(short, long, value_enum, default_value_t = ModeChoice::Thread)]
    pub mode: ModeChoice,
    /// For model-isize, --tasks counts the reader tasks (one writer runs besides them);
    /// its default is one reader per CPU but one.
    #[command(flatten)]
    pub opts: HarnessOpts,
}

/// Runs `patchbench model`; returns the exit status.
pub fn execute(args: &ModelArgs) -> Result<i32> {
    if args.list {
        println!("{:<13} {}", "model-setbit", setbit::DESCRIPTION);
        println!("{:<13} variants: {}", "", setbit::VARIANTS.join(", "));
        println!("{:<13} {}", "model-isize", isize::DESCRIPTION);
        println!("{:<13} variants: {}", "", isize::VARIANTS.join(", "));
        return Ok(0);
    }
    match args.model.as_deref().map(str::trim) {
        Some("model-setbit") | Some("setbit") => setbit::execute(args),
        Some("model-isize") | Some("isize") => isize::execute(args),
        Some(other) => usage(format!(
            "unknown model {other:?}; the models are model-setbit and model-isize"
        )),
        None => usage("give a model: model-setbit or model-isize (`patchbench model --list`)"),
    }
}

/// The variants asked for (checked against `known`), or `default`.
fn pick_variants<T: Copy>(
    asked: &[String],
    known: &[(&'static str, T)],
    default: &[T],
) -> Result<Vec<T>> {
    if asked.is_empty() {
        return Ok(default.to_vec());
    }
    asked
        .iter()
        .map(|a| match known.iter().find(|(n, _)| *n == a.trim()) {
            Some((_, v)) => Ok(*v),
            None => usage(format!(
                "unknown variant {a:?}; choose from {}",
                known.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
            )),
        })
        .collect()
}

/// Sampling plan of the models (shorter defaults than `scale`).
fn plan(opts: &HarnessOpts) -> session::Plan {
    session::Plan::new(
        opts.sample_interval,
        opts.warmup.unwrap_or(DEFAULT_WARMUP),
        opts.duration.unwrap_or(DEFAULT_DURATION),
    )
}

/// The settings every model records.
fn base_config(
    args: &ModelArgs,
    tasks: &[usize],
    modes: &[Mode],
) -> BTreeMap<String, serde_json::Value> {
    let mut c = BTreeMap::new();
    c.insert("model".into(), serde_json::json!(args.model));
    c.insert("tasks".into(), serde_json::json!(tasks));
    c.insert(
        "modes".into(),
        serde_json::json!(modes.iter().map(|m| m.plural()).collect::<Vec<_>>()),
    );
    c.insert("pin".into(), serde_json::json!(args.opts.pin));
    c
}

/// A point's per-operation counter values as a short line, if counters were read.
fn counter_line(outcome: &Outcome, tasks: std::ops::Range<usize>) -> Option<String> {
    let c = outcome.counters.as_ref()?;
    let ops: u64 = outcome.task_totals()[tasks].iter().sum();
    let parts: Vec<String> = c
        .per_op(ops)
        .iter()
        .map(|(n, v)| format!("{n} {v:.3}"))
        .collect();
    Some(format!("per op: {}", parts.join(", ")))
}
