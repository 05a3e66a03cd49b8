//! Integration tests of `patchbench scale`: every testcase runs briefly in both modes and its
//! counter moves; CSV, SVG and JSON are written; bad input is refused with one line and exit
//! status 2 before anything starts; SIGINT and SIGTERM leave no task and no file behind.
//! Nothing here depends on how fast the machine is: only counts > 0, files and exit statuses.

use assert_cmd::Command;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Short sampling for tests: three 0.1 s samples, no warm-up.
const SHORT: [&str; 6] = [
    "--duration",
    "0.3",
    "--warmup",
    "0",
    "--sample-interval",
    "0.1",
];

fn patchbench() -> Command {
    Command::cargo_bin("patchbench").unwrap()
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The testcases `scale --list` names (the registry), in its order.
fn registry() -> Vec<String> {
    let out = patchbench().args(["scale", "--list"]).assert().success();
    String::from_utf8(out.get_output().stdout.clone())
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

/// Testcases that need something of the machine beyond a writable temp directory: O_DIRECT on
/// `--dir` (read3, read4) and a tmpfs in /dev/shm (fallocate1). They run in a test of their own
/// that accepts their documented refusal.
const NEEDS_MORE: [&str; 3] = ["fallocate1", "read3", "read4"];

/// Runs `tests` in one invocation, both modes, one task, 0.3 s each, with the private
/// directory made in `parent` (a fresh temporary directory when None); checks that every point
/// counted operations and that nothing is left behind.
fn counters_move(tests: &[String], parent: Option<&Path>) {
    let tmp = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir_in(parent.unwrap_or(tmp.path())).unwrap();
    let json = tmp.path().join("r.json");
    patchbench()
        .args(["scale", &tests.join(",")])
        .args(["--tasks", "1", "--mode", "both", "--no-store"])
        .args(SHORT)
        .arg("--dir")
        .arg(work.path())
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let r = read_json(&json);
    let points = r["extra"]["points"].as_array().unwrap();
    assert_eq!(
        points.len(),
        2 * tests.len(),
        "one point per testcase and mode"
    );
    for test in tests {
        for mode in ["processes", "threads"] {
            let p = points
                .iter()
                .find(|p| p["test"] == test.as_str() && p["mode"] == mode)
                .unwrap_or_else(|| panic!("{test} {mode}: no point"));
            let ops: u64 = p["per_task_ops"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .sum();
            assert!(ops > 0, "{test} {mode}: counter did not move");
        }
    }
    assert!(
        entries(work.path()).is_empty(),
        "left {:?}",
        walk(work.path())
    );
}

/// Every testcase in the registry but NEEDS_MORE, dealt into `of` groups for parallel tests.
fn group(k: usize, of: usize) -> Vec<String> {
    registry()
        .into_iter()
        .filter(|t| !NEEDS_MORE.contains(&t.as_str()))
        .enumerate()
        .filter(|(i, _)| i % of == k)
        .map(|(_, t)| t)
        .collect()
}

#[test]
fn every_testcase_counts_group_0() {
    counters_move(&group(0, 4), None);
}

#[test]
fn every_testcase_counts_group_1() {
    counters_move(&group(1, 4), None);
}

#[test]
fn every_testcase_counts_group_2() {
    counters_move(&group(2, 4), None);
}

#[test]
fn every_testcase_counts_group_3() {
    counters_move(&group(3, 4), None);
}

/// read3 and read4 (O_DIRECT, under target/, which is rarely tmpfs) and fallocate1 (/dev/shm)
/// count; on a machine that cannot run them they are refused with their one line instead.
#[test]
fn testcases_needing_o_direct_or_tmpfs_count_or_are_refused() {
    let names: Vec<String> = NEEDS_MORE.iter().map(|s| s.to_string()).collect();
    let listed = registry();
    assert!(names.iter().all(|n| listed.contains(n)));
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let probe = patchbench()
        .args(["scale", &names.join(","), "--tasks", "1", "--no-store"])
        .args(["--duration", "0.1", "--warmup", "0", "--mode", "process"])
        .arg("--dir")
        .arg(target)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&probe.stderr);
    if probe.status.code() == Some(2) && (err.contains("O_DIRECT") || err.contains("/dev/shm")) {
        eprintln!("skipped: this machine cannot run them: {err}");
        return;
    }
    counters_move(&names, Some(target));
}

/// poll2 in thread mode at 10 tasks needs 10 × 128 files in one process: with `ulimit -n 1024`
/// the driver raises the soft limit and every thread counts; with the hard limit at 1024 too
/// the tasks stop with the number needed. (Growing a shared descriptor table waits for RCU
/// grace periods, slow on a loaded machine, so the first run is short and a longer one follows
/// only if some thread had not finished opening its files.)
#[test]
fn poll2_threads_get_enough_descriptors_or_the_number_needed() {
    let run = |soft: u64, hard: u64, secs: &str| {
        use std::os::unix::process::CommandExt;
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("p.json");
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("patchbench"));
        cmd.args([
            "scale",
            "poll2",
            "--tasks",
            "10",
            "--mode",
            "thread",
            "--no-store",
        ])
        .args([
            "--duration",
            secs,
            "--warmup",
            "0",
            "--sample-interval",
            "0.1",
        ])
        .arg("--dir")
        .arg(dir.path())
        .arg("--json")
        .arg(&json);
        // SAFETY: setrlimit is async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                let lim = libc::rlimit {
                    rlim_cur: soft,
                    rlim_max: hard,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let out = cmd.output().unwrap();
        let busy = json.exists().then(|| {
            read_json(&json)["extra"]["points"][0]["per_task_ops"]
                .as_array()
                .map(|a| a.iter().filter(|v| v.as_u64() > Some(0)).count())
        });
        (out, busy.flatten())
    };
    let hard = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .unwrap()
        .1;
    if hard >= 10 * (128 + 10) + 64 {
        for secs in ["0.3", "2", "8"] {
            let (out, busy) = run(1024, hard, secs);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "stderr: {err}");
            if busy == Some(10) {
                break;
            }
            assert!(secs != "8", "only {busy:?} of 10 threads counted in 8 s");
        }
    }
    let (out, _) = run(1024, 1024, "0.3");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert!(
        err.contains("poll2 in 10 threads needs 1444 open files")
            && err.contains("hard limit (ulimit -Hn) is 1024"),
        "stderr: {err}"
    );
}

