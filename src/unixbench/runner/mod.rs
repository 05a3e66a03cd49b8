//! The UnixBench runner: makes the private working directory, runs every test at every copy
//! count pass by pass, scores the passes, and hands the growing result to the run's sinks
//! (store, JSON file, report) after every test. The command's arguments and checks are in
//! `crate::commands::run`.
//!
//! Order as UnixBench: for each copy count, every selected test; for each test, its passes;
//! before each pass, unless settle is off, `sync; sleep 1; sync; sleep 2`.

pub mod adaptive;
pub mod pass;
pub mod record;
pub mod scoring;
pub mod tools;

use crate::error::{usage, Interrupted};
use crate::monitor::monitoring::Monitoring;
use crate::noise::activity::Watch;
use crate::proc::signals::Signals;
use crate::progress::Progress;
use crate::record::sink::Sinks;
use crate::record::{PassResult, RunRecord};
use crate::unixbench::catalog::{self, TestSpec};
use crate::unixbench::workloads;
use adaptive::Adaptive;
use pass::{run_pass, PassPlan};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Settings of a run after defaults and profiles are applied.
#[derive(Debug, Clone)]
pub struct Plan {
    pub tests: Vec<&'static TestSpec>,
    pub copies: Vec<u32>,
    /// Passes for every test, or None for UnixBench's 10 long / 3 short.
    pub passes: Option<u32>,
    /// Duration for every test, or None for each test's own.
    pub duration: Option<f64>,
    pub settle: bool,
    pub profile: &'static str,
    pub dir: PathBuf,
    /// Adaptive passes: the target 95% CI half-width in %, and the time cap per test.
    pub precision: Option<f64>,
    pub max_time: Option<f64>,
    /// Selected tests left out because a program they need is missing (see `tools`).
    pub skipped: Vec<Skipped>,
    /// What to record around every pass (`crate::monitor::monitoring`): the monitors (off
    /// with `--no-monitors`), `--profile`, `--profile-data`.
    pub monitoring: crate::monitor::monitoring::Plan,
}

/// A selected test that does not run, and why.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Skipped {
    pub test: &'static str,
    pub reason: String,
}

impl Plan {
    pub fn passes_for(&self, t: &TestSpec) -> u32 {
        self.passes
            .unwrap_or_else(|| catalog::passes_for(t.repeat, None))
    }

    pub fn duration_for(&self, t: &TestSpec) -> f64 {
        self.duration.unwrap_or(t.duration)
    }
}

/// Runs every test of the plan at every copy count in the private directory made inside
/// `plan.dir`; each finished test is added to `record` and handed to `sinks` at once. The
/// private directory is removed whatever happens.
pub fn run(
    plan: &Plan,
    worker: &Path,
    signals: &Signals,
    record: &mut RunRecord,
    sinks: &mut Sinks,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    // A full --dir is the user's to fix: say which and how, not just "os error 28".
    let cannot = |doing: &str, e: std::io::Error| -> anyhow::Error {
        if pass::is_no_space(&e.to_string()) {
            crate::error::Usage(pass::full_dir_message(&plan.dir)).into()
        } else {
            anyhow::anyhow!("cannot {doing} in {}: {e}", plan.dir.display())
        }
    };
    let workdir = crate::private_dir::PrivateDir::create(&plan.dir, "patchbench-")
        .map_err(|e| cannot("create a private directory", e))?;
    let mut installed: Vec<workloads::Install> = Vec::new();
    for install in plan.tests.iter().filter_map(|t| t.install) {
        if !installed.iter().any(|i| std::ptr::fn_addr_eq(*i, install)) {
            install(workdir.path()).map_err(|e| cannot("install the tests' files", e))?;
            installed.push(install);
        }
    }
    // Said once, after the checks that refuse a run, before anything is measured.
    let run_id = record.uuid.clone().unwrap_or_default();
    let outcome =
        Monitoring::start(&plan.monitoring, &plan.dir, &run_id, progress).and_then(|mut m| {
            let out = run_all(
                plan,
                worker,
                workdir.path(),
                signals,
                &mut m,
                record,
                sinks,
                progress,
            );
            out.and(m.finish())
        });
    // The private directory goes whatever happened; one left behind is said, not hidden
    // (the results stand).
    if let Err(left) = workdir.close() {
        progress.line(&format!("patchbench: warning: {left:#}"));
    }
    progress.finish();
    record::finish(record);
    outcome
}

