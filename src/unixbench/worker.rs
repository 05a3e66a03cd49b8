//! The worker side of a copy: what `patchbench-worker` does. The protocol with the runner is
//! in [`crate::unixbench::protocol`].

use crate::unixbench::workloads::Job;
use crate::unixbench::{catalog, protocol};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

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
    let dir = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => return fail(&format!("working directory: {e}")),
    };
    // The slot the runner reads this copy's count from, when it gave one (before READY).
    if let Err(e) = crate::unixbench::shared_count::attach_from_env() {
        return fail(&format!("{test}: {e}"));
    }
    let job = Job {
        id: spec.id,
        params: spec.params,
        duration: Duration::from_secs_f64(seconds),
        dir: &dir,
    };
    // Setup that must not be timed happens before READY. (`spawn`'s prepare hands the copy
    // over to `patchbench-spawn`, which speaks the protocol from here on.)
    let timed = match (spec.prepare)(&job) {
        Ok(t) => t,
        Err(e) => return fail(&format!("{test}: {e}")),
    };
    if let Err(e) = wait_for_release() {
        return fail(&format!("start barrier: {e}"));
    }
    let (started, started_ns) = (Instant::now(), crate::clock::monotonic_ns());
    let outcome = timed();
    let wall = started.elapsed().as_secs_f64();
    let stopped_ns = crate::clock::monotonic_ns();
    match outcome {
        Ok(o) => {
            let mut out = String::new();
            if let Some(p) = &o.pauses {
                out.push_str(&protocol::pauses_line(p));
            }
            out.push_str(&protocol::count_line(o.count, spec.timebase, spec.unit));
            if let Some(t) = o.time {
                out.push_str(&protocol::time_line(t));
            }
            out.push_str(&protocol::wall_line(wall));
            let (a, b) = o.window.unwrap_or((started_ns, stopped_ns));
            out.push_str(&protocol::window_line(a, b));
            emit(&out)
        }
        Err(e) => fail(&format!("{test}: {e}")),
    }
}

/// Announces readiness and blocks until the runner closes the barrier (EOF on stdin).
fn wait_for_release() -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(protocol::READY)?;
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
    let _ = emit(&protocol::error_line(msg));
    1
}
