//! Integration tests of `patchbench aim7`: the work actually done (the tasks' own counters
//! against N × J × per-job counts), cleanup, AIM's output, bad input, limits, a full
//! filesystem, and real SIGINT/SIGTERM with hundreds of tasks running.

mod common;

use assert_cmd::Command;
use common::{entries, read_json, Tmpfs};
use serde_json::Value;
use std::io::BufRead;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn bin() -> std::process::Command {
    common::std_patchbench()
}

fn aim7(args: &[&str]) -> Command {
    let mut c = common::patchbench();
    c.arg("aim7").arg("--no-store").args(args);
    c
}

fn first_run(doc: &Value) -> &Value {
    &doc["aim7"]["points"][0]["runs"][0]
}

/// Processes whose process group is `pgid` (field 5 of /proc/PID/stat).
fn members_of_group(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let Some(after) = stat.rsplit_once(") ").map(|(_, a)| a) else {
            continue;
        };
        if after.split(' ').nth(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid) {
            out.push(pid);
        }
    }
    out
}

fn group_from_stderr(stderr: &str) -> i32 {
    stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("tasks run in process group "))
        .and_then(|g| g.trim().parse().ok())
        .expect("the driver names the tasks' process group")
}

#[test]
fn creat_clo_issues_exactly_n_j_1000_pairs_and_n_j_unlinks_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = aim7(&["creat-clo", "--load", "20", "--jobs", "2", "--dir"])
        .arg(&work)
        .arg("--json")
        .arg(&json)
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Tasks    jobs/min  jti  jobs/min/task      real       cpu"));
    let row = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("20 "))
        .expect("AIM row");
    assert!(row.split_whitespace().count() >= 6);

    let doc = read_json(&json);
    assert_eq!(doc["kind"], "aim7");
    assert_eq!(doc["incomplete"], false);
    let run = first_run(&doc);
    assert_eq!(run["counters"]["creat"], 20 * 2 * 1000);
    assert_eq!(run["counters"]["close"], 20 * 2 * 1000);
    assert_eq!(run["counters"]["unlink"], 20 * 2);
    assert_eq!(run["leftover_files"], 0);
    assert_eq!(run["completion_seconds"].as_array().unwrap().len(), 20);
    assert!(
        doc["aim7"]["filesystems"][0]["fs_type"]
            .as_str()
            .unwrap()
            .len()
            > 1
    );

    let metrics = doc["metrics"].as_array().unwrap();
    for name in [
        "aim7.jobs-per-min",
        "aim7.jobs-per-min-per-task",
        "aim7.jti",
        "aim7.real",
        "aim7.cpu",
        "aim7.task-completion-time",
    ] {
        let m = metrics
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(m["params"]["load"], "20");
        assert_eq!(m["params"]["test"], "creat-clo");
    }
    let jpm = metrics
        .iter()
        .find(|m| m["name"] == "aim7.jobs-per-min")
        .unwrap();
    let real = metrics.iter().find(|m| m["name"] == "aim7.real").unwrap();
    // jobs/min = J × N × 60 / real.
    let expect = 2.0 * 20.0 * 60.0 / real["value"].as_f64().unwrap();
    assert!((jpm["value"].as_f64().unwrap() - expect).abs() < 1e-6 * expect);
    let times = metrics
        .iter()
        .find(|m| m["name"] == "aim7.task-completion-time")
        .unwrap();
    assert_eq!(times["samples"].as_array().unwrap().len(), 20);
    assert!(entries(&work).is_empty(), "the --dir must be left empty");
}

