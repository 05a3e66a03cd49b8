//! `patchbench exec`: the arguments, the checks made before anything starts (the program on
//! PATH, else its Debian package named; the patterns; `--dir` and the output files; the
//! store), and the run of `crate::exec`. Also the check a campaign or a bisection makes of
//! an `exec` workload before any build.

use super::shared::{self, OutputOpts, StoreOpts, WorkDirOpt};
use crate::error::usage;
use crate::exec::{self, pattern, tool, Plan, Reader};
use crate::progress::Progress;
use crate::record::{Kind, RunRecord};
use crate::report::terminal::TerminalSink;
use clap::Args;
use std::time::Duration;

const AFTER_HELP: &str = "\
Examples:
  patchbench exec -- stress-ng --get 1 --timeout 5
  patchbench exec --runs 5 --warmup 1 -- make -C ~/src/tool -j4
  patchbench exec --metric 'score:points=score: (\\d+)' -- ./bench.sh {dir}

Readers (--reader auto picks one from the program's name):
  stress-ng  adds --metrics and --yaml FILE (unless given) and reads, per stressor,
             stress-ng.<stressor>.ops_per_sec (bogo ops/s of real time) and
             stress-ng.<stressor>.ops, higher is better
  hackbench  (rt-tests) hackbench.throughput, messages/s = groups x senders x receivers x
             loops / Time, higher is better; hackbench.time, its Time: line, lower is better
  perf-bench perf bench sched messaging|pipe, syscall basic, futex hash|lock-pi|wake|
             wake-parallel|requeue, as perf-bench.<collection>-<bench>.*: sched and syscall
             .total_time (lower), pipe and syscall also .ops_per_sec (higher) and
             .usecs_per_op (lower); futex hash|lock-pi .ops_per_sec (higher), wake|requeue
             .time_ms and wake-parallel .latency_ms (lower)
  fio        adds --output-format=json and --output=FILE (unless given); per job and
             direction that moved data: fio.<dir>_iops, fio.<dir>_bw_MBps (bw KiB/s / 1024),
             higher is better; fio.<dir>_clat_mean_ns and _clat_90%|95%|99%_ns, lower is
             better; job=NAME in the params when there are several jobs. Every job must be
             told where to write: --directory={dir} (or --filename) before the first --name,
             or its own, on the command line or in its job file (directory=${PATCHBENCH_DIR});
             a job that would write in the current directory is refused
  sysbench   sysbench cpu|memory|threads|mutex|fileio ... run, by labels:
             sysbench.cpu.events_per_sec, sysbench.memory.transfer_MiBps and .ops_per_sec
             (higher is better); sysbench.threads|mutex.total_time, .latency_avg_ms,
             .latency_95th_ms (lower); sysbench.fileio.<read|write|fsync>_operations_per_sec
             and .<read|write>_bytes_MiBps (higher) with the latency rows, its files made
             by `sysbench ... prepare` in {dir} before the runs, removed by `cleanup` after
  generic    the wall time alone (and the --metric patterns)
Every run also records exec.wall_time, the seconds of each invocation (lower is better), \
from just before the spawn to the reaping: the tool's own start-up is inside it.

--metric 'NAME[:UNIT[:higher|lower]]=REGEX' reads a value from each invocation's standard \
output (then its standard error): the first capture group, or the whole match. A bare NAME \
becomes exec.NAME. Higher is better unless :lower is given. An invocation whose output does \
not match fails the run.

The unit is the run: --runs invocations are the samples of one run, their mean its value. A \
non-zero exit, a signal or --timeout fails the run (one line with the program's last words on \
standard error, exit status 1) and no value is kept. The program runs in a process group of \
its own, stdin from /dev/null, its output in files of a private directory made in --dir and \
removed at the end; {dir} in its arguments and PATCHBENCH_DIR in its environment name a \
working directory inside it. {cpus} and PATCHBENCH_CPUS are the CPUs it may run on (0-3,6: \
patchbench's own, from taskset or a cpuset, or a vm guest's), {ncpus} and PATCHBENCH_NCPUS \
their number. See docs/exec.md.";

/// Arguments of `patchbench exec`.
#[derive(Debug, Clone, Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct ExecArgs {
    /// Measured invocations in this run: the samples of its metrics.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub runs: u32,
    /// Unmeasured invocations before the measured ones.
    #[arg(long, value_name = "N", default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub warmup: u32,
    /// Seconds an invocation may take; it is then stopped and the run fails.
    #[arg(long, value_name = "SECS", default_value = "600",
          value_parser = crate::args::parse_duration)]
    pub timeout: f64,
    /// How the program's output is read: auto (from its name), stress-ng, hackbench,
    /// perf-bench, fio, sysbench, generic.
    #[arg(long, value_enum, default_value_t = ReaderChoice::Auto)]
    pub reader: ReaderChoice,
    /// A metric read from the output: 'NAME[:UNIT[:higher|lower]]=REGEX' (repeatable).
    #[arg(long = "metric", value_name = "SPEC")]
    pub metrics: Vec<String>,
    #[command(flatten)]
    pub dir: WorkDirOpt,
    #[command(flatten)]
    pub output: OutputOpts,
    #[command(flatten)]
    pub store: StoreOpts,
    /// The program and its arguments (after `--` when they have options of their own).
    #[arg(value_name = "PROGRAM", required = true, trailing_var_arg = true,
          allow_hyphen_values = true, num_args = 1..)]
    pub command: Vec<String>,
}

/// `--reader`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReaderChoice {
    Auto,
    StressNg,
    Hackbench,
    PerfBench,
    Fio,
    Sysbench,
    Iperf3,
    Generic,
}

