//! model-isize: "fs: make the i_size_read/write helpers be smp_load_acquire/store_release()",
//! in user space.
//!
//! Task 0 is the writer: it appends blocks of data to a ring buffer and then publishes the new
//! size (in words). Every other task is a reader: it reads the size and checks the block just
//! below it. The word at absolute index `w` holds `w + 1`, so a slot holding less than that is
//! data the reader was not yet allowed to see: an ordering *violation*. (Slots only ever grow,
//! so a writer that has lapped the ring since is no violation.)
//!
//! Variants: `fence` (relaxed size load + acquire fence; writer release fence + relaxed store),
//! `acquire` (load-acquire / store-release), `seqcount` (the 32-bit SMP kernels' sequence
//! counter around the size), and `publish-first`, a deliberately wrong writer that publishes
//! the size before writing the data, so the checker can be seen to count violations.

use super::{counter_line, details, Request};
use crate::counter_harness::session::Session;
use crate::counter_harness::{Mode, Outcome, TaskCtx, Workload};
use crate::error::RunFailed;
use crate::monitor::monitoring::Monitoring;
use crate::progress::Progress;
use crate::record::model::ModelPoint;
use crate::record::sink::Sinks;
use crate::record::{Direction, Metric, RunRecord};
use anyhow::Result;
use serde::Serialize;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{fence, AtomicU64};

pub const DESCRIPTION: &str = "one writer appends data then publishes the size; readers check \
                               the bytes below the size they read";
pub const VARIANTS: [&str; 4] = ["fence", "acquire", "seqcount", "publish-first"];

/// Words per block the writer appends (64 bytes, one cache line).
pub const BLOCK: u64 = 8;
/// Words in the ring buffer (1 MiB); a power of two.
pub const CAPACITY: usize = 1 << 17;
/// Where the data starts in the shared area: words 0 (size) and 1 (sequence) share a line as
/// `i_size` and its seqcount do; the data begins two cache lines later.
const DATA: usize = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Fence,
    Acquire,
    Seqcount,
    PublishFirst,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Fence => "fence",
            Variant::Acquire => "acquire",
            Variant::Seqcount => "seqcount",
            Variant::PublishFirst => "publish-first",
        }
    }
}

/// One variant as a harness workload.
pub struct ISize {
    pub variant: Variant,
}

/// True when every word of the block below `size` holds its value (or a newer one).
pub fn block_ok(data: &[AtomicU64], size: u64) -> bool {
    (size.saturating_sub(BLOCK)..size).all(|w| data[w as usize & (CAPACITY - 1)].load(Relaxed) > w)
}

impl ISize {
    fn write_block(data: &[AtomicU64], from: u64) {
        for w in from..from + BLOCK {
            data[w as usize & (CAPACITY - 1)].store(w + 1, Relaxed);
        }
    }

    fn writer(&self, ctx: &TaskCtx<'_>, size: &AtomicU64, seq: &AtomicU64, data: &[AtomicU64]) {
        let mut words = 0u64;
        loop {
            let next = words + BLOCK;
            match self.variant {
                Variant::Fence => {
                    Self::write_block(data, words);
                    fence(Release);
                    size.store(next, Relaxed);
                }
                Variant::Acquire => {
                    Self::write_block(data, words);
                    size.store(next, Release);
                }
                Variant::Seqcount => {
                    Self::write_block(data, words);
                    let s = seq.load(Relaxed);
                    seq.store(s + 1, Relaxed);
                    fence(Release);
                    size.store(next, Relaxed);
                    seq.store(s + 2, Release);
                }
                Variant::PublishFirst => {
                    size.store(next, Relaxed);
                    Self::write_block(data, words);
                }
            }
            words = next;
            ctx.slot.add(1);
        }
    }

    fn read_size(&self, size: &AtomicU64, seq: &AtomicU64) -> u64 {
        match self.variant {
            Variant::Fence | Variant::PublishFirst => {
                let s = size.load(Relaxed);
                fence(Acquire);
                s
            }
            Variant::Acquire => size.load(Acquire),
            Variant::Seqcount => loop {
                let s1 = seq.load(Acquire);
                if s1 & 1 == 1 {
                    std::hint::spin_loop();
                    continue;
                }
                let s = size.load(Relaxed);
                fence(Acquire);
                if seq.load(Relaxed) == s1 {
                    break s;
                }
            },
        }
    }

