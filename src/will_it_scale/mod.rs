//! will-it-scale: the testcases (one small file each in `testcases/`) and the run that takes
//! every testcase through each task count, as processes and/or threads, on the shared-memory
//! counter harness. Each finished point becomes a typed [`ScalePoint`] with LKP-named metrics
//! (`will-it-scale.per_process_ops`, `will-it-scale.2.threads`, …) and goes to the run's sinks
//! at once, so an interruption keeps every point that finished. Before the first point,
//! [`preflight`] runs every testcase's set-up once, so one this machine cannot run is refused
//! before anything is measured.

pub mod testcases;

use crate::counter_harness::aslr::Aslr;
use crate::counter_harness::placement::Placement;
use crate::counter_harness::session::{Plan, Session};
use crate::counter_harness::{Mode, Outcome};
use crate::monitor::monitoring::Monitoring;
use crate::progress::Progress;
use crate::record::monitors::Unit;
use crate::record::sink::Sinks;
use crate::record::will_it_scale::{ScaleDetails, ScalePoint};
use crate::record::{Direction, Metric, RunRecord};
use serde::Serialize;
use testcases::Testcase;

/// Default measured seconds per point (will-it-scale's runtest.py uses 5).
pub const DEFAULT_DURATION: f64 = 5.0;
/// Default warm-up: will-it-scale discards its first six one-second samples.
pub const DEFAULT_WARMUP: f64 = 6.0;

/// The settings a will-it-scale run records.
#[derive(Debug, Clone, Serialize)]
pub struct Config {
    pub tests: Vec<String>,
    pub tasks: Vec<usize>,
    pub modes: Vec<&'static str>,
    pub sample_seconds: f64,
    pub warmup_samples: usize,
    pub samples: usize,
    /// Whether tasks were bound (the details are in `placement`).
    pub pin: bool,
    /// Where each task ran: `pinned_to` (`cores`, `hw-threads` or `none`), `order` (the CPU
    /// sets in the order tasks take them: task i gets `order[i % order.len()]`), `allowed`
    /// (the CPUs patchbench could use) and `topology` (`sysfs`, or `none`).
    pub placement: Placement,
    /// Whether the tasks' address-space layout was randomised, and why.
    pub aslr: Aslr,
    pub counters: bool,
}

/// What one run covers.
pub struct Request<'a> {
    pub tests: &'a [&'static Testcase],
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

/// Runs every point, adding each to `record` and handing it to `sinks` as it finishes.
pub fn run(
    req: &Request,
    session: &Session,
    record: &mut RunRecord,
    sinks: &mut Sinks,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    let run_id = record.uuid.clone().unwrap_or_default();
    let mut monitoring = Monitoring::start(&req.monitoring, req.dir, &run_id, progress)?;
    let out = run_points(req, session, &mut monitoring, record, sinks, progress);
    out.and(monitoring.finish())
}

fn run_points(
    req: &Request,
    session: &Session,
    monitoring: &mut Monitoring,
    record: &mut RunRecord,
    sinks: &mut Sinks,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    for test in req.tests {
        for &n in req.tasks {
            for &mode in req.modes {
                progress.show(&format!("{} · {n} {}", test.name, mode.plural()));
                let spec = req.plan.spec(n, mode, req.placement, req.counters);
                let window = monitoring.open(&format!("{}-{n}-{}", test.name, mode.plural()));
                let outcome = session.run(*test, &spec).map_err(|e| {
                    // Name the point that failed (a signal is not the point's fault).
                    if e.downcast_ref::<crate::error::Interrupted>().is_some() {
                        e
                    } else {
                        e.context(format!("{} at {n} {}", test.name, mode.plural()))
                    }
                })?;
                let p = point(test, mode, n, &outcome);
                progress.line(&format!("  {}", point_line(&p)));
                for w in p.noise.iter().flat_map(|a| a.warnings()) {
                    progress.line(&format!("  noise: {w}"));
                }
                record.metrics.extend(point_metrics(&p));
                if let Some(w) = window {
                    let unit = monitor_unit(&p, &outcome, monitoring.close(w, progress));
                    record
                        .metrics
                        .extend(crate::record::monitors::per_cpu_second(
                            "will-it-scale.ops-per-cpu-s",
                            &unit,
                            &format!("{} {} {}", p.test, p.tasks, p.mode),
                            "ops",
                        ));
                    record
                        .metrics
                        .extend(crate::record::monitors::metrics(std::slice::from_ref(
                            &unit,
                        )));
                    record.monitors.push(unit);
                }
                record
                    .will_it_scale
                    .get_or_insert_with(ScaleDetails::default)
                    .points
                    .push(p);
                record.finished_at = crate::clock::now_rfc3339();
                sinks.progress(record);
            }
        }
    }
    Ok(())
}

