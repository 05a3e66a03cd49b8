//! model-setbit: "buffer: Avoid setting buffer bits that are already set", in user space.
//!
//! T tasks share one 64-bit flags word in its own cache line (threads, or processes mapping the
//! same shared page) and keep "setting" a flag that is already set. `always` does an atomic
//! fetch-or every iteration: each one needs the line in the exclusive state, so with tasks on
//! several cores the line bounces between them. `test-first` loads the word first and only
//! does the fetch-or when the bit is clear (never, after the first iteration): the line stays
//! shared in every core's cache. With `--read-mix` each iteration also loads a second word of
//! the same line, as `buffer_uptodate()` checks do. The report gives ops/s per task for both
//! variants and the ratio test-first / always at each task count.

use super::{counter_line, details, Request};
use crate::counter_harness::session::Session;
use crate::counter_harness::{Mode, TaskCtx, Workload};
use crate::monitor::monitoring::Monitoring;
use crate::progress::Progress;
use crate::record::model::ModelPoint;
use crate::record::sink::Sinks;
use crate::record::{Direction, Metric, RunRecord};
use anyhow::Result;
use serde::Serialize;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::atomic::Ordering::Relaxed;

pub const DESCRIPTION: &str = "tasks set an already-set bit in one shared word: atomic \
                               fetch-or every time, or load first and fetch-or only if clear";
pub const VARIANTS: [&str; 2] = ["always", "test-first"];

/// The flag the tasks set.
const FLAG: u64 = 1 << 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Always,
    TestFirst,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Always => "always",
            Variant::TestFirst => "test-first",
        }
    }
}

/// One variant as a harness workload.
pub struct SetBit {
    pub variant: Variant,
    pub read_mix: bool,
}

impl Workload for SetBit {
    fn shared_bytes(&self) -> usize {
        crate::counter_harness::page_size()
    }

    fn run(&self, ctx: &TaskCtx<'_>) -> Result<()> {
        // Word 0 is the flags, word 1 the word a read mix loads: one cache line.
        let words = ctx.shared.words();
        let (flags, other) = (&words[0], &words[1]);
        match (self.variant, self.read_mix) {
            (Variant::Always, false) => loop {
                flags.fetch_or(FLAG, Relaxed);
                ctx.slot.add(1);
            },
            (Variant::Always, true) => loop {
                flags.fetch_or(FLAG, Relaxed);
                black_box(other.load(Relaxed));
                ctx.slot.add(1);
            },
            (Variant::TestFirst, false) => loop {
                if flags.load(Relaxed) & FLAG == 0 {
                    flags.fetch_or(FLAG, Relaxed);
                }
                ctx.slot.add(1);
            },
            (Variant::TestFirst, true) => loop {
                if flags.load(Relaxed) & FLAG == 0 {
                    flags.fetch_or(FLAG, Relaxed);
                }
                black_box(other.load(Relaxed));
                ctx.slot.add(1);
            },
        }
    }
}

/// test-first / always, or None when `always` measured nothing.
pub fn ratio(test_first: f64, always: f64) -> Option<f64> {
    (always > 0.0).then(|| test_first / always)
}

/// The settings a model-setbit run records.
#[derive(Debug, Clone, Serialize)]
pub struct Config {
    pub model: &'static str,
    pub tasks: Vec<usize>,
    pub modes: Vec<&'static str>,
    /// Whether tasks were bound (the details are in `placement`).
    pub pin: bool,
    pub placement: crate::counter_harness::placement::Placement,
    pub aslr: crate::counter_harness::aslr::Aslr,
    pub read_mix: bool,
    pub variants: Vec<&'static str>,
}

/// The variants by name, and those run by default.
pub const CHOICES: &[(&str, Variant)] = &[
    ("always", Variant::Always),
    ("test-first", Variant::TestFirst),
];
pub const DEFAULT: &[Variant] = &[Variant::Always, Variant::TestFirst];