#[test]
fn every_other_job_does_its_work_and_cleans_up() {
    // 3 tasks × 1 job; disk files are 8 + 8/3 = 10 blocks.
    let cases: &[(&str, &str, u64)] = &[
        ("disk_rr", "blocks_read", 30),
        ("disk_rw", "blocks_written", 60),
        ("disk_rd", "blocks_read", 30),
        ("disk_wrt", "blocks_written", 30),
        ("disk_cp", "blocks_written", 30),
        ("disk_src", "stat", 3 * 48),
        ("link_test", "link", 3 * (7 + 63)),
        ("fork_test", "wait", 300),
        ("exec_test", "exec_ok", 15),
        ("signal_test", "caught", 3000),
        ("brk_test", "sbrk", 3 * (2 + 1000 * 17)),
        ("page_test", "pages_touched", 3 * 100 * 16),
    ];
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    for (test, counter, expected) in cases {
        let json = dir.path().join(format!("{test}.json"));
        aim7(&[
            test,
            "--load",
            "3",
            "--jobs",
            "1",
            "--filesize",
            "8",
            "--poolsize",
            "8",
            "--dir",
        ])
        .arg(&work)
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
        let doc = read_json(&json);
        let run = first_run(&doc);
        assert_eq!(run["counters"][counter], *expected, "{test}: {counter}");
        assert_eq!(run["leftover_files"], 0, "{test}");
        assert!(entries(&work).is_empty(), "{test} left files behind");
    }
}

#[test]
fn two_dirs_are_used_round_robin() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let json = dir.path().join("o.json");
    aim7(&["creat-clo", "--load", "4", "--jobs", "2", "--dir"])
        .arg(&a)
        .arg("--dir")
        .arg(&b)
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let doc = read_json(&json);
    assert_eq!(doc["aim7"]["filesystems"].as_array().unwrap().len(), 2);
    assert_eq!(first_run(&doc)["counters"]["unlink"], 8);
    // The noise check taken as the run started describes the first directory.
    common::assert_noise_check(&doc, &a);
    assert!(entries(&a).is_empty() && entries(&b).is_empty());
}

fn fails_with(args: &[&str], dir: Option<&Path>, needle: &str) {
    let mut c = aim7(args);
    if let Some(d) = dir {
        c.arg("--dir").arg(d);
    }
    let out = c.assert().code(2).get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(needle), "expected {needle:?} in {stderr:?}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn bad_input_gets_one_clear_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    fails_with(
        &["no-such-test", "--load", "2"],
        Some(dir.path()),
        "unknown AIM7 test",
    );
    fails_with(
        &["creat-clo", "--load", "0"],
        Some(dir.path()),
        "0 is not in 1..",
    );
    fails_with(
        &["creat-clo", "--load", "2", "--jobs", "0"],
        Some(dir.path()),
        "0 is not in 1..",
    );
    fails_with(
        &["creat-clo", "--load", "2"],
        Some(&dir.path().join("missing")),
        "no such directory",
    );
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(dir.path(), &link).unwrap();
    fails_with(&["creat-clo", "--load", "2"], Some(&link), "symbolic link");
    let out = aim7(&["nope", "--load", "2"])
        .arg("--dir")
        .arg(dir.path())
        .assert()
        .code(2)
        .get_output()
        .clone();
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim().lines().count(),
        1
    );
}

#[test]
fn a_process_limit_below_the_load_is_refused_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = bin();
    cmd.args([
        "aim7",
        "creat-clo",
        "--load",
        "200",
        "--jobs",
        "1",
        "--no-store",
        "--dir",
    ])
    .arg(dir.path());
    common::with_process_limit(&mut cmd, 100);
    let out = Command::from_std(cmd).assert().code(2).get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ulimit -u"), "{stderr}");
    assert!(
        !stderr.contains("process group"),
        "no task may start: {stderr}"
    );
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn a_read_only_or_full_dir_is_refused() {
    if let Some(ro) = Tmpfs::mount("ro,size=1m") {
        fails_with(&["creat-clo", "--load", "2"], Some(&ro.path), "read-only");
    }
    if let Some(full) = Tmpfs::mount("size=1m,nr_inodes=2") {
        // The root takes one inode; this file takes the last.
        std::fs::write(full.path.join("mine"), b"x").unwrap();
        fails_with(&["creat-clo", "--load", "2"], Some(&full.path), "full");
        assert_eq!(
            entries(&full.path),
            ["mine"],
            "a user's file is never touched"
        );
    }
}

