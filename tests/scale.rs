//! Integration tests of `patchbench scale`: every testcase runs briefly in both modes and its
//! counter moves; CSV, SVG and JSON are written; bad input is refused with one line and exit
//! status 2 before anything starts; SIGINT and SIGTERM leave no task and no file behind.
//! Nothing here depends on how fast the machine is: only counts > 0, files and exit statuses.

mod common;

use common::{entries, patchbench, processes_mentioning, read_json, walk, SHORT};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Runs `test` in both modes with one task; checks each point counted operations and that the
/// private working directory is gone afterwards.
fn counter_moves(test: &str) {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let json = dir.path().join("r.json");
    patchbench()
        .args([
            "scale",
            test,
            "--tasks",
            "1",
            "--mode",
            "both",
            "--no-store",
        ])
        .args(SHORT)
        .arg("--dir")
        .arg(&work)
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let r = read_json(&json);
    let points = r["will_it_scale"]["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{test}: one point per mode");
    for p in points {
        let ops: u64 = p["per_task_ops"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert!(ops > 0, "{test} {}: counter did not move", p["mode"]);
    }
    assert!(
        entries(&work).is_empty(),
        "{test}: left {:?}",
        entries(&work)
    );
}

/// Every registered testcase, two at a time as the test harness ran them on this 2-core
/// machine when each had its own test (each is its own patchbench process).
#[test]
fn every_registered_testcase_counts_in_both_modes() {
    let names: Vec<&str> = patchbench::will_it_scale::testcases::ALL
        .iter()
        .map(|t| t.name)
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(name) = names.get(i) else { break };
                counter_moves(name);
            });
        }
    });
}

#[test]
fn list_names_every_testcase() {
    let out = patchbench().args(["scale", "--list"]).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert_eq!(
        text.lines().count(),
        patchbench::will_it_scale::testcases::ALL.len()
    );
    assert!(text.contains("open1") && text.contains("Separate file open/close"));
}

#[test]
fn writes_csv_svg_and_json_with_lkp_metric_names() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, svg, json) = (
        dir.path().join("s.csv"),
        dir.path().join("s.svg"),
        dir.path().join("s.json"),
    );
    patchbench()
        .args([
            "scale",
            "getppid1",
            "open1",
            "--tasks",
            "1,2",
            "--mode",
            "both",
            "--no-store",
        ])
        .args(SHORT)
        .arg("--csv")
        .arg(&csv)
        .arg("--svg")
        .arg(&svg)
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "test,tasks,processes,processes_idle,threads,threads_idle,linear"
    );
    // Per test: the 0 row and one row per task count.
    assert_eq!(lines.len(), 1 + 2 * 3);
    assert!(lines.contains(&"getppid1,0,0,100,0,100,0"));
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg"));
    for label in ["processes", "threads", "linear", "getppid1", "open1"] {
        assert!(svg.contains(label), "SVG lacks {label}");
    }
    let r = read_json(&json);
    assert_eq!(r["kind"], "will-it-scale");
    common::assert_noise_check(&r, &std::env::temp_dir());
    let names: Vec<String> = r["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap().to_string())
        .collect();
    for n in [
        "will-it-scale.per_process_ops",
        "will-it-scale.per_thread_ops",
        "will-it-scale.2.processes",
        "will-it-scale.1.threads",
    ] {
        assert!(names.iter().any(|x| x == n), "missing metric {n}");
    }
    let m = common::metric(&r, "will-it-scale.2.processes", &[("test", "open1")]);
    assert_eq!(m["samples"].as_array().unwrap().len(), 2);
}

#[test]
fn counters_flag_reports_or_says_not_available() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("c.json");
    let out = patchbench()
        .args([
            "scale",
            "page_fault1",
            "--tasks",
            "1",
            "--mode",
            "process",
            "--counters",
        ])
        .args(["--no-store"])
        .args(SHORT)
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    let r = read_json(&json);
    let counters = &r["will_it_scale"]["points"][0]["counters_per_op"];
    // Either the kernel gave counters, or the run said so exactly once and went on.
    if counters.is_null() {
        assert_eq!(err.matches("not available on this system").count(), 1);
    } else {
        assert!(counters.as_object().unwrap().contains_key("page-faults"));
    }
}

/// Runs a bad command: exit 2, one line on stderr, nothing created in `--dir`.
fn refused(args: &[&str], expect: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = patchbench()
        .args(args)
        .arg("--no-store")
        .arg("--dir")
        .arg(dir.path())
        .assert()
        .code(2);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains(expect), "stderr: {err}");
    assert!(entries(dir.path()).is_empty(), "something was started");
}

