//! `patchbench scale`: will-it-scale's scaling curves. Every testcase runs at each task count,
//! as processes and/or threads, through the harness; the result is ops/s summed over tasks and
//! per task, a CSV in will-it-scale's columns, an SVG plot, and a run record whose metrics carry
//! LKP's names (`will-it-scale.per_process_ops`, `will-it-scale.2.threads`, …).

pub mod curves;
pub mod testcases;

use crate::counter_harness::session::{self, params, HarnessOpts, ModeChoice, Plan};
use crate::counter_harness::{self as harness, Mode};
use crate::error::usage;
use crate::record::{Direction, Metric, RunRecord};
use anyhow::Result;
use clap::Args;
use curves::Point;
use std::collections::BTreeMap;
use std::path::PathBuf;
use testcases::Testcase;

/// Default measured seconds per point (will-it-scale's runtest.py uses 5).
const DEFAULT_DURATION: f64 = 5.0;
/// Default warm-up: will-it-scale discards its first six one-second samples.
const DEFAULT_WARMUP: f64 = 6.0;

#[derive(Debug, Clone, Args)]
pub struct ScaleArgs {
    /// will-it-scale testcases, e.g. getppid1 open1 (`--list` shows them all).
    #[arg(value_name = "TEST", value_delimiter = ',')]
    pub tests: Vec<String>,
    /// List the testcases with their descriptions and exit.
    #[arg(long)]
    pub list: bool,
    /// Tasks as processes, threads, or both (processes then threads at each task count).
    #[arg(short, long, value_enum, default_value_t = ModeChoice::Both)]
    pub mode: ModeChoice,
    /// Write the curves as CSV (will-it-scale's columns, after a test column).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Plot ops/s against tasks, one line per mode and the linear line, as SVG.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    #[command(flatten)]
    pub opts: HarnessOpts,
}

/// Runs `patchbench scale`; returns the exit status.
pub fn execute(args: &ScaleArgs) -> Result<i32> {
    if args.list {
        for t in testcases::ALL {
            println!("{:<18} {}", t.name, t.description);
        }
        return Ok(0);
    }
    let tests = resolve(&args.tests)?;
    let tasks = session::task_counts(&args.opts);
    let modes = args.mode.modes();
    let helpers = tests.iter().map(|t| t.helpers).max().unwrap_or(0);
    let needed = tasks.iter().max().copied().unwrap_or(1) * (1 + helpers) + 1;
    let outputs: Vec<&std::path::Path> = [&args.csv, &args.svg]
        .into_iter()
        .flatten()
        .map(|p| p.as_path())
        .collect();
    let session = session::start(&args.opts, needed, &outputs)?;
    let plan = Plan::new(
        args.opts.sample_interval,
        args.opts.warmup.unwrap_or(DEFAULT_WARMUP),
        args.opts.duration.unwrap_or(DEFAULT_DURATION),
    );
    eprintln!(
        "patchbench scale: {} at tasks {:?}, {}; {} × {:.3} s samples after {} warm-up samples",
        tests.iter().map(|t| t.name).collect::<Vec<_>>().join(" "),
        tasks,
        harness::Mode::join(&modes),
        plan.samples,
        plan.interval.as_secs_f64(),
        plan.warmup,
    );

    let mut points = Vec::new();
    let mut failure = None;
    'all: for test in &tests {
        for &n in &tasks {
            for &mode in &modes {
                match session.run(*test, &plan.spec(n, mode, &args.opts)) {
                    Ok(outcome) => {
                        let p = Point {
                            test: test.name.to_string(),
                            description: test.description.to_string(),
                            mode,
                            tasks: n,
                            outcome,
                        };
                        eprintln!("  {}", point_line(&p));
                        points.push(p);
                    }
                    Err(e) => {
                        failure = Some(e);
                        break 'all;
                    }
                }
            }
        }
    }

    let curves = curves::curves(&points);
    if !points.is_empty() {
        print!("{}", summary(&curves));
        if let Some(path) = &args.csv {
            curves::write_atomic(path, &curves::csv_text(&curves)?)?;
            eprintln!("patchbench: wrote {}", path.display());
        }
        if let Some(path) = &args.svg {
            curves::write_atomic(path, crate::report::scale_svg::svg(&curves)?.as_bytes())?;
            eprintln!("patchbench: wrote {}", path.display());
        }
    }
    let record = record(args, &session.started_at, &plan, &tasks, &points);
    session::conclude(&args.opts, session, record, failure)?;
    Ok(0)
}

/// The testcases named, or one line saying which name is unknown.
fn resolve(names: &[String]) -> Result<Vec<&'static Testcase>> {
    if names.is_empty() {
        return usage(
            "give at least one testcase, e.g. `patchbench scale getppid1`; \
             `patchbench scale --list` shows them all",
        );
    }
    names
        .iter()
        .map(|n| match testcases::find(n.trim()) {
            Some(t) => Ok(t),
            None => usage(format!(
                "unknown testcase {n:?}; `patchbench scale --list` shows the {} testcases",
                testcases::ALL.len()
            )),
        })
        .collect()
}

fn point_line(p: &Point) -> String {
    let avg = p.outcome.average();
    format!(
        "{:<16} {:>2} {:<9} {:>14.0} ops/s {:>14.0} per task{}",
        p.test,
        p.tasks,
        p.mode.plural(),
        avg,
        avg / p.tasks as f64,
        p.outcome
            .idle_percent
            .map(|i| format!("  idle {i:.1}%"))
            .unwrap_or_default()
    )
}