#[test]
fn running_out_of_space_mid_run_stops_every_task_and_cleans_up() {
    let Some(fs) = Tmpfs::mount("size=1m,nr_inodes=12") else {
        return;
    };
    std::fs::write(fs.path.join("keep-me"), b"user data").unwrap();
    let out = aim7(&["creat-clo", "--load", "20", "--jobs", "3", "--dir"])
        .arg(&fs.path)
        .assert()
        .code(2)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("creat-clo"), "{stderr}");
    assert!(stderr.contains(&fs.path.display().to_string()), "{stderr}");
    assert!(stderr.contains("is full"), "{stderr}");
    assert!(
        members_of_group(group_from_stderr(&stderr)).is_empty(),
        "tasks left behind"
    );
    assert_eq!(entries(&fs.path), ["keep-me"]);
}

/// A long creat-clo run whose tasks have all been released.
struct LongRun {
    child: std::process::Child,
    lines: std::io::Lines<std::io::BufReader<std::process::ChildStderr>>,
    pgid: i32,
    _dir: tempfile::TempDir,
    work: std::path::PathBuf,
    json: std::path::PathBuf,
}

impl LongRun {
    fn start(load: u32) -> LongRun {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let json = dir.path().join("o.json");
        let mut child = bin()
            .args([
                "aim7",
                "creat-clo",
                "--jobs",
                "1000000",
                "--no-store",
                "--load",
            ])
            .arg(load.to_string())
            .arg("--dir")
            .arg(&work)
            .arg("--json")
            .arg(&json)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let mut seen = String::new();
        for line in lines.by_ref() {
            let line = line.unwrap();
            seen.push_str(&line);
            seen.push('\n');
            if line.contains("released") {
                break;
            }
        }
        assert!(seen.contains(&format!("{load} tasks parked")), "{seen}");
        let pgid = group_from_stderr(&seen);
        assert_eq!(members_of_group(pgid).len(), load as usize);
        LongRun {
            child,
            lines,
            pgid,
            _dir: dir,
            work,
            json,
        }
    }

    /// Waits for the exit status and the rest of stderr.
    fn finish(mut self) -> (Option<i32>, Vec<String>, LongRun) {
        let rest: Vec<String> = self.lines.by_ref().map_while(Result::ok).collect();
        let deadline = Instant::now() + Duration::from_secs(120);
        let code = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s.code();
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("patchbench did not stop");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        (code, rest, self)
    }
}

#[test]
fn a_crashing_task_stops_the_run_with_no_task_or_file_left() {
    let run = LongRun::start(10);
    let victim = *members_of_group(run.pgid).iter().max().unwrap();
    // SAFETY: killing one of the tasks our child started.
    unsafe { libc::kill(victim, libc::SIGKILL) };
    let (code, rest, run) = run.finish();
    assert_eq!(code, Some(1), "{rest:?}");
    assert!(
        rest.iter().any(|l| l.contains("was killed by signal 9")),
        "{rest:?}"
    );
    assert!(members_of_group(run.pgid).is_empty(), "tasks left behind");
    assert!(entries(&run.work).is_empty());
}

/// Starts a long run, waits until all tasks are released, sends `sig`, and checks the exit
/// status, that no task survives, that the --dir is empty and that the JSON was kept.
fn interrupt_running_tasks(load: u32, sig: i32, status: i32) {
    let run = LongRun::start(load);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(run.child.id() as i32, sig) };
    let (code, rest, run) = run.finish();
    assert_eq!(code, Some(status), "{}", rest.join("\n"));
    assert!(rest.iter().any(|l| l.contains("interrupted")), "{rest:?}");
    assert!(members_of_group(run.pgid).is_empty(), "tasks left behind");
    assert!(
        entries(&run.work).is_empty(),
        "files left behind: {:?}",
        entries(&run.work)
    );
    assert_eq!(read_json(&run.json)["incomplete"], true);
}

#[test]
fn sigint_with_500_tasks_running_leaves_no_task_and_no_file() {
    interrupt_running_tasks(500, libc::SIGINT, 130);
}

#[test]
fn sigterm_exits_143_and_cleans_up() {
    interrupt_running_tasks(40, libc::SIGTERM, 143);
}

#[test]
fn the_help_says_how_to_make_a_ramdisk_or_use_tmpfs() {
    let out = Command::cargo_bin("patchbench")
        .unwrap()
        .args(["aim7", "--help"])
        .assert()
        .success()
        .get_output()
        .clone();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("modprobe brd"));
    assert!(help.contains("tmpfs"));
    assert!(help.contains("--aim-start-delay"));
}