/// Runs every testcase's `prepare` once, at the largest task count, before anything is
/// measured, so a testcase that cannot run here (O_DIRECT refused, no tmpfs in /dev/shm) is
/// refused with its one line before the first point rather than after the others ran.
pub fn preflight(tests: &[&Testcase], session: &Session, tasks: usize) -> anyhow::Result<()> {
    for t in tests {
        let prepared = (t.prepare)(session.dir.path(), tasks);
        session.empty()?;
        drop(prepared?);
    }
    Ok(())
}

/// The typed point of one measured outcome.
pub fn point(test: &Testcase, mode: Mode, tasks: usize, outcome: &Outcome) -> ScalePoint {
    let totals = outcome.task_totals();
    ScalePoint {
        test: test.name.to_string(),
        description: test.description.to_string(),
        mode: mode.plural().to_string(),
        tasks,
        ops_per_sec: outcome.average(),
        ops_per_sec_per_task: outcome.average() / tasks as f64,
        idle_percent: outcome.idle_percent,
        measured_idle_percent: outcome.measured_idle_percent,
        measured_seconds: outcome.seconds(),
        samples: outcome.total_rates(),
        warmup_samples: outcome.warmup.iter().map(|s| s.total_rate()).collect(),
        counters_per_op: outcome
            .counters
            .as_ref()
            .map(|c| c.per_op(totals.iter().sum()).into_iter().collect()),
        per_task_ops: totals,
        noise: outcome.noise.clone(),
    }
}

/// A point's monitors as the unit `test`, `tasks`, `mode`. The window is the whole point
/// (set-up, warm-up, measured samples, clean-up: the tasks are reaped at its end), so its
/// operations are those of the warm-up and measured samples.
fn monitor_unit(p: &ScalePoint, outcome: &Outcome, sample: crate::monitor::Sample) -> Unit {
    let ops = outcome.all_ops();
    Unit::new(
        &[
            ("test", p.test.clone()),
            ("tasks", p.tasks.to_string()),
            ("mode", p.mode.clone()),
        ],
        p.test.clone(),
        Some(ops as f64),
        sample,
    )
}

/// The line a finished point prints on stderr, ops/s as the integers will-it-scale prints.
pub fn point_line(p: &ScalePoint) -> String {
    format!(
        "{:<16} {:>2} {:<9} {:>14} ops/s {:>14} per task{}",
        p.test,
        p.tasks,
        p.mode,
        p.ops_per_sec as u64,
        p.ops_per_sec_per_task as u64,
        p.idle_percent
            .map(|i| format!("  idle {i:.1}%"))
            .unwrap_or_default()
    )
}

/// LKP's metrics for one point: `will-it-scale.<N>.<mode>` (ops/s summed over tasks) and
/// `will-it-scale.per_<mode>_ops` (per task), with every per-second sample; plus per-operation
/// counter values when `--counters` found any.
pub fn point_metrics(p: &ScalePoint) -> Vec<Metric> {
    let n = p.tasks as f64;
    let per = if p.mode == Mode::Thread.plural() {
        "per_thread_ops"
    } else {
        "per_process_ops"
    };
    let mut out = vec![
        Metric::new(
            format!("will-it-scale.{}.{}", p.tasks, p.mode),
            &[("test", p.test.clone())],
            format!("{} {} {}", p.test, p.tasks, p.mode),
            "ops/s",
            Direction::HigherIsBetter,
            p.ops_per_sec,
            p.samples.clone(),
        ),
        Metric::new(
            format!("will-it-scale.{per}"),
            &[("test", p.test.clone()), ("tasks", p.tasks.to_string())],
            format!("{} per-task ops at {} {}", p.test, p.tasks, p.mode),
            "ops/s",
            Direction::HigherIsBetter,
            p.ops_per_sec_per_task,
            p.samples.iter().map(|r| r / n).collect(),
        ),
    ];
    for (event, v) in p.counters_per_op.iter().flatten() {
        out.push(Metric::new(
            format!("will-it-scale.{event}-per-op"),
            &[
                ("test", p.test.clone()),
                ("tasks", p.tasks.to_string()),
                ("mode", p.mode.clone()),
            ],
            format!("{} {event} per operation", p.test),
            format!("{event}/op"),
            Direction::LowerIsBetter,
            *v,
            Vec::new(),
        ));
    }
    out
}
