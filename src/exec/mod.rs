//! `patchbench exec`'s harness: runs a program we did not write (stress-ng, or any command),
//! `warmup` unmeasured times and then `runs` measured times, and keeps what each measured
//! invocation gave as the samples of one run, as our suites keep their passes.
//!
//! Every invocation is spawned in a process group of its own that dies with patchbench
//! (`crate::proc::supervise`), stdin from /dev/null, its standard output and error written to
//! files in the run's private directory (never to the terminal), stopped (SIGTERM, then
//! SIGKILL to the group) at the timeout or on Ctrl-C/SIGTERM. The private directory, made in
//! `--dir`, holds those files and `work/`, the program's working directory (`{dir}` in its
//! arguments, `PATCHBENCH_DIR` in its environment); it is removed at the end, whatever
//! happened. `{cpus}` and `{ncpus}` (`PATCHBENCH_CPUS`, `PATCHBENCH_NCPUS`) are the CPUs
//! patchbench may run on, which the program inherits (`tool::Places`).
//!
//! What is timed: from just before the spawn to the reaping, on the monotonic clock: the
//! tool's own start-up (stress-ng's set-up of its stressors, fio's file layout) is inside the
//! window, as it is in the tool's own wall time. The monitors' window is opened before the
//! spawn and closed after the reaping, outside patchbench's own code.
//!
//! What is read: the wall time of every invocation (`exec.wall_time`, lower is better), the
//! patterns of `--metric` (`pattern`), and the reader's metrics (`stress_ng`, `hackbench`,
//! `perf_bench`, `fio`, `sysbench`, `iperf3`). A failed
//! invocation (a non-zero exit, a signal, the timeout, a pattern or a file that cannot be
//! read) fails the run: one line with the program's own last words on standard error, and
//! no value is kept.

pub mod fio;
pub mod hackbench;
pub mod iperf3;
pub mod pattern;
pub mod perf_bench;
pub mod stress_ng;
pub mod sysbench;
pub mod tool;

use crate::error::RunFailed;
use crate::monitor::monitoring::{self, Monitoring};
use crate::private_dir::PrivateDir;
use crate::proc::signals::Signals;
use crate::proc::supervise::{Ended, Supervised};
use crate::progress::Progress;
use crate::record::exec::{ExecDetails, Invocation};
use crate::record::sink::Sinks;
use crate::record::{Direction, Metric, RunRecord};
use anyhow::Context;
use pattern::Pattern;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The wall time of each invocation.
pub const WALL_TIME: &str = "exec.wall_time";

/// How the program's output is read besides its wall time and the patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reader {
    /// `--metrics --yaml FILE`, per stressor.
    StressNg,
    /// rt-tests' hackbench: `Time:` and the throughput derived from it.
    Hackbench,
    /// `perf bench` sched, syscall and futex benchmarks, by labels.
    PerfBench,
    /// `--output-format=json`, per job and direction.
    Fio,
    /// sysbench's `cpu`, `memory`, `threads`, `mutex` and `fileio` tests, by labels.
    Sysbench,
    /// iperf3's client with `-J`, its loopback server started for each invocation.
    Iperf3,
    /// Wall time and patterns only.
    Generic,
}

impl Reader {
    /// The reader for `program` run with `args`.
    pub fn for_program(program: &str, args: &[String]) -> Reader {
        match tool::basename(program) {
            "stress-ng" => Reader::StressNg,
            "hackbench" => Reader::Hackbench,
            "perf" if perf_bench::reads(args) => Reader::PerfBench,
            "fio" => Reader::Fio,
            "sysbench" if sysbench::test(args).is_some() => Reader::Sysbench,
            "iperf3" => Reader::Iperf3,
            _ => Reader::Generic,
        }
    }

    /// Its name, as `--reader` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Reader::StressNg => "stress-ng",
            Reader::Hackbench => "hackbench",
            Reader::PerfBench => "perf-bench",
            Reader::Fio => "fio",
            Reader::Sysbench => "sysbench",
            Reader::Iperf3 => "iperf3",
            Reader::Generic => "generic",
        }
    }
}

