//! Fidelity properties of the UnixBench workloads that a score alone does not show: the file
//! tests' internal pauses survive `--quick`, and the shell pipelines start with SIGPIPE at its
//! default action. (Speed comparisons with UnixBench's programs live in benches/fidelity.rs.)

use std::io::Write;
use std::process::{Command, Stdio};

/// fstime's pauses: sync, 2 s, sync, 2 s before the write and the read phase; 2 s and 1 s
/// before the copy.
const PAUSES_S: f64 = 11.0;

#[test]
fn quick_keeps_the_file_tests_pauses() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let out = Command::new(env!("CARGO_BIN_EXE_patchbench"))
        .env("PATCHBENCH_WORKER", env!("CARGO_BIN_EXE_patchbench-worker"))
        .args([
            "run",
            "fsbuffer",
            "--quick",
            "--duration",
            "0.2",
            "--copies",
            "1",
            "--no-store",
        ])
        .arg("--dir")
        .arg(dir.path())
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["config"]["settle"], serde_json::json!(false));
    let copy = &doc["tests"][0]["passes"][0]["copies"][0];
    // A sleep never ends early, so the copy's wall time holds the 11 s of pauses whatever the
    // machine's speed; without them it would be about 0.6 s.
    let wall = copy["wall_seconds"].as_f64().unwrap();
    assert!(
        wall >= PAUSES_S,
        "copy took {wall} s: the pauses were skipped"
    );
    assert!(copy["count"].as_f64().unwrap() > 0.0);
}

#[test]
fn the_worker_reports_the_pauses_it_made() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_patchbench-worker"))
        .args(["fsbuffer", "0.1"])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.lines().any(|l| l == "PAUSES|2,2,2,2,2,1"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("TIME|")), "{text}");
}

/// The bit of SIGPIPE (13) in /proc's signal masks.
const SIGPIPE_BIT: u64 = 1 << (13 - 1);

#[test]
fn shell_pipelines_start_with_the_default_sigpipe_action() {
    let dir = tempfile::tempdir().unwrap();
    let pgms = dir.path().join("pgms");
    std::fs::create_dir(&pgms).unwrap();
    // A multi.sh that records the ignored-signal mask of a process it starts, as the
    // pipeline's processes would see it.
    let script = pgms.join("multi.sh");
    let mut f = std::fs::File::create(&script).unwrap();
    writeln!(
        f,
        "#!/bin/sh\ngrep '^SigIgn:' /proc/self/status > sigign.txt"
    )
    .unwrap();
    drop(f);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();

    let out = Command::new(env!("CARGO_BIN_EXE_patchbench-worker"))
        .args(["shell1", "0.2"])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let line = std::fs::read_to_string(dir.path().join("sigign.txt")).unwrap();
    let mask = u64::from_str_radix(line.trim().trim_start_matches("SigIgn:").trim(), 16).unwrap();
    assert_eq!(
        mask & SIGPIPE_BIT,
        0,
        "SIGPIPE is ignored in the pipeline: {line}"
    );
}
