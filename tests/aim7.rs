//! Integration tests of `patchbench aim7`: the work each of the 56 tests actually does (the
//! tasks' own counters against N × per-job counts, walking the JOBS registry), workfile mixes
//! and load series, AIM's log and clock ticks, cleanup, AIM's output, bad input, limits, a full
//! filesystem, real SIGINT/SIGTERM with hundreds of tasks running, and keeping the finished load
//! points of an interrupted series. Most runs pass --no-start-delay, so the file stays fast.

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
    c.arg("aim7")
        .arg("--no-store")
        .arg("--no-start-delay")
        .args(args);
    c
}

/// A temp directory with an empty `work` directory for --dir and a path for --json.
struct Scratch {
    dir: tempfile::TempDir,
    work: std::path::PathBuf,
    json: std::path::PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let json = dir.path().join("out.json");
        Scratch { dir, work, json }
    }

    /// Runs `cmd` with --dir work --json; returns stdout and the JSON record.
    fn run(&self, mut cmd: Command) -> (String, Value) {
        cmd.arg("--dir")
            .arg(&self.work)
            .arg("--json")
            .arg(&self.json);
        let out = cmd.assert().success().get_output().clone();
        let doc = read_json(&self.json);
        (String::from_utf8_lossy(&out.stdout).into_owned(), doc)
    }
}

/// AIM's table in `stdout`: checks the header and returns the row for `tasks`.
fn aim_row(stdout: &str, tasks: u32) -> &str {
    assert!(stdout.contains("Tasks    jobs/min  jti  jobs/min/task      real       cpu"));
    let row = stdout
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{tasks} ")))
        .expect("AIM row");
    assert!(row.split_whitespace().count() >= 6, "{row}");
    row
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
    let s = Scratch::new();
    let (stdout, doc) = s.run(aim7(&["creat-clo", "--load", "20", "--jobs", "2"]));
    aim_row(&stdout, 20);
    let work = &s.work;
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
    assert!(entries(work).is_empty(), "the --dir must be left empty");
}