/// Everything a run needs, checked.
pub struct Plan {
    /// The program as given, and where it is.
    pub program: String,
    pub path: PathBuf,
    /// Its arguments as given (placeholders unexpanded).
    pub args: Vec<String>,
    pub reader: Reader,
    pub patterns: Vec<Pattern>,
    pub runs: u32,
    pub warmup: u32,
    pub timeout: Duration,
    /// Where the run's private directory is made.
    pub dir: PathBuf,
    /// The CPUs the program may run on (`{cpus}`), ascending.
    pub cpus: Vec<usize>,
    pub monitoring: monitoring::Plan,
}

/// The run's settings as recorded: two runs whose tool, version or argv differ are runs of
/// different settings (`compare` says so).
#[derive(Debug, Serialize)]
pub struct Config {
    pub tool: String,
    pub version: String,
    pub argv: Vec<String>,
    pub reader: Reader,
    pub runs: u32,
    pub warmup: u32,
    pub timeout_s: f64,
    pub metrics: Vec<String>,
    pub dir: String,
    /// `{cpus}`: the argv keeps the placeholder, so two sides on other CPU sets have one argv
    /// and this setting tells them apart (a warning, as `dir` is).
    pub cpus: String,
}

impl Plan {
    /// The settings, with the version found.
    pub fn config(&self, version: &str) -> Config {
        Config {
            tool: self.program.clone(),
            version: version.to_string(),
            argv: self.argv(),
            reader: self.reader,
            runs: self.runs,
            warmup: self.warmup,
            timeout_s: self.timeout.as_secs_f64(),
            metrics: self.patterns.iter().map(|p| p.given.clone()).collect(),
            dir: self.dir.display().to_string(),
            cpus: crate::noise::sysfs::format_cpu_list(&self.cpus),
        }
    }

    /// A `sysbench fileio ... run`: its files are prepared before the first invocation and
    /// cleaned up after the last, and every invocation runs in the working directory.
    pub fn sysbench_fileio(&self) -> bool {
        self.reader == Reader::Sysbench && sysbench::test(&self.args) == Some("fileio")
    }

    /// The program and its arguments as given.
    pub fn argv(&self) -> Vec<String> {
        std::iter::once(self.program.clone())
            .chain(self.args.iter().cloned())
            .collect()
    }

    /// The details the record starts with.
    pub fn details(&self, version: &str) -> ExecDetails {
        ExecDetails {
            tool: self.program.clone(),
            version: version.to_string(),
            argv: self.argv(),
            invocations: Vec::new(),
        }
    }
}

/// One comparable value of an invocation, before it is a metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    pub name: String,
    /// What tells this value apart from another of the same name (fio's `job`).
    pub params: BTreeMap<String, String>,
    pub title: String,
    pub unit: String,
    pub direction: Direction,
    pub value: f64,
}

impl Value {
    /// A value without params (the readers' usual case).
    pub fn new(
        name: impl Into<String>,
        title: impl Into<String>,
        unit: &str,
        direction: Direction,
        value: f64,
    ) -> Value {
        Value {
            name: name.into(),
            params: BTreeMap::new(),
            title: title.into(),
            unit: unit.to_string(),
            direction,
            value,
        }
    }

    /// The name and its params, as the metric's key (`fio.read_iops[job=r]`).
    pub fn key(&self) -> String {
        crate::record::metric_key(&self.name, &self.params)
    }
}