    fn reader(&self, ctx: &TaskCtx<'_>, size: &AtomicU64, seq: &AtomicU64, data: &[AtomicU64]) {
        loop {
            let s = self.read_size(size, seq);
            if !block_ok(data, s) {
                ctx.slot.add_aux(1);
            }
            ctx.slot.add(1);
        }
    }
}

impl Workload for ISize {
    fn shared_bytes(&self) -> usize {
        (DATA + CAPACITY) * 8
    }

    fn run(&self, ctx: &TaskCtx<'_>) -> Result<()> {
        let words = ctx.shared.words();
        let (size, seq, data) = (&words[0], &words[1], &words[DATA..DATA + CAPACITY]);
        if ctx.nr == 0 {
            self.writer(ctx, size, seq, data);
        } else {
            self.reader(ctx, size, seq, data);
        }
        Ok(())
    }
}

/// What one point measured: rates, the reads made and the violations seen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Result1 {
    pub reader_rate: f64,
    pub writer_rate: f64,
    pub reads: u64,
    pub violations: u64,
}

fn summarise(outcome: &Outcome, tasks: usize) -> Result1 {
    let totals = outcome.task_totals();
    let secs = outcome.seconds().max(f64::MIN_POSITIVE);
    Result1 {
        reader_rate: totals[1..].iter().sum::<u64>() as f64 / secs,
        writer_rate: totals[0] as f64 / secs,
        reads: totals[1..].iter().sum(),
        violations: outcome.aux[1..tasks].iter().sum(),
    }
}

/// The settings a model-isize run records.
#[derive(Debug, Clone, Serialize)]
pub struct Config {
    pub model: &'static str,
    /// Reader tasks (one writer runs besides them).
    pub tasks: Vec<usize>,
    pub modes: Vec<&'static str>,
    /// Whether tasks were bound (the details are in `placement`).
    pub pin: bool,
    pub placement: crate::counter_harness::placement::Placement,
    pub aslr: crate::counter_harness::aslr::Aslr,
    pub min_reads: u64,
    pub variants: Vec<&'static str>,
}

/// The variants by name, and those run by default (every correct one).
pub const CHOICES: &[(&str, Variant)] = &[
    ("fence", Variant::Fence),
    ("acquire", Variant::Acquire),
    ("seqcount", Variant::Seqcount),
    ("publish-first", Variant::PublishFirst),
];
pub const DEFAULT: &[Variant] = &[Variant::Fence, Variant::Acquire, Variant::Seqcount];

/// Runs every variant with every reader count in every mode (`req.tasks` counts readers),
/// adding each point to `record` and handing it to `sinks` as it finishes. Returns the points
/// where a correct variant saw a violation.
pub fn run(
    req: &Request<'_, Variant>,
    min_reads: u64,
    session: &Session,
    record: &mut RunRecord,
    sinks: &mut Sinks,
    progress: &mut Progress,
) -> Result<Vec<String>> {
    let mut monitoring = req.monitoring(record, progress)?;
    let out = run_points(
        req,
        min_reads,
        session,
        &mut monitoring,
        record,
        sinks,
        progress,
    );
    monitoring.finish().and(out)
}

