//! `patchbench run`: validates the request, makes the private working directory, runs every
//! test at every copy count pass by pass, scores the passes, and hands the growing result to
//! the report, the JSON file and the store.
//!
//! Order as UnixBench: for each copy count, every selected test; for each test, its passes;
//! before each pass, unless settle is off, `sync; sleep 1; sync; sleep 2`.

pub mod pass;
pub mod record;
pub mod scoring;

use crate::args::{check_dir, RunArgs};
use crate::error::{usage, Interrupted};
use crate::proc::signals::Signals;
use crate::record::{RunRecord, RunSink};
use crate::unixbench::catalog::{self, TestSpec};
use crate::unixbench::workloads::shell_scripts;
use anyhow::Context;
use pass::{run_pass, PassPlan};
use std::path::PathBuf;
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
    /// Builds the plan from the command line, rejecting bad input before anything starts.
    pub fn from_args(args: &RunArgs) -> anyhow::Result<Plan> {
        let words: Vec<String> = args.tests.iter().chain(&args.tests_opt).cloned().collect();
        let selection = if words.is_empty() {
            "index".to_string()
        } else {
            words.join(",")
        };
        let tests = match catalog::select(&selection) {
            Ok(t) => t,
            Err(msg) => return usage(msg),
        };
        let copies = if args.copies.is_empty() {
            let cpus = crate::sysinfo::online_cpus();
            if cpus > 1 {
                vec![1, cpus]
            } else {
                vec![1]
            }
        } else {
            args.copies.clone()
        };
        let dir = args.dir.clone().unwrap_or_else(std::env::temp_dir);
        check_dir(&dir)?;
        let (mut passes, mut duration, mut settle, mut profile) =
            (None, None, !args.no_settle, "unixbench");
        if args.quick {
            passes = Some(1);
            duration = Some(2.0);
            settle = false;
            profile = "quick";
        }
        if args.passes.is_some() {
            passes = args.passes;
        }
        if args.duration.is_some() {
            duration = args.duration;
        }
        if profile == "unixbench" && (passes.is_some() || duration.is_some() || !settle) {
            profile = "custom";
        }
        if args.precision.is_some() {
            if args.passes.is_some() {
                return usage("--precision chooses the number of passes itself; drop --passes");
            }
            passes = None;
            profile = "precision";
        }
        Ok(Plan {
            tests,
            copies,
            passes,
            duration,
            settle,
            profile,
            dir,
            precision: args.precision,
            max_time: args.max_time,
        })
    }

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

/// Runs `patchbench run`; returns the exit status.
pub fn run_command(args: &RunArgs) -> anyhow::Result<i32> {
    let plan = Plan::from_args(args)?;
    if let Some(json) = &args.json {
        crate::args::check_output("--json", json)?;
    }
    if let Some(csv) = &args.csv {
        crate::args::check_output("--csv", csv)?;
    }
    let worker = worker_program()?;
    let max_copies = plan.copies.iter().copied().max().unwrap_or(1);
    let max_procs = plan
        .tests
        .iter()
        .map(|t| t.procs_per_copy)
        .max()
        .unwrap_or(1);
    if let Err(refusal) = crate::proc::limits::check(max_copies, max_procs - 1, "--copies") {
        return usage(refusal);
    }
    let signals = Signals::install()?;
    let workdir =
        crate::private_dir::PrivateDir::create(&plan.dir, "patchbench-").map_err(|e| {
            anyhow::anyhow!(
                "cannot create a private directory in {}: {e}",
                plan.dir.display()
            )
        })?;
    shell_scripts::install(workdir.path())?;

    let mut sink = crate::store::sink(&args.store)?;
    let mut record = record::new_record(&plan, args.store.label.clone());
    if let Some(s) = sink.as_mut() {
        if let Some(id) = s.started(&record)? {
            record
                .extra
                .insert("store_id".into(), serde_json::Value::String(id));
        }
    }
    let mut progress = crate::report::progress::Progress::new();
    let outcome = run_all(
        &plan,
        &worker,
        workdir.path(),
        &signals,
        &mut record,
        &mut sink,
        &mut progress,
    );
    progress.finish();
    // The private directory goes whatever happened.
    drop(workdir);

    record.incomplete = outcome.is_err();
    record::finish(&mut record);
    if let Some(e) = outcome.as_ref().err() {
        record
            .extra
            .insert("error".into(), serde_json::Value::String(e.to_string()));
    }
    if let Some(s) = sink.as_mut() {
        s.finished(&record)?;
    }
    if let Some(json) = &args.json {
        record.write_json(json)?;
    }
    if let Some(csv) = &args.csv {
        std::fs::write(csv, crate::report::unixbench_csv::render(&record))
            .with_context(|| format!("cannot write {}", csv.display()))?;
    }
    if !record.tests.is_empty() {
        print!("{}", crate::report::unixbench_text::render(&record));
    }
    if let Some(id) = record.extra.get("store_id").and_then(|v| v.as_str()) {
        crate::store::announce(&args.store, id);
    }
    outcome.map(|_| 0)
}

fn run_all(
    plan: &Plan,
    worker: &std::path::Path,
    workdir: &std::path::Path,
    signals: &Signals,
    record: &mut RunRecord,
    sink: &mut Option<Box<dyn RunSink>>,
    progress: &mut crate::report::progress::Progress,
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
                    worker,
                    workdir,
                };
                let samples = run_pass(&p, signals, &mut |elapsed| {
                    progress.show(spec, copies, pass, passes, (duration - elapsed).max(0.0))
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
            if let Some(s) = sink.as_mut() {
                s.progress(record)?;
            }
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