/// Runs every variant at every task count in every mode, adding each point to `record` and
/// handing it to `sinks` as it finishes.
pub fn run(
    req: &Request<'_, Variant>,
    read_mix: bool,
    session: &Session,
    record: &mut RunRecord,
    sinks: &mut Sinks,
    progress: &mut Progress,
) -> Result<()> {
    let mut monitoring = req.monitoring(record, progress)?;
    let out = run_points(
        req,
        read_mix,
        session,
        &mut monitoring,
        record,
        sinks,
        progress,
    );
    out.and(monitoring.finish())
}

fn run_points(
    req: &Request<'_, Variant>,
    read_mix: bool,
    session: &Session,
    monitoring: &mut Monitoring,
    record: &mut RunRecord,
    sinks: &mut Sinks,
    progress: &mut Progress,
) -> Result<()> {
    for &mode in req.modes {
        for &n in req.tasks {
            let mut per_task = BTreeMap::new();
            for &variant in req.variants {
                progress.show(&format!(
                    "model-setbit {} · {n} {}",
                    variant.name(),
                    mode.plural()
                ));
                let work = SetBit { variant, read_mix };
                let window = monitoring.open(&format!("{}-{n}-{}", variant.name(), mode.plural()));
                let outcome =
                    session.run(&work, &req.plan.spec(n, mode, req.placement, req.counters))?;
                if let Some(w) = window {
                    let sample = monitoring.close(w, progress);
                    super::add_monitors(record, variant.name(), n, mode, &outcome, sample);
                }
                let rates: Vec<f64> = outcome.total_rates().iter().map(|r| r / n as f64).collect();
                let value = outcome.average() / n as f64;
                progress.line(&format!(
                    "  {:<10} {:>2} {:<9} {:>14.0} ops/s per task{}",
                    variant.name(),
                    n,
                    mode.plural(),
                    value,
                    counter_line(&outcome, 0..n)
                        .map(|l| format!("  {l}"))
                        .unwrap_or_default()
                ));
                record
                    .metrics
                    .push(point_metric(variant, n, mode, value, rates));
                per_task.insert(variant.name(), value);
                details(record, "model-setbit").points.push(ModelPoint {
                    variant: variant.name().into(),
                    mode: mode.plural().into(),
                    tasks: n,
                    ops_per_sec_per_task: Some(value),
                    ..ModelPoint::default()
                });
                record.finished_at = crate::clock::now_rfc3339();
                sinks.progress(record);
            }
            if let (Some(t), Some(a)) = (per_task.get("test-first"), per_task.get("always")) {
                if let Some(r) = ratio(*t, *a) {
                    record.metrics.push(ratio_metric(n, mode, r));
                    sinks.progress(record);
                }
            }
        }
    }
    Ok(())
}

/// The metric of one point: ops/s per task of `variant` at `n` tasks in `mode`, with the
/// per-sample rates.
pub fn point_metric(variant: Variant, n: usize, mode: Mode, value: f64, rates: Vec<f64>) -> Metric {
    Metric::new(
        "model.setbit.ops_per_task",
        &[
            ("variant", variant.name().into()),
            ("tasks", n.to_string()),
            ("mode", mode.plural().into()),
        ],
        format!("setbit {} at {n} {}", variant.name(), mode.plural()),
        "ops/s",
        Direction::HigherIsBetter,
        value,
        rates,
    )
}

/// The metric of the test-first/always ratio at `n` tasks in `mode`.
pub fn ratio_metric(n: usize, mode: Mode, r: f64) -> Metric {
    Metric::new(
        "model.setbit.ratio",
        &[("tasks", n.to_string()), ("mode", mode.plural().into())],
        format!("setbit test-first/always at {n} {}", mode.plural()),
        "ratio",
        Direction::HigherIsBetter,
        r,
        Vec::new(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_is_test_first_over_always() {
        assert_eq!(ratio(300.0, 100.0), Some(3.0));
        assert_eq!(ratio(1.0, 0.0), None);
    }
}