/// What one job of each test must count, with 1 KiB disk files of B = 12 blocks
/// (--filesize 8 --poolsize 8 at load 2): (test, [(counter, per job)]).
const PER_JOB: &[(&str, &[(&str, u64)])] = &[
    ("add_double", &[("operations", 18_000_000)]),
    ("add_float", &[("operations", 12_000_000)]),
    ("add_long", &[("operations", 60_000_000)]),
    ("add_int", &[("operations", 60_000_000)]),
    ("add_short", &[("operations", 24_000_000)]),
    ("mul_double", &[("operations", 12_000_000)]),
    ("mul_float", &[("operations", 12_000_000)]),
    ("mul_long", &[("operations", 240_000)]),
    ("mul_int", &[("operations", 240_000)]),
    ("mul_short", &[("operations", 300_000)]),
    ("div_double", &[("operations", 3_000_000)]),
    ("div_float", &[("operations", 3_000_000)]),
    ("div_long", &[("operations", 900_000)]),
    ("div_int", &[("operations", 900_000)]),
    ("div_short", &[("operations", 900_000)]),
    (
        "creat-clo",
        &[("creat", 1000), ("close", 1000), ("unlink", 1)],
    ),
    ("page_test", &[("sbrk", 1702), ("pages_touched", 1600)]),
    ("brk_test", &[("sbrk", 17_002), ("pages_touched", 0)]),
    ("jmp_test", &[("longjmp", 1000)]),
    (
        "signal_test",
        &[("kill", 1000), ("caught", 1000), ("signal_calls", 1001)],
    ),
    ("exec_test", &[("fork", 5), ("exec_ok", 5)]),
    ("fork_test", &[("fork", 100), ("reaped", 100)]),
    ("link_test", &[("creat", 1), ("link", 70), ("unlink", 71)]),
    (
        "disk_rr",
        &[("blocks_written", 12), ("blocks_read", 12), ("unlinks", 1)],
    ),
    (
        "disk_rw",
        &[("blocks_written", 24), ("blocks_read", 0), ("unlinks", 1)],
    ),
    ("disk_rd", &[("blocks_read", 12), ("files_created", 0)]),
    (
        "disk_wrt",
        &[("blocks_written", 12), ("files_created", 1), ("unlinks", 1)],
    ),
    (
        "disk_cp",
        &[("blocks_read", 12), ("blocks_written", 12), ("unlinks", 1)],
    ),
    ("sync_disk_rw", &[("blocks_written", 12), ("unlinks", 1)]),
    ("sync_disk_wrt", &[("blocks_written", 6), ("unlinks", 1)]),
    (
        "sync_disk_cp",
        &[("blocks_read", 6), ("blocks_written", 6), ("unlinks", 1)],
    ),
    (
        "sync_disk_update",
        &[("blocks_read", 6), ("blocks_written", 18), ("unlinks", 1)],
    ),
    (
        "disk_src",
        &[
            ("stat", 57),
            ("creat", 43),
            ("unlink", 43),
            ("dirlist_reads", 1),
        ],
    ),
    ("sieve", &[("passes", 5), ("primes", 78_498)]),
    ("num_rtns_1", &[("iterations", 100), ("libm_calls", 1100)]),
    ("new_raph", &[("zeros", 200)]),
    (
        "trig_rtns",
        &[("iterations", 10_000), ("libm_calls", 100_000)],
    ),
    ("matrix_rtns", &[("points", 100), ("multiply_adds", 1600)]),
    ("array_rtns", &[("systems", 20), ("equations", 1050)]),
    (
        "string_rtns",
        &[("iterations", 100), ("appends", 100 * (55 + 99))],
    ),
    ("mem_rtns_1", &[("allocations", 30_000), ("frees", 30_000)]),
    ("mem_rtns_2", &[("iterations", 100)]),
    (
        "sort_rtns_1",
        &[("sorts", 6), ("searches", 4000), ("misses", 2000)],
    ),
    ("misc_rtns_1", &[("iterations", 10), ("calls", 210)]),
    ("dir_rtns_1", &[("readdir", 10_000)]),
    ("shell_rtns_1", &[("scripts", 1)]),
    ("shell_rtns_2", &[("scripts", 1)]),
    ("shell_rtns_3", &[("scripts", 1)]),
    ("series_1", &[("series", 100)]),
    ("shared_memory", &[("semops", 400), ("retries", 0)]),
    ("tcp_test", &[("messages", 89)]),
    ("udp_test", &[("messages", 99)]),
    ("stream_pipe", &[("messages", 99)]),
    ("dgram_pipe", &[("messages", 99)]),
    ("pipe_cpy", &[("messages", 99)]),
    ("ram_copy", &[("copies", 64), ("bytes", 25_020)]),
];

#[test]
fn the_per_job_table_covers_every_registered_test() {
    let mut table: Vec<&str> = PER_JOB.iter().map(|(t, _)| *t).collect();
    let mut registry: Vec<&str> = patchbench::aim7::jobs::JOBS
        .iter()
        .map(|j| j.name)
        .collect();
    table.sort_unstable();
    registry.sort_unstable();
    assert_eq!(table, registry);
    assert_eq!(registry.len(), 56);
}