#[test]
fn list_names_every_testcase_once_with_its_description() {
    let out = patchbench().args(["scale", "--list"]).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let mut names = Vec::new();
    for line in text.lines() {
        let (name, description) = line.split_once(' ').unwrap();
        assert!(!description.trim().is_empty(), "{name} has no description");
        names.push(name.to_string());
    }
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted, names, "names are unique and in alphabetical order");
    assert!(text.contains("open1") && text.contains("Separate file open/close"));
    assert!(text.contains("writeseek2") && text.contains("Same file seek+read"));
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
    let m = r["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "will-it-scale.2.processes" && m["params"]["test"] == "open1")
        .unwrap();
    assert_eq!(m["samples"].as_array().unwrap().len(), 3);
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
    let counters = &r["extra"]["points"][0]["counters_per_op"];
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
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("patchbench"));
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
    // SAFETY: setrlimit is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 16,
                rlim_max: 16,
            };
            if libc::setrlimit(libc::RLIMIT_NPROC, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains("process limit"), "stderr: {err}");
    assert_eq!(err.lines().count(), 1);
    assert!(entries(dir.path()).is_empty());
}

/// Processes whose command line mentions `marker` (tasks are forked, so they carry the
/// driver's command line with its unique --dir).
fn processes_mentioning(marker: &str) -> Vec<i32> {
    let me = std::process::id() as i32;
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(marker))
                .unwrap_or(false)
        })
        .collect()
}

/// Starts a long run, waits until `procs` processes (driver, tasks, helpers) run and, when
/// `files`, the tasks have made their files; sends `signal`, and checks the exit status, that
/// every task is gone within a second and that no file is left.
fn interrupted(test: &str, mode: &str, procs: usize, files: bool, signal: i32, status: i32) {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().to_str().unwrap().to_string();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("patchbench"))
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
    // Task files sit in the private directory (--dir/patchbench-XXXXXX/wis-XXXXXX), one level
    // below will-it-scale's /tmp/willitscale.XXXXXX; open2's add their per-task directory.
    let most = if test.ends_with('2') { 3 } else { 2 };
    for p in walk(dir.path()).iter().filter(|p| p.is_file()) {
        let depth = p.strip_prefix(dir.path()).unwrap().components().count();
        assert!(depth <= most, "{} is {depth} levels deep", p.display());
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

fn walk(d: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(d) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            }
            out.push(p);
        }
    }
    out
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