#[test]
fn unknown_testcase_is_refused() {
    refused(
        &["scale", "getppid1", "nosuch1"],
        "unknown testcase \"nosuch1\"",
    );
    let dir = tempfile::tempdir().unwrap();
    let out = patchbench()
        .args(["scale", "nosuch1", "--dir"])
        .arg(dir.path())
        .assert()
        .code(2);
    assert_eq!(
        String::from_utf8_lossy(&out.get_output().stderr)
            .lines()
            .count(),
        1
    );
}

#[test]
fn zero_tasks_is_refused() {
    refused(&["scale", "getppid1", "--tasks", "0"], "at least 1");
    refused(&["scale", "getppid1", "--tasks", "1,0"], "at least 1");
}

#[test]
fn unwritable_output_path_is_refused() {
    refused(
        &["scale", "getppid1", "--csv", "/nonexistent-dir/s.csv"],
        "does not exist",
    );
    refused(&["scale", "getppid1", "--svg", "/"], "is a directory");
}

#[test]
fn missing_dir_is_refused() {
    patchbench()
        .args(["scale", "getppid1", "--dir", "/nonexistent-patchbench-dir"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no such directory"));
}

#[test]
fn more_tasks_than_the_process_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = common::std_patchbench();
    cmd.args([
        "scale",
        "getppid1",
        "--tasks",
        "64",
        "--mode",
        "process",
        "--no-store",
    ])
    .arg("--dir")
    .arg(dir.path());
    common::with_process_limit(&mut cmd, 16);
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains("process limit"), "stderr: {err}");
    assert_eq!(err.lines().count(), 1);
    assert!(entries(dir.path()).is_empty());
}

/// Starts a long run, waits until `procs` processes (driver, tasks, helpers) run and, when
/// `files`, the tasks have made their files; sends `signal`, and checks the exit status, that
/// every task is gone within a second and that no file is left.
fn interrupted(test: &str, mode: &str, procs: usize, files: bool, signal: i32, status: i32) {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().to_str().unwrap().to_string();
    let child = common::std_patchbench()
        .args([
            "scale",
            test,
            "--tasks",
            "2",
            "--mode",
            mode,
            "--duration",
            "60",
        ])
        .args(["--no-store", "--dir", &marker])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let started = || {
        processes_mentioning(&marker).len() >= procs
            && (!files || walk(dir.path()).iter().any(|p| p.is_file()))
    };
    while !started() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(child.id() as i32, signal) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(status), "stderr: {err}");
    assert!(err.contains("interrupted"), "stderr: {err}");
    let gone = Instant::now();
    loop {
        let left = processes_mentioning(&marker);
        if left.is_empty() {
            break;
        }
        assert!(
            gone.elapsed() < Duration::from_secs(1),
            "tasks left: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        entries(dir.path()).is_empty(),
        "left {:?}",
        walk(dir.path())
    );
}

#[test]
fn sigint_stops_process_tasks_and_removes_files() {
    interrupted("open1", "process", 3, true, libc::SIGINT, 130);
}

#[test]
fn sigterm_stops_thread_tasks_and_removes_files() {
    interrupted("open2", "thread", 2, true, libc::SIGTERM, 143);
}

#[test]
fn sigint_stops_helper_tasks_too() {
    // context_switch1's partners are grandchildren in process mode.
    interrupted("context_switch1", "process", 5, false, libc::SIGINT, 130);
}

/// SIGTERM mid-way through the task counts: the points that finished are in the JSON file
/// and the store.
#[test]
fn sigterm_mid_way_keeps_the_finished_task_counts() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let json = dir.path().join("r.json");
    let store = dir.path().join("s.db");
    let mut cmd = common::std_patchbench();
    cmd.args(["scale", "getppid1", "--tasks", "1,2,3", "--mode", "process"])
        .args(SHORT)
        .arg("--dir")
        .arg(&work)
        .arg("--json")
        .arg(&json)
        .arg("--store")
        .arg(&store);
    // Each finished point prints one "ops/s ... per task" line.
    let (status, rest) = common::interrupt_after(&mut cmd, "per task", 2, libc::SIGTERM);
    assert!(rest.iter().any(|l| l.contains("interrupted")), "{rest:?}");
    assert_eq!(status.code(), Some(143));
    let tasks_of = |doc: &serde_json::Value| -> Vec<u64> {
        doc["will_it_scale"]["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["tasks"].as_u64().unwrap())
            .collect()
    };
    let doc = read_json(&json);
    assert_eq!(doc["incomplete"], true);
    assert_eq!(tasks_of(&doc), [1, 2]);
    let exported = common::patchbench()
        .args(["export", "1", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    let stored: serde_json::Value = serde_json::from_slice(&exported.stdout).unwrap();
    assert_eq!(tasks_of(&stored), [1, 2]);
    assert!(stored["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["name"] == "will-it-scale.2.processes"));
    assert!(entries(&work).is_empty());
}