#[test]
fn an_unwritable_json_path_is_refused_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let out = aim7(&[
        "creat-clo",
        "--load",
        "2",
        "--json",
        "/nonexistent-dir/x.json",
        "--dir",
    ])
    .arg(dir.path())
    .assert()
    .code(2)
    .get_output()
    .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--json"), "{stderr}");
    assert!(
        !stderr.contains("process group"),
        "nothing may run: {stderr}"
    );
}

#[test]
fn several_runs_and_loads_each_become_samples() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("o.json");
    let work = dir.path().join("w");
    std::fs::create_dir(&work).unwrap();
    let out = aim7(&[
        "creat-clo",
        "--load",
        "2,3",
        "--jobs",
        "1",
        "--runs",
        "2",
        "--dir",
    ])
    .arg(&work)
    .arg("--json")
    .arg(&json)
    .assert()
    .success()
    .get_output()
    .clone();
    assert!(String::from_utf8_lossy(&out.stdout).contains("mean of 2 runs"));
    let doc = read_json(&json);
    let jpm: Vec<&Value> = doc["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["name"] == "aim7.jobs-per-min")
        .collect();
    assert_eq!(jpm.len(), 2);
    for m in jpm {
        let samples = m["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 2);
        let mean = (samples[0].as_f64().unwrap() + samples[1].as_f64().unwrap()) / 2.0;
        assert!((m["value"].as_f64().unwrap() - mean).abs() < 1e-9 * mean);
    }
    let times = common::metric(&doc, "aim7.task-completion-time", &[("load", "3")]);
    assert_eq!(times["samples"].as_array().unwrap().len(), 6);
}

#[test]
fn aims_start_delay_is_counted_inside_real_and_every_completion_time() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("o.json");
    aim7(&[
        "creat-clo",
        "--load",
        "2",
        "--jobs",
        "1",
        "--aim-start-delay",
        "--dir",
    ])
    .arg(dir.path())
    .arg("--json")
    .arg(&json)
    .assert()
    .success();
    let doc = read_json(&json);
    let run = first_run(&doc);
    assert!(run["figures"]["real"].as_f64().unwrap() >= 10.0);
    for t in run["completion_seconds"].as_array().unwrap() {
        assert!(t.as_f64().unwrap() >= 10.0);
    }
    assert_eq!(doc["config"]["aim_start_delay_seconds"], 10);
}

/// SIGTERM during the third load point: the two finished ones are in the JSON file and the
/// store, the third has no run, and nothing is left behind.
#[test]
fn sigterm_in_the_third_load_point_keeps_the_first_two() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let json = dir.path().join("o.json");
    let store = dir.path().join("s.db");
    let mut cmd = bin();
    cmd.args(["aim7", "creat-clo", "--load", "1,2,400", "--jobs", "10"])
        .arg("--dir")
        .arg(&work)
        .arg("--json")
        .arg(&json)
        .arg("--store")
        .arg(&store);
    // The third "released" is the third load point's tasks starting.
    let (status, rest) = common::interrupt_after(&mut cmd, "released", 3, libc::SIGTERM);
    assert!(rest.iter().any(|l| l.contains("interrupted")), "{rest:?}");
    assert_eq!(status.code(), Some(143));
    let loads_with_results = |doc: &Value| -> Vec<String> {
        doc["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["name"] == "aim7.jobs-per-min")
            .map(|m| m["params"]["load"].as_str().unwrap().to_string())
            .collect()
    };
    let doc = read_json(&json);
    assert_eq!(doc["incomplete"], true);
    assert_eq!(loads_with_results(&doc), ["1", "2"]);
    let points = doc["aim7"]["points"].as_array().unwrap();
    assert_eq!(points[2]["runs"].as_array().unwrap().len(), 0);
    let exported = common::patchbench()
        .args(["export", "1", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    let stored: Value = serde_json::from_slice(&exported.stdout).unwrap();
    assert_eq!(loads_with_results(&stored), ["1", "2"]);
    assert_eq!(stored["incomplete"], true);
    assert!(entries(&work).is_empty());
}