/// The plan of a run, checked: the program found, the patterns compiled, the directory
/// usable. Nothing is started.
fn plan(args: &ExecArgs) -> anyhow::Result<Plan> {
    let (program, rest) = match args.command.split_first() {
        Some((p, rest)) => (p.clone(), rest.to_vec()),
        None => return usage("give the program to run after `--`"),
    };
    if program.starts_with('-') {
        return usage(format!(
            "{} is not an option of exec; put the program and its options after `--` \
             (patchbench exec [OPTIONS] -- PROGRAM ARGS...)",
            crate::safe_text::field(&program)
        ));
    }
    let path = std::env::var("PATH").ok();
    let found = tool::find(&program, path.as_deref()).map_err(crate::error::Usage)?;
    let patterns = args
        .metrics
        .iter()
        .map(|m| pattern::parse(m))
        .collect::<Result<Vec<_>, String>>()
        .map_err(crate::error::Usage)?;
    let reader = match args.reader {
        ReaderChoice::Auto => Reader::for_program(&program, &rest),
        ReaderChoice::StressNg => Reader::StressNg,
        ReaderChoice::Hackbench => Reader::Hackbench,
        ReaderChoice::PerfBench => Reader::PerfBench,
        ReaderChoice::Fio => Reader::Fio,
        ReaderChoice::Sysbench => Reader::Sysbench,
        ReaderChoice::Iperf3 => Reader::Iperf3,
        ReaderChoice::Generic => Reader::Generic,
    };
    if reader == Reader::Fio {
        exec::fio::check(&rest).map_err(crate::error::Usage)?;
    }
    if reader == Reader::Iperf3 {
        exec::iperf3::client(&rest).map_err(crate::error::Usage)?;
    }
    if reader == Reader::Sysbench && exec::sysbench::test(&rest).is_none() {
        return usage(
            "the sysbench reader reads `sysbench cpu|memory|threads|mutex|fileio [OPTIONS] run`; \
             give --reader generic and --metric for another test",
        );
    }
    Ok(Plan {
        program,
        path: found,
        args: rest,
        reader,
        patterns,
        runs: args.runs,
        warmup: args.warmup,
        timeout: Duration::from_secs_f64(args.timeout),
        dir: args.dir.or_temp(),
        cpus: tool::allowed_cpus()?,
        monitoring: args.output.monitoring()?,
    })
}

/// Checks an `exec` workload without running anything (a campaign's or a bisection's,
/// before any build or step): the program is on PATH here, the patterns are valid.
pub fn check(args: &ExecArgs) -> anyhow::Result<()> {
    plan(args).map(|_| ())
}

/// Runs `patchbench exec`; returns the exit status.
pub fn execute(args: &ExecArgs) -> anyhow::Result<i32> {
    let mut plan = plan(args)?;
    plan.dir = crate::args::check_dir(&plan.dir)?;
    args.output.check()?;
    let signals = crate::proc::signals::Signals::install()?;
    let version = tool::version(&plan.program, &plan.path, &signals);
    let terminal = TerminalSink::new(None, Some(Box::new(crate::report::exec::table)));
    let mut sinks = shared::sinks(
        &args.store,
        args.output.json.as_deref(),
        true,
        args.output.html_sinks(),
        terminal,
    )?;
    let mut record = RunRecord {
        label: args.store.label.clone(),
        exec: Some(plan.details(&version)),
        ..RunRecord::new(
            Kind::Exec,
            shared::system_at_start(&plan.dir, &args.output)?,
            &plan.config(&version),
        )
    };
    sinks.started(&record)?;
    crate::safe_text::eprint_line(&format!(
        "patchbench exec: {} {version} ({} reader): {} run{}{}, timeout {} s",
        plan.program,
        plan.reader.name(),
        plan.runs,
        if plan.runs == 1 { "" } else { "s" },
        if plan.warmup > 0 {
            format!(" after {} warm-up", plan.warmup)
        } else {
            String::new()
        },
        plan.timeout.as_secs_f64()
    ));
    let mut progress = Progress::new();
    let outcome = exec::run(&plan, &signals, &mut record, &mut sinks, &mut progress);
    progress.finish();
    shared::conclude(&mut sinks, &mut record, outcome)?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    #[command(no_binary_name = true)]
    struct T {
        #[command(flatten)]
        a: ExecArgs,
    }

    fn parse(words: &str) -> Result<ExecArgs, clap::Error> {
        T::try_parse_from(words.split_whitespace()).map(|t| t.a)
    }

    #[test]
    fn the_program_starts_at_the_first_word_that_is_not_ours() {
        let a = parse("--runs 3 -- stress-ng --get 1 --timeout 2").unwrap();
        assert_eq!(a.runs, 3);
        assert_eq!(a.command, ["stress-ng", "--get", "1", "--timeout", "2"]);
        let a = parse("--runs 2 stress-ng --get 1 --json x").unwrap();
        assert_eq!(a.command, ["stress-ng", "--get", "1", "--json", "x"]);
        assert!(a.output.json.is_none());
        let a = parse("-- sh -c true").unwrap();
        assert_eq!(a.command, ["sh", "-c", "true"]);
        assert!(parse("--runs 2").is_err());
    }

    #[test]
    fn a_missing_program_or_a_bad_pattern_is_refused_before_anything_starts() {
        let e = check(&parse("-- stress-ng-not-here --x").unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("not found on PATH"), "{e}");
        let e = check(&parse("--metric s=( -- sh -c true").unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("regular expression"), "{e}");
        assert!(check(&parse("-- sh -c true").unwrap()).is_ok());
    }
}