/// Runs the tests named in PER_JOB[range] once each in every one of `tasks` tasks, from one
/// workfile with weight 1 each (so LOADNUM = the number of tests gives each a count of 1),
/// and checks each test's counters, that the byte counters moved, that AIM's log got one line
/// per job and per task, and that nothing is left in the --dir.
fn each_test_does_its_work(range: std::ops::Range<usize>, tasks: u64) {
    let tests = &PER_JOB[range];
    let blocks = 8 + 8 / tasks;
    let s = Scratch::new();
    let wf = s.dir.path().join("workfile");
    let mut text = String::from("# one job of each\nFILESIZE: 8K\nPOOLSIZE: 8K\n");
    for (t, _) in tests {
        text.push_str(&format!("1 {t}\n"));
    }
    std::fs::write(&wf, text).unwrap();
    let (load, jobs) = (tasks.to_string(), tests.len().to_string());
    let mut cmd = aim7(&["--load", &load, "--jobs", &jobs, "--workfile"]);
    cmd.arg(&wf);
    let (_, doc) = s.run(cmd);
    let point = &doc["aim7"]["points"][0];
    assert_eq!(point["jobs_per_task"], tests.len());
    assert_eq!(point["disk_blocks"], blocks);
    let run = first_run(&doc);
    let jobs = run["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), tests.len());
    for ((test, expected), got) in tests.iter().zip(jobs) {
        assert_eq!(got["test"], *test);
        assert_eq!(got["runs"], tasks, "{test} ran once per task");
        for (counter, per_job) in expected.iter() {
            assert_eq!(
                got["counters"][counter],
                per_job * tasks,
                "{test}: {counter}"
            );
        }
        if let Some(bytes) = got["counters"].get("bytes") {
            assert!(bytes.as_u64().unwrap() > 0, "{test} moved no bytes");
        }
    }
    assert_eq!(run["log_lines"], tasks * tests.len() as u64 + tasks);
    assert_eq!(run["leftover_files"], 0);
    assert!(entries(&s.work).is_empty(), "files left behind");
}

#[test]
fn each_arithmetic_test_does_its_work() {
    // One task: these are the slowest jobs in a debug build, and they make no system calls.
    each_test_does_its_work(0..15, 1);
}

#[test]
fn each_process_and_file_test_does_its_work() {
    each_test_does_its_work(15..33, 2);
}

#[test]
fn each_library_and_ipc_test_does_its_work() {
    each_test_does_its_work(33..PER_JOB.len(), 2);
}

#[test]
fn aims_fserver_mix_runs_every_test_with_aims_counts_and_rows() {
    let s = Scratch::new();
    // LOADNUM 1: every line's share is below 1, so every test runs once (AIM's rule).
    let mut cmd = aim7(&["--workfile", "fserver", "--jobs", "1", "--load", "1"]);
    cmd.args(["--filesize", "8", "--poolsize", "8"]);
    let (stdout, doc) = s.run(cmd);
    assert!(
        stdout.contains("fserver: 31 jobs per task (31 tests of AIM's workfile fserver)"),
        "{stdout}"
    );
    aim_row(&stdout, 1);
    assert_eq!(doc["config"]["workfile"].as_array().unwrap().len(), 31);
    let run = first_run(&doc);
    let jobs = run["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 31);
    assert!(jobs.iter().all(|j| j["runs"] == 1));
    assert_eq!(doc["metrics"][0]["params"]["test"], "fserver");
    assert!(entries(&s.work).is_empty());
}

#[test]
fn times_are_aims_clock_ticks_and_a_load_range_gives_one_point_each() {
    let s = Scratch::new();
    let (stdout, doc) = s.run(aim7(&["fork_test", "--load", "1-3:2", "--jobs", "1"]));
    assert_eq!(
        stdout.matches("Tasks    jobs/min").count(),
        1,
        "one header, AIM's way"
    );
    let points = doc["aim7"]["points"].as_array().unwrap();
    assert_eq!(
        points
            .iter()
            .map(|p| p["load"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [1, 3]
    );
    let tick = |v: &Value| {
        let x = v.as_f64().unwrap() * 100.0;
        assert!(
            (x - x.round()).abs() < 1e-6,
            "{v} is not a whole number of 10 ms ticks"
        );
    };
    for p in points {
        let run = &p["runs"][0];
        tick(&run["figures"]["real"]);
        assert!(run["figures"]["real"].as_f64().unwrap() >= 0.01);
        run["completion_seconds"]
            .as_array()
            .unwrap()
            .iter()
            .for_each(tick);
    }
    assert_eq!(doc["config"]["aim_start_delay_seconds"], 0);
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
        "at least 1",
    );
    fails_with(
        &["creat-clo", "--load", "5-2"],
        Some(dir.path()),
        "below its start",
    );
    fails_with(
        &["--workfile", "nope", "--load", "2"],
        Some(dir.path()),
        "no such file",
    );
    let wf = dir.path().join("bad-workfile");
    std::fs::write(&wf, "10 creat-clo\n5 no_such_test\n").unwrap();
    let mut c = aim7(&["--load", "2", "--workfile"]);
    c.arg(&wf).arg("--dir").arg(dir.path());
    let out = c.assert().code(2).get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("line 2") && stderr.contains("no_such_test"),
        "{stderr}"
    );
    fails_with(
        &["creat-clo", "--load", "2", "--jobs", "0"],
        Some(dir.path()),
        "at least 1 job",
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

/// Root may exceed RLIMIT_NPROC (the kernel lets it, so patchbench's check does too).
#[test]
fn root_is_not_refused_a_load_above_its_process_limit() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = bin();
    cmd.args([
        "aim7",
        "creat-clo",
        "--load",
        "300",
        "--jobs",
        "1",
        "--no-store",
        "--no-start-delay",
        "--dir",
    ])
    .arg(dir.path());
    common::with_process_limit(&mut cmd, 50);
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("ulimit -u"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("300"));
}

/// Run as an unprivileged user, whom the kernel holds to RLIMIT_NPROC.
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
    common::as_unprivileged(&mut cmd, common::unprivileged::AIM7, &[dir.path()]);
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
    let ro = Tmpfs::mount("ro,size=1m");
    fails_with(&["creat-clo", "--load", "2"], Some(&ro.path), "read-only");
    let full = Tmpfs::mount("size=1m,nr_inodes=2");
    // The root takes one inode; this file takes the last.
    std::fs::write(full.path.join("mine"), b"x").unwrap();
    fails_with(&["creat-clo", "--load", "2"], Some(&full.path), "full");
    assert_eq!(
        entries(&full.path),
        ["mine"],
        "a user's file is never touched"
    );
}

#[test]
fn running_out_of_space_mid_run_stops_every_task_and_cleans_up() {
    let fs = Tmpfs::mount("size=1m");
    std::fs::write(fs.path.join("keep-me"), b"user data").unwrap();
    // tmpa.common takes 600 KiB of the 1 MiB; the first task's 600 KiB file cannot fit.
    let out = aim7(&["disk_wrt", "--load", "20", "--jobs", "3"])
        .args(["--filesize", "600", "--poolsize", "0", "--dir"])
        .arg(&fs.path)
        .assert()
        .code(2)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("disk_wrt"), "{stderr}");
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
                "--no-start-delay",
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
    let out = common::patchbench()
        .args(["aim7", "--help"])
        .assert()
        .success()
        .get_output()
        .clone();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("modprobe brd"));
    assert!(help.contains("tmpfs"));
    assert!(help.contains("--no-start-delay"));
    assert!(help.contains("--workfile"));
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

/// With AIM's default start delay (and the old `--aim-start-delay`, still accepted), the 10 s
/// are inside `real` and every completion time.
#[test]
fn aims_start_delay_is_counted_inside_real_and_every_completion_time() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("o.json");
    common::patchbench()
        .args([
            "aim7",
            "--no-store",
            "creat-clo",
            "--load",
            "2",
            "--jobs",
            "1",
        ])
        .arg("--aim-start-delay")
        .arg("--dir")
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

/// A parked task runs patchbench-aim7-task and holds, besides 0, 1 and 2, only the start
/// gate, the report pipe and AIM's log (everything else of the driver was close-on-exec), and
/// the one it opened itself: its private directory's first component, which its files are
/// walked from (as many components as AIM walks).
fn assert_parked_task_is_the_small_program_with_three_descriptors(pid: i32) {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
    assert!(
        exe.ends_with("patchbench-aim7-task"),
        "task {pid} runs {}",
        exe.display()
    );
    let mut held: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<i32>().unwrap() > 2)
        .map(|e| std::fs::read_link(e.path()).unwrap().display().to_string())
        .collect();
    held.sort();
    let own: Vec<&String> = held
        .iter()
        .filter(|h| std::path::Path::new(h.as_str()).is_dir())
        .collect();
    assert_eq!(own.len(), 1, "task {pid} holds {held:?}");
    assert_eq!(
        own[0].matches('/').count(),
        1,
        "a first component: {held:?}"
    );
    held.retain(|h| !std::path::Path::new(h.as_str()).is_dir());
    assert_eq!(held.len(), 3, "task {pid} holds {held:?}");
    assert!(held[0].ends_with("/logfile.suite7"), "{held:?}");
    assert!(held[1..].iter().all(|h| h.starts_with("pipe:")), "{held:?}");
    assert_ne!(held[1], held[2], "the gate and the report pipe: {held:?}");
}

