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

use super::{base_config, counter_line, pick_variants, plan, ModelArgs};
use crate::counter_harness::session::{self, params};
use crate::counter_harness::{Mode, TaskCtx, Workload};
use crate::record::{Direction, Metric};
use anyhow::Result;
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
    fn name(self) -> &'static str {
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

pub fn execute(args: &ModelArgs) -> Result<i32> {
    let variants = pick_variants(
        &args.variants,
        &[
            ("always", Variant::Always),
            ("test-first", Variant::TestFirst),
        ],
        &[Variant::Always, Variant::TestFirst],
    )?;
    let tasks = session::task_counts(&args.opts);
    let modes = args.mode.modes();
    let needed = tasks.iter().max().copied().unwrap_or(1) + 1;
    let session = session::start(&args.opts, needed, &[])?;
    let plan = plan(&args.opts);
    eprintln!(
        "patchbench model-setbit: tasks {tasks:?}, {}, read mix {}; {} × {:.3} s samples after \
         {} warm-up samples",
        crate::counter_harness::Mode::join(&modes),
        if args.read_mix { "on" } else { "off" },
        plan.samples,
        plan.interval.as_secs_f64(),
        plan.warmup
    );

    let mut metrics = Vec::new();
    let mut rows = Vec::new();
    let mut failure = None;
    'all: for &mode in &modes {
        for &n in &tasks {
            let mut per_task = BTreeMap::new();
            for &variant in &variants {
                let work = SetBit {
                    variant,
                    read_mix: args.read_mix,
                };
                let outcome = match session.run(&work, &plan.spec(n, mode, &args.opts)) {
                    Ok(o) => o,
                    Err(e) => {
                        failure = Some(e);
                        break 'all;
                    }
                };
                let rates: Vec<f64> = outcome.total_rates().iter().map(|r| r / n as f64).collect();
                let value = outcome.average() / n as f64;
                eprintln!(
                    "  {:<10} {:>2} {:<9} {:>14.0} ops/s per task{}",
                    variant.name(),
                    n,
                    mode.plural(),
                    value,
                    counter_line(&outcome, 0..n)
                        .map(|l| format!("  {l}"))
                        .unwrap_or_default()
                );
                metrics.push(Metric {
                    name: "model.setbit.ops_per_task".into(),
                    params: params(&[
                        ("variant", variant.name().into()),
                        ("tasks", n.to_string()),
                        ("mode", mode.plural().into()),
                    ]),
                    title: format!("setbit {} at {n} {}", variant.name(), mode.plural()),
                    unit: "ops/s".into(),
                    direction: Direction::HigherIsBetter,
                    value,
                    samples: rates,
                });
                per_task.insert(variant.name(), value);
            }
            let r = match (per_task.get("test-first"), per_task.get("always")) {
                (Some(t), Some(a)) => ratio(*t, *a),
                _ => None,
            };
            if let Some(r) = r {
                metrics.push(Metric {
                    name: "model.setbit.ratio".into(),
                    params: params(&[("tasks", n.to_string()), ("mode", mode.plural().into())]),
                    title: format!("setbit test-first/always at {n} {}", mode.plural()),
                    unit: "ratio".into(),
                    direction: Direction::HigherIsBetter,
                    value: r,
                    samples: Vec::new(),
                });
            }
            rows.push((mode, n, per_task, r));
        }
    }

    if !rows.is_empty() {
        print!("{}", table(&rows));
    }
    let mut config = base_config(args, &tasks, &modes);
    config.insert("read_mix".into(), serde_json::json!(args.read_mix));
    config.insert(
        "variants".into(),
        serde_json::json!(variants.iter().map(|v| v.name()).collect::<Vec<_>>()),
    );
    let mut record = session::new_record("model", &args.opts, &session.started_at, config);
    record.metrics = metrics;
    session::conclude(&args.opts, session, record, failure)?;
    Ok(0)
}

type Row<'a> = (Mode, usize, BTreeMap<&'a str, f64>, Option<f64>);

fn table(rows: &[Row<'_>]) -> String {
    let mut s = format!(
        "\n{:<9} {:>6} {:>18} {:>18} {:>18}\n",
        "mode", "tasks", "always ops/s/task", "test-first ops/s", "test-first/always"
    );
    let f = |v: Option<&f64>| v.map(|x| format!("{x:.0}")).unwrap_or_else(|| "-".into());
    for (mode, n, per_task, r) in rows {
        s.push_str(&format!(
            "{:<9} {:>6} {:>18} {:>18} {:>18}\n",
            mode.plural(),
            n,
            f(per_task.get("always")),
            f(per_task.get("test-first")),
            r.map(|x| format!("{x:.2}")).unwrap_or_else(|| "-".into())
        ));
    }
    s
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
