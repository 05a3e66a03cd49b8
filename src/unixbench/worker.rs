//! The worker side of a copy: what `patchbench-worker` does.
//!
//! Protocol with the runner (one worker process per copy per pass):
//! - argv: `patchbench-worker TEST SECONDS`; the working directory is the run's private
//!   directory.
//! - stdin is the start barrier: the worker does its setup, prints `READY`, then reads stdin
//!   until EOF. The runner closes the write end once every copy is ready, releasing all at once.
//! - stdout carries result lines in UnixBench's style: `COUNT|count|timebase|unit`, optionally
//!   `TIME|seconds` (self-timed tests), always `WALL|seconds` (from release to the end of the
//!   work, children reaped), or `ERROR|message` with exit status 1.
//! - `execl` replaces the worker, after the release, with `patchbench-execl 0 DURATION_MS 0
//!   START_NS`, which execs itself until the deadline and prints the same result lines.
//! - `spawn` replaces the worker, before READY, with `patchbench-spawn SECONDS`, which speaks
//!   this protocol itself (READY, the barrier, the result lines).

use crate::unixbench::catalog;
use crate::unixbench::workloads::{
    context_switch, dhrystone, execl_throughput, file_copy, pipe_throughput, process_creation,
    shell_scripts, syscall_overhead, timer, whetstone,
};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

/// What a workload reports.
struct Outcome {
    count: f64,
    /// Self-reported time (fstime's copy phase, Whetstone), if the test has one.
    time: Option<f64>,
    /// Lines printed before the result (e.g. the file tests' `PAUSES|2,2,2,2,2,1`).
    notes: Vec<String>,
}

/// Entry point of `patchbench-worker`; returns the exit status.
pub fn main(args: Vec<OsString>) -> i32 {
    let args: Vec<String> = args
        .into_iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    // SAFETY: prctl with PR_SET_PDEATHSIG and signal() only change this process's own
    // attributes. Rust's runtime ignores SIGPIPE before main; UnixBench's programs keep the
    // default, and every process a workload forks or execs (the shell tests' pipelines,
    // patchbench-execl, patchbench-spawn) inherits this process's choice.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let (test, seconds) = match args.as_slice() {
        [_, test, secs] => match secs.parse::<f64>() {
            Ok(s) if s > 0.0 => (test.clone(), s),
            _ => return fail(&format!("bad duration {secs:?}")),
        },
        _ => return fail("usage: patchbench-worker TEST SECONDS (started by patchbench run)"),
    };
    let Some(spec) = catalog::find(&test) else {
        return fail(&format!("unknown test {test:?}"));
    };
    if test == "spawn" {
        return fail(&format!("spawn: {}", process_creation::start(seconds)));
    }
    let duration = Duration::from_secs_f64(seconds);
    // Setup that must not be timed happens before READY.
    let execl = if test == "execl" {
        match execl_throughput::program() {
            Ok(p) => Some(p),
            Err(e) => return fail(&format!("execl: {e}")),
        }
    } else {
        None
    };
    let script = match shell_scripts::concurrency(&test) {
        Some(_) => match std::env::current_dir() {
            Ok(d) => Some(d.join("pgms/multi.sh").to_string_lossy().into_owned()),
            Err(e) => return fail(&format!("working directory: {e}")),
        },
        None => None,
    };
    if let Err(e) = wait_for_release() {
        return fail(&format!("start barrier: {e}"));
    }
    let started = Instant::now();
    if let Some(program) = execl {
        let e = execl_throughput::start(&program, crate::clock::monotonic_ns(), duration);
        return fail(&format!("execl: {e}"));
    }
    let outcome = run_test(&test, duration, script.as_deref());
    let wall = started.elapsed().as_secs_f64();
    match outcome {
        Ok(o) => {
            let mut out: String = o.notes.iter().map(|n| format!("{n}\n")).collect();
            out.push_str(&format!(
                "COUNT|{}|{}|{}\n",
                o.count, spec.timebase, spec.unit
            ));
            if let Some(t) = o.time {
                out.push_str(&format!("TIME|{t}\n"));
            }
            out.push_str(&format!("WALL|{wall}\n"));
            emit(&out)
        }
        Err(e) => fail(&format!("{test}: {e}")),
    }
}

fn run_test(test: &str, duration: Duration, script: Option<&str>) -> std::io::Result<Outcome> {
    let loops = |n: u64| Outcome {
        count: n as f64,
        time: None,
        notes: Vec::new(),
    };
    if let Some(g) = file_copy::geometry(test) {
        let r = file_copy::run(g, duration)?;
        let pauses: Vec<String> = r.pauses.iter().map(u64::to_string).collect();
        return Ok(Outcome {
            count: r.copy_kbps as f64,
            time: Some(r.seconds),
            notes: vec![format!("PAUSES|{}", pauses.join(","))],
        });
    }
    if test == "whetstone-double" {
        let r = whetstone::run(
            duration.as_secs_f64(),
            whetstone::Variant::Gcc,
            &mut std::io::sink(),
        )?;
        return Ok(Outcome {
            count: r.mwips,
            time: Some(r.time_used),
            notes: Vec::new(),
        });
    }
    timer::arm(duration)?;
    match test {
        "dhry2reg" => Ok(loops(dhrystone::run(&timer::STOP))),
        "pipe" => pipe_throughput::run().map(loops),
        "context1" => context_switch::run().map(loops),
        "syscall" => syscall_overhead::run().map(loops),
        _ => match (script, shell_scripts::concurrency(test)) {
            (Some(s), Some(n)) => shell_scripts::run(s, n).map(loops),
            _ => Err(std::io::Error::other(format!("no workload for {test}"))),
        },
    }
}

/// Announces readiness and blocks until the runner closes the barrier (EOF on stdin).
fn wait_for_release() -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(b"READY\n")?;
    stdout.flush()?;
    let mut buf = [0u8; 64];
    let mut stdin = std::io::stdin().lock();
    loop {
        match stdin.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

fn emit(text: &str) -> i32 {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

fn fail(msg: &str) -> i32 {
    let line = msg.replace('\n', " ");
    let _ = emit(&format!("ERROR|{line}\n"));
    1
}