/// Runs the plan, adding each invocation to `record` as it ends. A failed invocation ends the
/// run with [`RunFailed`] and no metric; an interruption ends it with the metrics of the
/// invocations done.
pub fn run(
    plan: &Plan,
    signals: &Signals,
    record: &mut RunRecord,
    sinks: &mut Sinks,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    let private = PrivateDir::create(&plan.dir, "patchbench-exec-")
        .with_context(|| format!("cannot make a private directory in {}", plan.dir.display()))?;
    let work = private.path().join("work");
    std::fs::create_dir(&work).with_context(|| format!("cannot make {}", work.display()))?;
    let places = tool::Places {
        dir: work,
        cpus: plan.cpus.clone(),
    };
    if plan.sysbench_fileio() {
        sysbench_files(plan, "prepare", &places, signals, progress)?;
    }
    let run_id = record.uuid.clone().unwrap_or_default();
    let mut monitoring = Monitoring::start(&plan.monitoring, private.path(), &run_id, progress)?;
    let outcome = invocations(
        plan,
        signals,
        private.path(),
        &places,
        &mut monitoring,
        record,
        sinks,
        progress,
    );
    if outcome.as_ref().is_err_and(|e| e.is::<RunFailed>()) {
        record.metrics.clear();
    }
    let finished = monitoring.finish();
    // After an interruption the directory's removal takes the files.
    let interrupted = outcome
        .as_ref()
        .is_err_and(|e| e.is::<crate::error::Interrupted>());
    if plan.sysbench_fileio() && !interrupted {
        if let Err(e) = sysbench_files(plan, "cleanup", &places, signals, progress) {
            progress.line(&format!(
                "patchbench exec: {e}; its files go with the run's directory"
            ));
        }
    }
    outcome.and(finished).and(private.close())
}