#[test]
fn a_missing_or_unrunnable_task_program_is_one_line_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let missing = dir.path().join("no-such-program");
    let out = aim7(&["creat-clo", "--load", "2", "--jobs", "1"])
        .env("PATCHBENCH_AIM7_TASK", &missing)
        .arg("--dir")
        .arg(&work)
        .assert()
        .code(2)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the AIM7 task program") && stderr.contains("is missing"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    // A file that is there but cannot be exec'd: every child says so, the run stops.
    let unrunnable = dir.path().join("not-executable");
    std::fs::write(&unrunnable, "not a program").unwrap();
    let out = aim7(&["creat-clo", "--load", "5", "--jobs", "1"])
        .env("PATCHBENCH_AIM7_TASK", &unrunnable)
        .arg("--dir")
        .arg(&work)
        .assert()
        .code(1)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot run the task program") && stderr.contains("ermission denied"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        members_of_group(group_from_stderr(&stderr)).is_empty(),
        "tasks left behind"
    );
    assert!(entries(&work).is_empty());
}

/// An interrupt in the delay stops the point with the gate shut: no "released".
#[test]
fn aims_start_delay_is_the_default_and_said_so_and_an_interrupt_in_it_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let json = dir.path().join("o.json");
    let mut child = bin()
        .args([
            "aim7",
            "creat-clo",
            "--no-store",
            "--load",
            "3",
            "--jobs",
            "1",
            "--dir",
        ])
        .arg(&work)
        .arg("--json")
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut seen = String::new();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.contains("tasks parked") {
            break;
        }
    }
    assert!(
        seen.contains("3 tasks parked") && seen.contains("AIM's 10 s start delay"),
        "{seen}"
    );
    let pgid = group_from_stderr(&seen);
    let tasks = members_of_group(pgid);
    assert_eq!(tasks.len(), 3);
    for &t in &tasks {
        assert_parked_task_is_the_small_program_with_three_descriptors(t);
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{rest:?}");
    assert!(
        !rest.iter().any(|l| l.contains("released")),
        "the tasks were released after the signal: {rest:?}"
    );
    assert!(members_of_group(pgid).is_empty(), "tasks left behind");
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    assert!(
        stdout.contains("AIM's 10 s start delay counted in real"),
        "the header says so: {stdout}"
    );
    let doc = read_json(&json);
    assert_eq!(doc["config"]["aim_start_delay_seconds"], 10);
    assert_eq!(doc["incomplete"], true);
    assert!(entries(&work).is_empty());
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
    cmd.args([
        "aim7",
        "creat-clo",
        "--load",
        "1,2,400",
        "--jobs",
        "10",
        "--no-start-delay",
    ])
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

/// The same with a workfile mix: SIGTERM in the third load point keeps the first two points,
/// each with its per-test counts, in the JSON file.
#[test]
fn sigterm_in_a_workfile_series_keeps_the_finished_points() {
    let s = Scratch::new();
    let wf = s.dir.path().join("workfile");
    std::fs::write(&wf, "1 creat-clo\n1 fork_test\n").unwrap();
    let mut cmd = bin();
    cmd.args(["aim7", "--no-store", "--no-start-delay", "--workfile"])
        .arg(&wf)
        .args(["--load", "1,2,300", "--jobs", "20", "--dir"])
        .arg(&s.work)
        .arg("--json")
        .arg(&s.json);
    let (status, rest) = common::interrupt_after(&mut cmd, "released", 3, libc::SIGTERM);
    assert_eq!(status.code(), Some(143), "{rest:?}");
    let doc = read_json(&s.json);
    assert_eq!(doc["incomplete"], true);
    let points = doc["aim7"]["points"].as_array().unwrap();
    let runs: Vec<usize> = points
        .iter()
        .map(|p| p["runs"].as_array().unwrap().len())
        .collect();
    assert_eq!(runs, [1, 1, 0]);
    for p in &points[..2] {
        assert_eq!(p["test"], "workfile");
        assert_eq!(p["runs"][0]["jobs"].as_array().unwrap().len(), 2);
    }
    assert!(entries(&s.work).is_empty());
}
