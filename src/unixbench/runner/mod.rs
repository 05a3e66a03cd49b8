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

use crate::error::{usage, Interrupted};
use crate::proc::signals::Signals;
use crate::progress::Progress;
use crate::record::sink::Sinks;
use crate::record::RunRecord;
use crate::unixbench::catalog::{self, TestSpec};
use crate::unixbench::workloads;
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

/// With `--precision`: passes before the precision is first judged, and the most a test gets.
const MIN_ADAPTIVE_PASSES: u32 = 3;
const MAX_ADAPTIVE_PASSES: u32 = 50;

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
    let outcome = run_all(
        plan,
        worker,
        workdir.path(),
        signals,
        record,
        sinks,
        progress,
    );
    progress.finish();
    drop(workdir);
    record::finish(record);
    outcome
}

fn run_all(
    plan: &Plan,
    worker: &Path,
    workdir: &Path,
    signals: &Signals,
    record: &mut RunRecord,
    sinks: &mut Sinks,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    for &copies in &plan.copies {
        record::begin_block(record, copies);
        for &spec in &plan.tests {
            let duration = plan.duration_for(spec);
            let mut passes = plan.passes_for(spec);
            let time_cap = plan.max_time.unwrap_or(passes as f64 * duration);
            if plan.precision.is_some() {
                passes = MAX_ADAPTIVE_PASSES;
            }
            let mut results = Vec::with_capacity(passes as usize);
            let mut reached = None;
            let test_started = std::time::Instant::now();
            for pass in 1..=passes {
                if plan.settle {
                    settle(signals)?;
                }
                let p = PassPlan {
                    spec,
                    copies,
                    pass,
                    passes,
                    duration,
                    settle: plan.settle,
                    worker,
                    workdir,
                };
                let samples = run_pass(&p, signals, &mut |elapsed| {
                    progress.show(&format!(
                        "{} · {} cop{} · pass {}/{} · {:.0} s left",
                        spec.name,
                        copies,
                        if copies == 1 { "y" } else { "ies" },
                        pass,
                        passes,
                        (duration - elapsed).max(0.0)
                    ))
                })?;
                results.push(scoring::combine_copies(pass, samples, spec.timebase));
                if let Some(target) = plan.precision {
                    let rates: Vec<f64> = results.iter().map(|p| p.rate).collect();
                    reached = crate::stats::mean_ci_half_width_pct(&rates, 0.95);
                    let precise = reached.is_some_and(|r| r <= target);
                    let out_of_time = test_started.elapsed().as_secs_f64() >= time_cap;
                    if pass >= MIN_ADAPTIVE_PASSES && (precise || out_of_time) {
                        break;
                    }
                }
            }
            let mut result = scoring::combine_passes(spec, copies, duration, results);
            result.precision_pct = reached;
            record::add_test(record, result);
            sinks.progress(record);
        }
        record::end_block(record, copies);
    }
    Ok(())
}

/// UnixBench's `sync; sleep 1; sync; sleep 2` before a pass.
fn settle(signals: &Signals) -> Result<(), Interrupted> {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    signals.sleep(Duration::from_secs(1))?;
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