/// `sysbench ... prepare` or `cleanup` for a fileio run, outside the measured invocations,
/// said on a line with its time.
fn sysbench_files(
    plan: &Plan,
    command: &str,
    places: &tool::Places,
    signals: &Signals,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    progress.show(&format!("{}: fileio {command}", plan.program));
    let start = Instant::now();
    let args = places.expand(&plan.args);
    sysbench::files(&plan.path, &args, command, places, plan.timeout, signals)?;
    progress.line(&format!(
        "patchbench exec: sysbench fileio {command}: {:.3} s (not measured)",
        start.elapsed().as_secs_f64()
    ));
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn invocations(
    plan: &Plan,
    signals: &Signals,
    private: &Path,
    places: &tool::Places,
    monitoring: &mut Monitoring,
    record: &mut RunRecord,
    sinks: &mut Sinks,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    let total = plan.warmup + plan.runs;
    let mut measured: Vec<Vec<Value>> = Vec::new();
    for n in 1..=total {
        signals.check()?;
        let warmup = n <= plan.warmup;
        let what = if warmup {
            format!("warm-up {n}/{}", plan.warmup)
        } else {
            format!("run {}/{}", n - plan.warmup, plan.runs)
        };
        progress.show(&format!("{}: {what}", plan.program));
        let window = if warmup {
            None
        } else {
            monitoring.open(tool::basename(&plan.program))
        };
        let ended = invoke(plan, n, signals, private, places);
        let sample = window.map(|w| monitoring.close(w, progress));
        let (inv, values) = ended?;
        progress.line(&format!(
            "patchbench exec: {} {what}: {:.3} s{}",
            plan.program,
            inv.wall_seconds,
            summary(&values)
        ));
        let details = record.exec.get_or_insert_with(ExecDetails::default);
        details.invocations.push(inv);
        if !warmup {
            if let Some(s) = sample {
                add_monitors(record, &plan.program, s);
            }
            measured.push(values);
            update_metrics(record, &measured);
        }
        sinks.progress(record);
    }
    Ok(())
}

/// The first values of an invocation, for its progress line.
fn summary(values: &[Value]) -> String {
    values
        .iter()
        .filter(|v| v.name != WALL_TIME)
        .take(2)
        .map(|v| format!(", {} {}", v.key(), shown(v.value)))
        .collect()
}

fn shown(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// One invocation: spawned, waited for (until the timeout), read. The error is the run's
/// failure line, or the interruption.
fn invoke(
    plan: &Plan,
    n: u32,
    signals: &Signals,
    private: &Path,
    places: &tool::Places,
) -> anyhow::Result<(Invocation, Vec<Value>)> {
    let stdout_path = private.join(format!("{n}.stdout"));
    let stderr_path = private.join(format!("{n}.stderr"));
    let mut args = places.expand(&plan.args);
    // iperf3's loopback server, while the client runs (stopped when dropped).
    let mut server: Option<(Supervised, u16)> = None;
    // The file the reader reads (none: its standard output, or no reader).
    let file = match plan.reader {
        Reader::StressNg => {
            let ours = private.join(format!("{n}.yaml")).display().to_string();
            let (extra, file) = stress_ng::additions(&args, &ours);
            args.extend(extra);
            Some(PathBuf::from(file))
        }
        Reader::Fio => {
            let ours = private.join(format!("{n}.fio.json")).display().to_string();
            let (extra, file) = fio::additions(&args, &ours);
            args.extend(extra);
            file.map(PathBuf::from)
        }
        Reader::Iperf3 => {
            let client = iperf3::client(&args).map_err(RunFailed)?;
            let out = private.join(format!("{n}.server"));
            server = iperf3::start_server(&plan.path, &client, &out, signals)?;
            args.extend(iperf3::additions(&client, server.as_ref().map(|s| s.1)));
            None
        }
        Reader::Hackbench | Reader::PerfBench | Reader::Sysbench | Reader::Generic => None,
    };
    let stdout = std::fs::File::create(&stdout_path)
        .with_context(|| format!("cannot make {}", stdout_path.display()))?;
    let mut stderr = std::fs::File::create(&stderr_path)
        .with_context(|| format!("cannot make {}", stderr_path.display()))?;
    let mut cmd = std::process::Command::new(&plan.path);
    cmd.args(&args);
    places.set_env(&mut cmd);
    if plan.sysbench_fileio() {
        // sysbench lays out and looks for its files in its current directory.
        cmd.current_dir(&places.dir);
    }
    let start = crate::clock::monotonic_ns();
    let running = Supervised::spawn_stdout_to(cmd, stdout).map_err(|e| {
        RunFailed(format!(
            "{} could not be started: {e}",
            crate::safe_text::field(&plan.program)
        ))
    })?;
    let outcome = running.wait(
        signals,
        Some(Instant::now() + plan.timeout),
        &mut |line| {
            let _ = writeln!(stderr, "{line}");
            true
        },
        &mut || {},
    );
    let wall_seconds = crate::clock::monotonic_ns().saturating_sub(start) as f64 / 1e9;
    // Its own last words: its standard error's last line, else (a tool that reports on its
    // standard output, as sysbench does) its standard output's.
    let last_words = || {
        if outcome.tail.iter().any(|l| !l.trim().is_empty()) {
            return last_words(outcome.tail.iter().map(String::as_str), "");
        }
        let out = read_lossy(&stdout_path);
        let lines: Vec<&str> = out.lines().collect();
        match plan.reader {
            Reader::Sysbench => sysbench::last_words(&lines),
            _ => last_words(lines.into_iter(), " (it printed nothing)"),
        }
    };
    let program = crate::safe_text::field(&plan.program);
    let status = ended_well(&program, outcome.ended, plan.timeout, last_words)?;
    let failed = |why: String| -> anyhow::Error { RunFailed(format!("{program}: {why}")).into() };
    // Read once, when a pattern or the reader needs it.
    let out = std::cell::OnceCell::new();
    let stdout = || out.get_or_init(|| read_lossy(&stdout_path)).as_str();
    let mut values = Vec::new();
    if !plan.patterns.is_empty() {
        let err = read_lossy(&stderr_path);
        for p in &plan.patterns {
            let value = p.read(stdout(), &err).map_err(failed)?;
            values.push(Value::new(&p.name, &p.name, &p.unit, p.direction, value));
        }
    }
    match plan.reader {
        Reader::StressNg => {
            if let Some(file) = &file {
                values.extend(stress_ng_values(file).map_err(failed)?);
            }
        }
        Reader::Fio => {
            let text = match &file {
                Some(f) => std::fs::read_to_string(f)
                    .map_err(|e| failed(format!("it wrote no JSON file {} ({e})", f.display())))?,
                None => stdout().to_string(),
            };
            values.extend(fio::parse(&text).map_err(failed)?)
        }
        Reader::Hackbench => values.extend(hackbench::parse(stdout()).map_err(failed)?),
        Reader::PerfBench => values.extend(perf_bench::parse(stdout()).map_err(failed)?),
        Reader::Sysbench => {
            let test = sysbench::test(&args).ok_or_else(|| {
                failed("its command line names no test this reader reads".to_string())
            })?;
            values.extend(sysbench::parse(test, stdout()).map_err(failed)?)
        }
        Reader::Iperf3 => values.extend(iperf3::parse(stdout()).map_err(failed)?),
        Reader::Generic => {}
    }
    drop(server);
    values.push(Value::new(
        WALL_TIME,
        format!("{} wall time", plan.program),
        "s",
        Direction::LowerIsBetter,
        wall_seconds,
    ));
    let inv = Invocation {
        n,
        warmup: n <= plan.warmup,
        wall_seconds,
        status,
        values: values.iter().map(|v| (v.key(), v.value)).collect(),
    };
    Ok((inv, values))
}

/// The number after `label` on the first line (trimmed) that starts with it; a unit glued to
/// it (`1.0004s`) is dropped.
pub(crate) fn number_after(text: &str, label: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix(label)?;
        let word = rest.split_whitespace().next()?;
        word.trim_end_matches(|c: char| c.is_ascii_alphabetic())
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
    })
}

