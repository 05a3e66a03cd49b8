//! `patchbench model`: user-space models of the two hardware mechanisms behind the kernel
//! changes this project is built around (see the project's mechanisms notes), run by the
//! shared-memory counter harness, so they get the same tasks, start gate, sampling and records
//! as will-it-scale.
//!
//! - `model-setbit`: setting a bit that is already set, with an atomic read-modify-write every
//!   time (`always`) or only after a plain load finds it clear (`test-first`).
//! - `model-isize`: one writer appends data and publishes the new size; readers check that the
//!   bytes below the size they read are there (`fence`, `acquire`, `seqcount`).

pub mod isize;
pub mod setbit;

use crate::counter_harness::placement::Placement;
use crate::counter_harness::session::Plan;
use crate::counter_harness::{Mode, Outcome};
use crate::error::usage;
use crate::monitor::monitoring::Monitoring;
use crate::progress::Progress;
use crate::record::model::ModelDetails;
use crate::record::monitors::Unit;
use crate::record::RunRecord;

/// Default measured seconds per point: the models show their effect in seconds.
pub const DEFAULT_DURATION: f64 = 2.0;
pub const DEFAULT_WARMUP: f64 = 1.0;

/// What one model run covers.
pub struct Request<'a, V> {
    pub variants: &'a [V],
    pub tasks: &'a [usize],
    pub modes: &'a [Mode],
    pub plan: Plan,
    pub placement: &'a Placement,
    pub counters: bool,
    /// What to record around every point (`crate::monitor::monitoring`).
    pub monitoring: crate::monitor::monitoring::Plan,
    /// The command's working directory (a profile's data is written in a private directory
    /// made there).
    pub dir: &'a std::path::Path,
}

impl<V> Request<'_, V> {
    /// The run's monitoring (says which monitors this machine lacks, once).
    fn monitoring(&self, record: &RunRecord, progress: &Progress) -> anyhow::Result<Monitoring> {
        let run_id = record.uuid.clone().unwrap_or_default();
        Monitoring::start(&self.monitoring, self.dir, &run_id, progress)
    }
}

/// Adds a point's monitors window as the unit `variant`, `tasks`, `mode` (the window is the
/// whole point, warm-up included, so its operations are every sample's), with its rows.
fn add_monitors(
    record: &mut RunRecord,
    variant: &str,
    tasks: usize,
    mode: Mode,
    outcome: &Outcome,
    sample: crate::monitor::Sample,
) {
    let unit = Unit::new(
        &[
            ("variant", variant.to_string()),
            ("tasks", tasks.to_string()),
            ("mode", mode.plural().to_string()),
        ],
        format!("{variant} {tasks} {}", mode.plural()),
        Some(outcome.all_ops() as f64),
        sample,
    );
    record
        .metrics
        .extend(crate::record::monitors::metrics(std::slice::from_ref(
            &unit,
        )));
    record.monitors.push(unit);
}

/// The variants asked for (checked against `known`), or `default`.
pub fn pick_variants<T: Copy>(
    asked: &[String],
    known: &[(&'static str, T)],
    default: &[T],
) -> anyhow::Result<Vec<T>> {
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

/// The record's model details, made on first use.
fn details<'a>(record: &'a mut RunRecord, model: &str) -> &'a mut ModelDetails {
    record.model.get_or_insert_with(|| ModelDetails {
        model: model.to_string(),
        points: Vec::new(),
    })
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