#[allow(clippy::too_many_arguments)]
fn run_all(
    plan: &Plan,
    worker: &Path,
    workdir: &Path,
    signals: &Signals,
    monitoring: &mut Monitoring,
    record: &mut RunRecord,
    sinks: &mut Sinks,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    for &copies in &plan.copies {
        record::begin_block(record, copies);
        for &spec in &plan.tests {
            let duration = plan.duration_for(spec);
            let fixed = plan.passes_for(spec);
            // --precision: Stein's two-stage rule decides the passes after a pilot; the
            // default cap is the time the fixed passes take, settle pauses included.
            let settle_s = if plan.settle { SETTLE_SECS } else { 0.0 };
            let mut adaptive = plan.precision.map(|pct| {
                let cap = plan
                    .max_time
                    .unwrap_or(fixed as f64 * (duration + settle_s));
                Adaptive::new(pct, cap)
            });
            let passes = match &adaptive {
                Some(_) => adaptive::MAX_PASSES as u32,
                None => fixed,
            };
            let mut results: Vec<PassResult> = Vec::with_capacity(fixed as usize);
            let mut stderr = None;
            let test_started = std::time::Instant::now();
            // The monitors' windows: each pass from before its workers start to after they
            // are reaped (the settle pause left out), added up over the test's passes.
            let mut monitored: Option<crate::monitor::Sample> = None;
            for pass in 1..=passes {
                if plan.settle {
                    settle(signals)?;
                }
                let shown = adaptive.as_ref().map_or(passes, |a| a.planned() as u32);
                let p = PassPlan {
                    spec,
                    copies,
                    pass,
                    passes: shown,
                    duration,
                    worker,
                    workdir,
                };
                // What else used the CPUs during the pass, watched from outside it.
                let watch = Watch::start();
                let window = monitoring.open(&format!("{}-{copies}", spec.id));
                let outcome = run_pass(&p, signals, &mut |elapsed| {
                    progress.show(&format!(
                        "{} · {} cop{} · pass {}/{} · {}",
                        spec.name,
                        copies,
                        if copies == 1 { "y" } else { "ies" },
                        pass,
                        shown,
                        if elapsed < duration {
                            format!("{duration} s")
                        } else {
                            "finishing".to_string()
                        }
                    ))
                })?;
                if let Some(w) = window {
                    let sample = monitoring.close(w, progress);
                    monitored.get_or_insert_with(Default::default).add(&sample);
                }
                let noise = watch.finish();
                for w in noise.warnings() {
                    progress.line(&format!("{} pass {pass}: noise: {w}", spec.name));
                }
                stderr = stderr.or(outcome.stderr);
                let mut result = scoring::combine_copies(pass, outcome.samples, spec.timebase);
                result.noise = Some(noise);
                result.shared_window = outcome.shared;
                results.push(result);
                if let Some(a) = adaptive.as_mut() {
                    let rates: Vec<f64> = results.iter().map(|p| p.rate).collect();
                    if a.done(&rates, test_started.elapsed().as_secs_f64()) {
                        break;
                    }
                }
            }
            let reached = adaptive.as_ref().and_then(|a| {
                let rates: Vec<f64> = results.iter().map(|p| p.rate).collect();
                a.reached(&rates)
            });
            let mut result = scoring::combine_passes(spec, copies, duration, results);
            result.precision_pct = reached.map(|r| r.half_width_pct);
            result.precision_capped = reached.map(|r| r.capped);
            result.stderr = scoring::stderr_sample(&result.passes, stderr);
            result.warnings = scoring::warnings(&result);
            for w in &result.warnings {
                progress.line(&format!(
                    "{} ({copies} cop{}): warning: {w}",
                    spec.name,
                    if copies == 1 { "y" } else { "ies" }
                ));
            }
            if let Some(sample) = monitored {
                record::add_monitors(record, &result, sample);
            }
            record::add_test(record, result);
            sinks.progress(record);
        }
        record::end_block(record, copies);
    }
    Ok(())
}

/// Seconds of UnixBench's settle pause before a pass.
const SETTLE_SECS: f64 = 3.0;

/// UnixBench's `sync; sleep 1; sync; sleep 2` before a pass.
fn settle(signals: &Signals) -> Result<(), Interrupted> {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    signals.sleep(Duration::from_secs(1))?;
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    signals.sleep(Duration::from_secs(2))
}

/// The `patchbench-worker` program: $PATCHBENCH_WORKER, else next to this executable.
pub fn worker_program() -> anyhow::Result<PathBuf> {
    if let Some(p) = std::env::var_os("PATCHBENCH_WORKER") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe()?;
    let worker = exe.with_file_name("patchbench-worker");
    if worker.is_file() {
        return Ok(worker);
    }
    usage(format!(
        "the worker program {} is missing; build every binary with `cargo build --release` \
         (or set PATCHBENCH_WORKER to its path)",
        worker.display()
    ))
}