/// How `what` (an invocation, or a tool's own set-up step) ended, for the run: how it exited
/// when it succeeded; else a failed run (its exit or the timeout, with `last_words()`), or
/// the interruption.
pub(crate) fn ended_well(
    what: &str,
    ended: Ended,
    timeout: Duration,
    last_words: impl FnOnce() -> String,
) -> anyhow::Result<String> {
    match ended {
        Ended::Exited {
            success: true, how, ..
        } => Ok(how),
        Ended::Exited { how, .. } => Err(RunFailed(format!("{what} {how}{}", last_words())).into()),
        Ended::TimedOut => Err(RunFailed(format!(
            "{what} did not end within --timeout {} s and was stopped{}",
            timeout.as_secs_f64(),
            last_words()
        ))
        .into()),
        Ended::Interrupted(i) => Err(crate::error::Interrupted {
            kept: crate::error::KEPT,
            ..i
        }
        .into()),
    }
}

/// `: LINE` for the last line of `lines` that is not blank (cut to 200 characters, made safe
/// for a terminal), else `none`: a program's last words for its failure line.
pub(crate) fn last_words<'a>(
    lines: impl DoubleEndedIterator<Item = &'a str>,
    none: &str,
) -> String {
    lines
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| format!(": {}", crate::safe_text::field_cut(l.trim(), 200)))
        .unwrap_or_else(|| none.to_string())
}

/// A file's text (bytes that are not UTF-8 replaced); empty when it cannot be read.
fn read_lossy(path: &Path) -> String {
    std::fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// The metrics of stress-ng's YAML file.
fn stress_ng_values(file: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("it wrote no YAML metrics file {} ({e})", file.display()))?;
    let stressors = stress_ng::parse(&text)
        .map_err(|e| format!("its YAML file {} is unreadable: {e}", file.display()))?;
    if stressors.is_empty() {
        return Err(format!(
            "its YAML file {} has no metrics (was a stressor given?)",
            file.display()
        ));
    }
    let mut out = Vec::new();
    for s in stressors {
        out.push(Value {
            name: format!("stress-ng.{}.ops_per_sec", s.name),
            params: BTreeMap::new(),
            title: format!("stress-ng {} bogo ops/s (real time)", s.name),
            unit: "ops/s".to_string(),
            direction: Direction::HigherIsBetter,
            value: s.ops_per_sec,
        });
        out.push(Value {
            name: format!("stress-ng.{}.ops", s.name),
            params: BTreeMap::new(),
            title: format!("stress-ng {} bogo ops", s.name),
            unit: "ops".to_string(),
            direction: Direction::HigherIsBetter,
            value: s.ops,
        });
    }
    Ok(out)
}

