//! Harness overhead: patchbench's workloads against plain C loops of the same system calls.
//!
//! For `pipe`, `syscall`, `context1`, `spawn` (and `execl`), builds a small C reference program from
//! `benches/c/` with `cc -O2`, then alternates runs of the C program and of `patchbench-worker`
//! (the program every patchbench copy runs in) for the same duration, and prints the best rate
//! of each and the ratio Rust/C. Target: ≥ 0.97 for each.
//!
//! Run: `cargo bench --bench overhead` (env `OVERHEAD_SECS`, default 2, `OVERHEAD_ROUNDS`,
//! default 5, and `OVERHEAD_TESTS`, e.g. `syscall,context1`, to run only some).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The tests with a ≥ 0.97 target, then `execl` (reported for the record: its cost is an exec
/// of `patchbench-execl` against an exec of a small C program).
const TESTS: &[&str] = &["pipe", "syscall", "context1", "spawn", "execl"];

fn env_or(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The rate of a run from its `COUNT` and `WALL` lines (the worker's protocol; the C
/// references print the same lines).
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

fn build_c(test: &str, out_dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("benches/c")
        .join(format!("{test}.c"));
    let exe = out_dir.join(test);
    let status = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .expect("cc (install gcc) is needed for this benchmark");
    assert!(status.success(), "cc failed for {}", src.display());
    exe
}

fn main() {
    let secs = env_or("OVERHEAD_SECS", 2.0);
    let rounds = env_or("OVERHEAD_ROUNDS", 5.0) as usize;
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
        let c = build_c(test, dir.path());
        let (mut best_c, mut best_rust) = (0.0f64, 0.0f64);
        for _ in 0..rounds {
            best_c = best_c.max(run(Command::new(&c).arg(secs.to_string())));
            best_rust = best_rust.max(run(Command::new(worker)
                .args([test.to_string(), secs.to_string(), "0".to_string()])
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
