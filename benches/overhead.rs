//! Harness overhead: patchbench's workloads against plain C loops of the same system calls.
//!
//! For `pipe`, `syscall`, `context1`, `spawn` (and `execl`), builds the C reference program of
//! `benches/c/` with UnixBench's flags (see `support`), then alternates runs of the C program
//! (timed as UnixBench's Run times it, start to EOF) and of `patchbench-worker` alone (the
//! program every patchbench copy runs in, timed by its own `WALL`) for the same duration, and
//! prints the best rate of each and the ratio Rust/C. Target: ≥ 0.97 for each. For the
//! end-to-end comparison with `patchbench run` see the `fidelity` bench.
//!
//! Run: `cargo bench --bench overhead` (env `OVERHEAD_SECS`, whole seconds, default 2,
//! `OVERHEAD_ROUNDS`, default 5, and `OVERHEAD_TESTS`, e.g. `syscall,context1`, to run only
//! some).

mod support;

use std::process::{Command, Stdio};

/// The tests with a ≥ 0.97 target, then `execl` (reported for the record: its cost is an exec
/// of `patchbench-execl` against an exec of a small C program).
const TESTS: &[&str] = &["pipe", "syscall", "context1", "spawn", "execl"];

/// The rate of a worker's run from its `COUNT` and `WALL` lines (the worker's protocol).
fn rate_of(stdout: &str) -> Option<f64> {
    patchbench::unixbench::protocol::parse(stdout).rate_over_wall()
}

fn run(cmd: &mut Command) -> f64 {
    let out = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .expect("start");
    assert!(out.status.success(), "{cmd:?} failed");
    rate_of(&String::from_utf8_lossy(&out.stdout)).expect("COUNT and WALL lines")
}

fn main() {
    let secs: u32 = support::env_or("OVERHEAD_SECS", 2).max(1);
    let rounds: usize = support::env_or("OVERHEAD_ROUNDS", 5);
    let worker = env!("CARGO_BIN_EXE_patchbench-worker");
    let dir = tempfile::tempdir().expect("temp dir");
    println!("harness overhead: best of {rounds} alternating runs of {secs} s each");
    println!(
        "{:<10} {:>14} {:>14} {:>8}",
        "test", "C (lps)", "patchbench", "ratio"
    );
    let only = std::env::var("OVERHEAD_TESTS").unwrap_or_default();
    for test in TESTS
        .iter()
        .filter(|t| only.is_empty() || only.split(',').any(|o| o == **t))
    {
        support::build(test, dir.path());
        let argv = support::unixbench_command(test, secs, dir.path(), dir.path());
        let env = [("UB_BINDIR", dir.path().display().to_string())];
        let log = dir.path().join("c-reference.log");
        let (mut best_c, mut best_rust) = (0.0f64, 0.0f64);
        for _ in 0..rounds {
            let c = support::run_pass(&argv, None, 1, dir.path(), &env, &log, &[])
                .and_then(support::strict)
                .unwrap_or_else(|e| panic!("C reference for {test}: {e}"));
            best_c = best_c.max(support::pass_rate(&c));
            best_rust = best_rust.max(run(Command::new(worker)
                .args([test.to_string(), secs.to_string()])
                .current_dir(dir.path())));
        }
        println!(
            "{:<10} {:>14.1} {:>14.1} {:>8.3}",
            test,
            best_c,
            best_rust,
            best_rust / best_c
        );
    }
}