/// The run's metrics from its measured invocations: each value's mean, with every
/// invocation's value as a sample (in the first invocation's order), then the monitor rows.
fn update_metrics(record: &mut RunRecord, measured: &[Vec<Value>]) {
    let mut metrics: Vec<Metric> = Vec::new();
    if let Some(first) = measured.first() {
        for v in first {
            let samples: Vec<f64> = measured
                .iter()
                .filter_map(|inv| {
                    inv.iter()
                        .find(|x| x.name == v.name && x.params == v.params)
                        .map(|x| x.value)
                })
                .collect();
            let mean = crate::stats::mean(&samples).unwrap_or(v.value);
            let mut metric = Metric::new(
                v.name.clone(),
                &[],
                v.title.clone(),
                v.unit.clone(),
                v.direction,
                mean,
                samples,
            );
            metric.params = v.params.clone().into();
            metrics.push(metric);
        }
    }
    metrics.extend(crate::record::monitors::metrics(&record.monitors));
    record.metrics = metrics;
    record.finished_at = crate::clock::now_rfc3339();
}

/// Adds one measured invocation's monitor window to the run's one unit.
fn add_monitors(record: &mut RunRecord, program: &str, sample: crate::monitor::Sample) {
    match record.monitors.first_mut() {
        Some(u) => u.sample.add(&sample),
        None => record.monitors.push(crate::record::monitors::Unit::new(
            &[],
            program.to_string(),
            None,
            sample,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reader_comes_from_the_programs_name() {
        let w = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(Reader::for_program("stress-ng", &[]), Reader::StressNg);
        assert_eq!(
            Reader::for_program("/usr/bin/stress-ng", &[]),
            Reader::StressNg
        );
        assert_eq!(Reader::for_program("hackbench", &[]), Reader::Hackbench);
        assert_eq!(
            Reader::for_program("perf", &w("bench sched pipe")),
            Reader::PerfBench
        );
        assert_eq!(
            Reader::for_program("perf", &w("bench futex hash")),
            Reader::PerfBench
        );
        assert_eq!(
            Reader::for_program("perf", &w("bench futex wake")),
            Reader::PerfBench
        );
        assert_eq!(
            Reader::for_program("perf", &w("bench futex all")),
            Reader::Generic
        );
        assert_eq!(
            Reader::for_program("iperf3", &w("-c 127.0.0.1")),
            Reader::Iperf3
        );
        assert_eq!(Reader::for_program("/usr/bin/fio", &[]), Reader::Fio);
        assert_eq!(
            Reader::for_program("sysbench", &w("cpu --time=1 run")),
            Reader::Sysbench
        );
        assert_eq!(
            Reader::for_program("sysbench", &w("fileio --file-test-mode=rndrw run")),
            Reader::Sysbench
        );
        assert_eq!(
            Reader::for_program("sysbench", &w("oltp_read_only run")),
            Reader::Generic
        );
        assert_eq!(Reader::for_program("sh", &[]), Reader::Generic);
    }

    #[test]
    fn samples_are_the_invocations_and_the_value_their_mean() {
        let v = |name: &str, value: f64| Value {
            name: name.into(),
            params: BTreeMap::new(),
            title: name.into(),
            unit: "s".into(),
            direction: Direction::LowerIsBetter,
            value,
        };
        let mut r = RunRecord::new(crate::record::Kind::Exec, Default::default(), &());
        update_metrics(
            &mut r,
            &[
                vec![v("exec.score", 1.0), v(WALL_TIME, 2.0)],
                vec![v("exec.score", 3.0), v(WALL_TIME, 4.0)],
            ],
        );
        assert_eq!(r.metrics.len(), 2);
        assert_eq!(r.metrics[0].name, "exec.score");
        assert_eq!(r.metrics[0].value, 2.0);
        assert_eq!(r.metrics[0].samples, vec![1.0, 3.0]);
        assert_eq!(r.metrics[1].value, 3.0);
    }
}