fn run_points(
    req: &Request<'_, Variant>,
    min_reads: u64,
    session: &Session,
    monitoring: &mut Monitoring,
    record: &mut RunRecord,
    sinks: &mut Sinks,
    progress: &mut Progress,
) -> Result<Vec<String>> {
    let enough = move |t: &[u64]| t[1..].iter().sum::<u64>() >= min_reads;
    let mut bad = Vec::new();
    for &mode in req.modes {
        for &r in req.tasks {
            for &variant in req.variants {
                progress.show(&format!(
                    "model-isize {} · {r} readers {}",
                    variant.name(),
                    mode.plural()
                ));
                let mut spec = req.plan.spec(r + 1, mode, req.placement, req.counters);
                spec.until = Some(&enough);
                spec.max_extra = (120.0 / req.plan.interval.as_secs_f64()).ceil() as usize;
                let window = monitoring.open(&format!("{}-{r}-{}", variant.name(), mode.plural()));
                let outcome = session.run(&ISize { variant }, &spec)?;
                if let Some(w) = window {
                    let sample = monitoring.close(w, progress);
                    super::add_monitors(record, variant.name(), r, mode, &outcome, sample);
                }
                let s = summarise(&outcome, r + 1);
                let note = if variant == Variant::PublishFirst {
                    "  (planted bug: size published before the data)"
                } else {
                    ""
                };
                progress.line(&format!(
                    "  {:<13} {:>2} readers {:<9} {:>13.0} reads/s {:>12.0} blocks/s {:>11} reads \
                     {:>9} violations{note}{}",
                    variant.name(),
                    r,
                    mode.plural(),
                    s.reader_rate,
                    s.writer_rate,
                    s.reads,
                    s.violations,
                    counter_line(&outcome, 0..r + 1)
                        .map(|l| format!("  {l}"))
                        .unwrap_or_default()
                ));
                if s.violations > 0 && variant != Variant::PublishFirst {
                    bad.push(format!(
                        "{} ({} readers, {})",
                        variant.name(),
                        r,
                        mode.plural()
                    ));
                }
                let reader_samples: Vec<f64> = outcome
                    .measured
                    .iter()
                    .map(|x| x.rate_of(1..r + 1))
                    .collect();
                let writer_samples: Vec<f64> =
                    outcome.measured.iter().map(|x| x.rate_of(0..1)).collect();
                record.metrics.extend(point_metrics(
                    variant,
                    r,
                    mode,
                    &s,
                    reader_samples,
                    writer_samples,
                ));
                details(record, "model-isize").points.push(ModelPoint {
                    variant: variant.name().into(),
                    mode: mode.plural().into(),
                    tasks: r,
                    reads_per_sec: Some(s.reader_rate),
                    writes_per_sec: Some(s.writer_rate),
                    reads: Some(s.reads),
                    violations: Some(s.violations),
                    ..ModelPoint::default()
                });
                record.finished_at = crate::clock::now_rfc3339();
                sinks.progress(record);
            }
        }
    }
    Ok(bad)
}

/// The metrics of one point: reads/s and blocks/s (with their per-sample rates), the
/// violations and the reads of `variant` with `readers` reader tasks in `mode`.
pub fn point_metrics(
    variant: Variant,
    readers: usize,
    mode: Mode,
    s: &Result1,
    reader_samples: Vec<f64>,
    writer_samples: Vec<f64>,
) -> Vec<Metric> {
    let p = [
        ("variant", variant.name().to_string()),
        ("readers", readers.to_string()),
        ("mode", mode.plural().to_string()),
    ];
    [
        (
            "reader_ops",
            "reads/s",
            Direction::HigherIsBetter,
            s.reader_rate,
            reader_samples,
        ),
        (
            "writer_ops",
            "blocks/s",
            Direction::HigherIsBetter,
            s.writer_rate,
            writer_samples,
        ),
        (
            "violations",
            "reads",
            Direction::LowerIsBetter,
            s.violations as f64,
            vec![],
        ),
        (
            "reads",
            "reads",
            Direction::HigherIsBetter,
            s.reads as f64,
            vec![],
        ),
    ]
    .into_iter()
    .map(|(name, unit, dir, value, samples)| {
        Metric::new(
            format!("model.isize.{name}"),
            &p,
            format!("isize {} {name}", variant.name()),
            unit,
            dir,
            value,
            samples,
        )
    })
    .collect()
}

/// The failure of a run whose correct variants saw violations.
pub fn violations_error(bad: &[String]) -> Option<anyhow::Error> {
    (!bad.is_empty()).then(|| {
        RunFailed(format!(
            "ordering violations in {}: the memory-ordering code is wrong",
            bad.join(", ")
        ))
        .into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring() -> Vec<AtomicU64> {
        (0..CAPACITY).map(|_| AtomicU64::new(0)).collect()
    }

    #[test]
    fn checker_counts_a_size_published_before_its_data() {
        let data = ring();
        assert!(block_ok(&data, 0));
        ISize::write_block(&data, 0);
        assert!(block_ok(&data, BLOCK));
        // Planted: size says two blocks, only one was written.
        assert!(!block_ok(&data, 2 * BLOCK));
        ISize::write_block(&data, BLOCK);
        assert!(block_ok(&data, 2 * BLOCK));
    }

    #[test]
    fn a_lapping_writer_is_no_violation_but_stale_data_is() {
        let data = ring();
        let lap = CAPACITY as u64;
        // The writer has lapped: slots of block 0 now hold block `lap`'s newer values.
        ISize::write_block(&data, lap);
        assert!(block_ok(&data, BLOCK));
        // A size one lap ahead of data that still holds the old lap's values is a violation.
        let old = ring();
        ISize::write_block(&old, 0);
        assert!(!block_ok(&old, lap + BLOCK));
    }
}
