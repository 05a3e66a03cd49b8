//! How runs are kept and shown, tested for real: every output file is written atomically with
//! one mode (an existing file keeps its mode, a new one gets 0644 less the umask); a closed or
//! full standard output ends the command with the conventional status and no panic, keeping
//! what was saved; a bad store is refused before any work; a store that fills up or stays
//! locked by another process mid-run costs neither the report nor the JSON, and the message
//! names the store, why it failed and who held the lock; a full disk is not called corruption.

mod common;

use common::{
    entries, fixture, mode_of, patchbench, read_json, std_patchbench, wait_until,
    wait_with_timeout, Tmpfs, SHORT,
};
use std::io::BufRead;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// `run` with one short test and no settle pauses.
const QUICK_RUN: [&str; 7] = [
    "--copies",
    "1",
    "--passes",
    "1",
    "--duration",
    "0.3",
    "--no-settle",
];

fn set_mode(path: &Path, mode: u32) {
    std::fs::write(path, b"old\n").unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn new_mode() -> u32 {
    0o644 & !patchbench::record::output_file::umask()
}

#[test]
fn every_output_file_gets_one_mode_and_no_temporary_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let store = dir.path().join("s.db");
    let p = |name: &str| out.join(name);
    // Existing files keep their (unusual) modes; new ones get 0644 less the umask.
    set_mode(&p("run.json"), 0o640);
    set_mode(&p("scale.svg"), 0o600);
    patchbench()
        .args(["run", "syscall"])
        .args(QUICK_RUN)
        .arg("--dir")
        .arg(&work)
        .arg("--json")
        .arg(p("run.json"))
        .arg("--csv")
        .arg(p("run.csv"))
        .arg("--store")
        .arg(&store)
        .assert()
        .success();
    patchbench()
        .args([
            "aim7",
            "creat-clo",
            "--load",
            "1",
            "--jobs",
            "1",
            "--no-store",
            "--no-start-delay",
        ])
        .arg("--dir")
        .arg(&work)
        .arg("--json")
        .arg(p("aim7.json"))
        .assert()
        .success();
    patchbench()
        .args([
            "scale",
            "getppid1",
            "--tasks",
            "1",
            "--mode",
            "process",
            "--no-store",
        ])
        .args(SHORT)
        .arg("--dir")
        .arg(&work)
        .arg("--json")
        .arg(p("scale.json"))
        .arg("--csv")
        .arg(p("scale.csv"))
        .arg("--svg")
        .arg(p("scale.svg"))
        .assert()
        .success();
    patchbench()
        .args(["model", "model-setbit", "--tasks", "1", "--no-store"])
        .args(SHORT)
        .arg("--dir")
        .arg(&work)
        .arg("--json")
        .arg(p("model.json"))
        .assert()
        .success();
    patchbench()
        .args(["export", "1", "--format", "csv", "--output"])
        .arg(p("export.csv"))
        .arg("--store")
        .arg(&store)
        .assert()
        .success();
    assert_eq!(mode_of(&p("run.json")), 0o640);
    assert_eq!(mode_of(&p("scale.svg")), 0o600);
    for f in [
        "run.csv",
        "aim7.json",
        "scale.json",
        "scale.csv",
        "model.json",
        "export.csv",
    ] {
        assert_eq!(mode_of(&p(f)), new_mode(), "{f}");
    }
    assert!(
        read_json(&p("run.json"))["tests"][0]["score"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(std::fs::read_to_string(p("scale.svg"))
        .unwrap()
        .contains("<svg"));
    assert!(std::fs::read_to_string(p("export.csv"))
        .unwrap()
        .contains("unixbench.score"));
    assert_eq!(
        entries(&out),
        [
            "aim7.json",
            "export.csv",
            "model.json",
            "run.csv",
            "run.json",
            "scale.csv",
            "scale.json",
            "scale.svg"
        ],
        "no temporary file is left"
    );
    assert!(entries(&work).is_empty());
}

fn store_with_a_run(dir: &Path) -> std::path::PathBuf {
    let store = dir.join("s.db");
    patchbench()
        .args(["import", "--store"])
        .arg(&store)
        .arg(fixture("ub60-base-1.txt"))
        .assert()
        .success();
    store
}

#[test]
fn a_closed_stdout_ends_quietly_with_141() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_a_run(dir.path());
    // `patchbench runs | head -0`: the reader is gone before anything is written.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = std_patchbench()
        .args(["runs", "--store"])
        .arg(&store)
        .stdout(writer)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(141));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn to_dev_full(args: &[&str], store: Option<&Path>) -> std::process::Output {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let mut c = std_patchbench();
    c.args(args);
    if let Some(s) = store {
        c.arg("--store").arg(s);
    }
    c.stdout(full).output().unwrap()
}

#[test]
fn a_full_stdout_is_one_line_and_exit_2_and_the_run_is_kept() {
    let out = to_dev_full(&["list"], None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot write to standard output"), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("internal error"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    let json = dir.path().join("r.json");
    let mut args = vec!["run", "syscall"];
    args.extend(QUICK_RUN);
    args.extend(["--json", json.to_str().unwrap()]);
    args.extend(["--dir", dir.path().to_str().unwrap()]);
    let out = to_dev_full(&args, Some(&store));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot write to standard output"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(read_json(&json)["tests"].as_array().unwrap().len(), 1);
    let shown = patchbench()
        .args(["show", "1", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains("test=syscall"),
        "the run stays saved: {shown}"
    );
    assert!(!shown.contains("(incomplete)"), "{shown}");
}

#[test]
fn a_bad_store_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.db");
    std::fs::write(&bad, vec![b'x'; 8192]).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let cases: [&[&str]; 4] = [
        &[
            "aim7",
            "creat-clo",
            "--load",
            "1",
            "--jobs",
            "1",
            "--no-start-delay",
        ],
        &["scale", "getppid1", "--tasks", "1"],
        &["model", "model-setbit", "--tasks", "1"],
        &["run", "syscall"],
    ];
    for args in cases {
        let out = patchbench()
            .args(args)
            .arg("--store")
            .arg(&bad)
            .arg("--dir")
            .arg(&work)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("bad.db is not a readable patchbench store"),
            "{err}"
        );
        assert!(out.stdout.is_empty(), "{args:?} started work");
        assert!(entries(&work).is_empty(), "{args:?} made files");
    }
    assert_eq!(std::fs::read(&bad).unwrap(), vec![b'x'; 8192]);
}

/// Starts `run syscall,pipe` saving into `store`; returns it once the first test is in the
/// store (the JSON file, written after the store, exists).
fn run_two_tests(
    store: &Path,
    json: &Path,
    dir: &Path,
    env: &[(&str, &str)],
) -> std::process::Child {
    let mut c = std_patchbench();
    c.args(["run", "syscall,pipe", "--copies", "1", "--passes", "1"])
        .args(["--duration", "0.5", "--no-settle", "--store"])
        .arg(store)
        .arg("--json")
        .arg(json)
        .arg("--dir")
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let child = c.spawn().unwrap();
    wait_until(Duration::from_secs(60), "the first test finished", || {
        json.exists()
    });
    child
}

fn finish(mut child: std::process::Child) -> (Option<i32>, String, String) {
    wait_with_timeout(&mut child, Duration::from_secs(60));
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_store_that_fills_up_mid_run_keeps_the_report_and_the_json() {
    let fs = Tmpfs::mount("size=4m");
    let dir = tempfile::tempdir().unwrap();
    let store = fs.path.join("s.db");
    let json = dir.path().join("r.json");
    let child = run_two_tests(&store, &json, dir.path(), &[]);
    fs.fill();
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stdout.contains("System Call Overhead") && stdout.contains("Pipe Throughput"),
        "{stdout}"
    );
    let doc = read_json(&json);
    assert_eq!(doc["tests"].as_array().unwrap().len(), 2);
    assert_eq!(doc["incomplete"], false);
    assert!(stderr.contains(&store.display().to_string()), "{stderr}");
    assert!(stderr.contains("full"), "{stderr}");
    assert!(!stderr.contains("corrupt"), "{stderr}");
    for line in stderr.lines() {
        assert!(
            line.matches(&store.display().to_string()).count() <= 1,
            "the store is named once per line (not `store X: store X:`): {line}"
        );
    }

    // With 0 bytes free the valid store is never called corrupt, and a run is refused at once.
    let out = patchbench()
        .args(["runs", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("corrupt"), "{err}");
    let out = patchbench()
        .args(["run", "syscall"])
        .args(QUICK_RUN)
        .arg("--store")
        .arg(&store)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("full") && !err.contains("corrupt"), "{err}");
    assert!(out.stdout.is_empty(), "no work may start: {err}");
}

#[test]
fn a_lock_held_by_another_process_is_reported_with_its_holder() {
    let dir = tempfile::tempdir().unwrap();
    // A directory name with a newline: the holder's command line and the store's path both
    // carry it, and the error must still be one line.
    let odd = dir.path().join("lock\nheld");
    std::fs::create_dir(&odd).unwrap();
    let store = odd.join("s.db");
    let json = dir.path().join("r.json");
    let child = run_two_tests(
        &store,
        &json,
        dir.path(),
        &[("PATCHBENCH_LOCK_WAIT_MS", "500")],
    );
    let mut holder = std_patchbench()
        .args(["debug-hold-lock", "--ms", "5000", "--store"])
        .arg(&store)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(holder.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "locked");
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stdout.contains("Pipe Throughput"), "{stdout}");
    assert_eq!(read_json(&json)["tests"].as_array().unwrap().len(), 2);
    let escaped = store.display().to_string().replace('\n', "\\n");
    assert!(
        stderr.contains(&format!("store {escaped} is locked by pid {}", holder.id())),
        "{stderr}"
    );
    assert!(stderr.contains("debug-hold-lock"), "{stderr}");
    assert!(
        !stderr.lines().any(|l| l.starts_with("held/s.db")),
        "a newline in the path or the holder's command line broke a line: {stderr}"
    );
    let _ = holder.kill();
    let _ = holder.wait();
}