/// The text report: one table per testcase, will-it-scale's columns.
fn summary(curves: &[curves::Curve]) -> String {
    let mut s = String::new();
    let f = |v: Option<f64>| v.map(|x| format!("{x:.0}")).unwrap_or_else(|| "-".into());
    let p = |v: Option<f64>| v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "-".into());
    for c in curves {
        s.push_str(&format!("\n{}: {}\n", c.test, c.description));
        s.push_str(&format!(
            "{:>6} {:>14} {:>7} {:>14} {:>7} {:>14}\n",
            "tasks", "processes", "idle%", "threads", "idle%", "linear"
        ));
        for r in &c.rows {
            s.push_str(&format!(
                "{:>6} {:>14} {:>7} {:>14} {:>7} {:>14.0}\n",
                r.tasks,
                f(r.processes),
                p(r.processes_idle),
                f(r.threads),
                p(r.threads_idle),
                r.linear
            ));
        }
    }
    s
}

/// LKP's metrics for one point: `will-it-scale.<N>.<mode>` (ops/s summed over tasks) and
/// `will-it-scale.per_<mode>_ops` (per task), with every per-second sample; plus per-operation
/// counter values when `--counters` found any.
pub fn point_metrics(p: &Point) -> Vec<Metric> {
    let rates = p.outcome.total_rates();
    let n = p.tasks as f64;
    let per = match p.mode {
        Mode::Process => "per_process_ops",
        Mode::Thread => "per_thread_ops",
    };
    let mut out = vec![
        Metric {
            name: format!("will-it-scale.{}.{}", p.tasks, p.mode.plural()),
            params: params(&[("test", p.test.clone())]),
            title: format!("{} {} {}", p.test, p.tasks, p.mode.plural()),
            unit: "ops/s".into(),
            direction: Direction::HigherIsBetter,
            value: p.outcome.average(),
            samples: rates.clone(),
        },
        Metric {
            name: format!("will-it-scale.{per}"),
            params: params(&[("test", p.test.clone()), ("tasks", p.tasks.to_string())]),
            title: format!("{} per-task ops at {} {}", p.test, p.tasks, p.mode.plural()),
            unit: "ops/s".into(),
            direction: Direction::HigherIsBetter,
            value: p.outcome.average() / n,
            samples: rates.iter().map(|r| r / n).collect(),
        },
    ];
    if let Some(c) = &p.outcome.counters {
        let ops: u64 = p.outcome.task_totals().iter().sum();
        for (event, v) in c.per_op(ops) {
            out.push(Metric {
                name: format!("will-it-scale.{event}-per-op"),
                params: params(&[
                    ("test", p.test.clone()),
                    ("tasks", p.tasks.to_string()),
                    ("mode", p.mode.plural().to_string()),
                ]),
                title: format!("{} {event} per operation", p.test),
                unit: format!("{event}/op"),
                direction: Direction::LowerIsBetter,
                value: v,
                samples: Vec::new(),
            });
        }
    }
    out
}

/// The JSON form of a point for the record's `extra`.
pub fn point_json(p: &Point) -> serde_json::Value {
    let totals = p.outcome.task_totals();
    serde_json::json!({
        "test": p.test,
        "mode": p.mode.plural(),
        "tasks": p.tasks,
        "ops_per_sec": p.outcome.average(),
        "ops_per_sec_per_task": p.outcome.average() / p.tasks as f64,
        "idle_percent": p.outcome.idle_percent,
        "measured_seconds": p.outcome.seconds(),
        "samples": p.outcome.total_rates(),
        "warmup_samples": p.outcome.warmup.iter().map(|s| s.total_rate()).collect::<Vec<_>>(),
        "per_task_ops": totals,
        "counters_per_op": p.outcome.counters.as_ref().map(|c| {
            c.per_op(totals.iter().sum()).into_iter().collect::<BTreeMap<_, _>>()
        }),
    })
}

fn record(
    args: &ScaleArgs,
    started_at: &str,
    plan: &Plan,
    tasks: &[usize],
    points: &[Point],
) -> RunRecord {
    let mut config = BTreeMap::new();
    config.insert("tests".into(), serde_json::json!(args.tests));
    config.insert("tasks".into(), serde_json::json!(tasks));
    config.insert(
        "modes".into(),
        serde_json::json!(args
            .mode
            .modes()
            .iter()
            .map(|m| m.plural())
            .collect::<Vec<_>>()),
    );
    config.insert(
        "sample_seconds".into(),
        serde_json::json!(plan.interval.as_secs_f64()),
    );
    config.insert("warmup_samples".into(), serde_json::json!(plan.warmup));
    config.insert("samples".into(), serde_json::json!(plan.samples));
    config.insert("pin".into(), serde_json::json!(args.opts.pin));
    config.insert("counters".into(), serde_json::json!(args.opts.counters));
    let mut record = session::new_record("will-it-scale", &args.opts, started_at, config);
    record.metrics = points.iter().flat_map(point_metrics).collect();
    record.extra.insert(
        "points".into(),
        serde_json::Value::Array(points.iter().map(point_json).collect()),
    );
    record
}
