//! End-to-end tests of `patchbench run`: the full index at a short duration, the JSON result,
//! bad input, and real signals and crashes (no mocks: real workers are started and killed).

mod common;

use common::{patchbench as bin, processes_in, std_patchbench as std_bin, wait_with_timeout};
use patchbench::unixbench::catalog;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn full_index_prints_the_report_and_keeps_every_sample() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let out = bin()
        .args([
            "run",
            "--copies",
            "1",
            "--passes",
            "1",
            "--duration",
            "0.5",
            "--no-settle",
            "--no-store",
        ])
        .arg("--dir")
        .arg(dir.path())
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.starts_with("   BYTE UNIX Benchmarks (Version 6.0.0)\n"));
    assert!(stdout.contains("running 1 parallel copy of tests\n"));
    let result_line =
        regex::Regex::new(r"(?m)^(.*\S)\s+(\d+\.\d)\s+(\S+)\s+\((\d+\.\d) s, (\d+) samples\)$")
            .unwrap();
    let index = catalog::INDEX.len();
    assert_eq!(result_line.find_iter(&stdout).count(), index, "{stdout}");
    assert!(stdout.contains("System Benchmarks Index Values"));
    let score = regex::Regex::new(r"(?m)^System Benchmarks Index Score\s+(\d+\.\d)$").unwrap();
    let score: f64 = score.captures(&stdout).expect("index score line")[1]
        .parse()
        .unwrap();
    assert!(score > 0.0);

    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(record["schema"], "patchbench.run/2");
    let tests = record["tests"].as_array().unwrap();
    assert_eq!(tests.len(), index);
    for t in tests {
        let passes = t["passes"].as_array().unwrap();
        assert_eq!(passes.len(), 1);
        let copies = passes[0]["copies"].as_array().unwrap();
        assert_eq!(copies.len(), 1);
        assert!(
            copies[0]["count"].as_f64().unwrap() > 0.0,
            "{} counted nothing",
            t["test"]
        );
        assert!(copies[0]["wall_seconds"].as_f64().unwrap() > 0.0);
        assert!(t["score"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(record["indexes"][0]["full"], true);
    let metrics = record["metrics"].as_array().unwrap();
    let named = |n: &str| metrics.iter().filter(|m| m["name"] == n).count();
    assert_eq!(
        named("unixbench.score") + named("unixbench.index"),
        index + 1
    );
    // Every test's monitors, and its score per CPU-second where the count is a count.
    assert_eq!(named("time.user_time"), index);
    assert_eq!(record["monitors"].as_array().unwrap().len(), index);
    // Every test whose count is a count (not the file tests' and Whetstone's rates).
    let counted = record["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["timebase"].as_u64() != Some(0))
        .count();
    assert!(counted >= index - 4, "{counted}");
    assert_eq!(named("unixbench.score-per-cpu-s"), counted);
    assert!(record["system"]["kernel_release"]
        .as_str()
        .is_some_and(|s| !s.is_empty()));
    // The noise check taken as the run started travels in the fingerprint.
    common::assert_noise_check(&record, dir.path());
    // The private directory is gone, and nothing else was left in --dir.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("out.json")]);
}

#[test]
fn copies_are_summed() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    bin()
        .args([
            "run",
            "syscall",
            "--copies",
            "2",
            "--passes",
            "2",
            "--duration",
            "0.3",
            "--no-settle",
            "--no-store",
        ])
        .arg("--dir")
        .arg(dir.path())
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let t = &record["tests"][0];
    assert_eq!(t["copies"], 2);
    for p in t["passes"].as_array().unwrap() {
        let copies = p["copies"].as_array().unwrap();
        assert_eq!(copies.len(), 2);
        let sum: f64 = copies.iter().map(|c| c["count"].as_f64().unwrap()).sum();
        assert_eq!(p["count"].as_f64().unwrap(), sum);
        let mean = copies
            .iter()
            .map(|c| c["seconds"].as_f64().unwrap())
            .sum::<f64>()
            / 2.0;
        assert!((p["time"].as_f64().unwrap() - mean).abs() < 1e-9);
    }
}

/// Issue #20: at 256 copies on 2 CPUs the copies' windows overlap 0 %, and the summed rate
/// printed beside the warning was no throughput. Now every copy's count is read at one common
/// stop, and the throughput over the window in which all copies ran is in the JSON and the
/// warning: never more than the copies counted in the end, read before any window ended.
#[test]
fn oversubscribed_copies_get_the_throughput_of_their_shared_window() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let copies = (16 * patchbench::sysinfo::online_cpus()).max(32);
    // A reading is dropped when the runner woke after a copy's window had ended (a machine
    // loaded by others can delay it): a few tries.
    let run = || {
        let out = bin()
            .args(["run", "pipe", "--passes", "1", "--duration", "1"])
            .args(["--no-settle", "--no-store", "--copies", &copies.to_string()])
            .arg("--dir")
            .arg(dir.path())
            .arg("--json")
            .arg(&json)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let text = std::fs::read_to_string(&json).unwrap();
        (
            out,
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
        )
    };
    let (out, record) = (0..3)
        .map(|_| run())
        .find(|(_, r)| r["tests"][0]["passes"][0].get("shared_window").is_some())
        .expect("no try read the counters before a copy's window ended");
    let t = &record["tests"][0];
    let pass = &t["passes"][0];
    let shared = &pass["shared_window"];
    let (secs, count, rate) = (
        shared["seconds"].as_f64().expect("shared_window.seconds"),
        shared["count"].as_f64().unwrap(),
        shared["rate"].as_f64().unwrap(),
    );
    // Read at half the duration or 100 ms before the earliest end of any window (release +
    // 1 s), and not after it.
    assert!((0.5..=1.0).contains(&secs), "{secs}");
    let earliest_end = pass["copies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["window"][1].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert!(secs <= earliest_end + 1e-6, "{secs} after {earliest_end}");
    assert!(count > 0.0 && count <= pass["count"].as_f64().unwrap());
    assert!((rate - count / secs).abs() <= 1e-6 * rate);
    // One pass: the geometric mean is its rate.
    let shared_rate = t["shared_rate"].as_f64().unwrap();
    assert!(
        (shared_rate - rate).abs() <= 1e-9 * rate,
        "{shared_rate} {rate}"
    );
    // With this many copies per CPU the windows drift apart; the warning gives both figures.
    if t["overlap"]["overlap"].as_f64().unwrap() < 0.95 {
        let warning = t["warnings"][0].as_str().unwrap();
        assert!(
            warning.contains("counted until one common stop") && warning.contains("shared_rate"),
            "{warning}"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("counted until one common stop"), "{stderr}");
    }
    // One copy has no shared window; nor has a test whose loop keeps no live count.
    let one = dir.path().join("one.json");
    bin()
        .args([
            "run",
            "pipe,dhry2reg",
            "--passes",
            "1",
            "--duration",
            "0.3",
            "--no-settle",
        ])
        .args(["--no-store", "--copies", "1,2"])
        .arg("--dir")
        .arg(dir.path())
        .arg("--json")
        .arg(&one)
        .assert()
        .success();
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&one).unwrap()).unwrap();
    for t in record["tests"].as_array().unwrap() {
        let has = t["passes"][0].get("shared_window").is_some();
        let expected = t["test"] == "pipe" && t["copies"] == 2;
        assert_eq!(has, expected, "{} x{}", t["test"], t["copies"]);
    }
}

fn assert_usage_error(args: &[&str], needle: &str) {
    let out = bin().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(needle), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "nothing may start: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn bad_input_is_one_clear_line_and_exit_2() {
    assert_usage_error(&["run", "nosuchtest"], "unknown test \"nosuchtest\"");
    assert_usage_error(&["run", "--copies", "0"], "0 is not in 1..");
    assert_usage_error(&["run", "--copies", "x"], "invalid value 'x' for '--copies");
    assert_usage_error(&["run", "--duration", "soon"], "not a number of seconds");
    assert_usage_error(&["run", "--duration", "-1"], "");
    assert_usage_error(
        &["run", "pipe", "--dir", "/nonexistent/patchbench"],
        "no such directory",
    );
    assert_usage_error(
        &["run", "pipe", "--json", "/nonexistent/dir/out.json"],
        "does not exist",
    );
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(dir.path(), &link).unwrap();
    assert_usage_error(
        &["run", "pipe", "--dir", link.to_str().unwrap()],
        "symbolic link",
    );
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    assert_usage_error(
        &["run", "pipe", "--dir", file.to_str().unwrap()],
        "not a directory",
    );
}

#[test]
fn a_directory_that_refuses_files_is_an_error_not_a_panic() {
    // /proc refuses new directories even for root.
    let out = bin()
        .args(["run", "pipe", "--dir", "/proc", "--no-store"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("/proc"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// Starts `patchbench run ARGS --no-settle --no-store --dir DIR`, waits until `workers` of
/// its workers are running, and returns it (stdout and stderr piped).
fn start_run(dir: &Path, args: &[&str], workers: usize) -> std::process::Child {
    let child = std_bin()
        .arg("run")
        .args(args)
        .args(["--no-settle", "--no-store", "--dir"])
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let needle = dir.to_string_lossy().into_owned();
    while processes_in(&needle).len() < workers {
        assert!(Instant::now() < deadline, "workers never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// Starts a long run in `dir`, waits until its workers are running, and returns it.
fn start_long_run(dir: &Path, tests: &str) -> std::process::Child {
    let args = [tests, "--copies", "2", "--passes", "3", "--duration", "30"];
    start_run(dir, &args, 2)
}

fn signal_run(signal: i32, expected: i32) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = start_long_run(dir.path(), "spawn,context1");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let status = wait_with_timeout(&mut child, Duration::from_secs(10));
    assert_eq!(status.code(), Some(expected));
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains("interrupted"), "{stderr}");
    // Every worker and grandchild is gone, and so is the private directory.
    let needle = dir.path().to_string_lossy().into_owned();
    let deadline = Instant::now() + Duration::from_secs(1);
    while !processes_in(&needle).is_empty() {
        assert!(
            Instant::now() < deadline,
            "processes left behind: {:?}",
            processes_in(&needle)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "files left behind"
    );
}

#[test]
fn sigint_kills_every_worker_and_removes_the_private_directory() {
    signal_run(libc::SIGINT, 130);
}

#[test]
fn sigterm_exits_143_and_leaves_nothing() {
    signal_run(libc::SIGTERM, 143);
}

#[test]
fn a_crashing_worker_is_named_with_its_signal_and_the_run_does_not_hang() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = start_long_run(dir.path(), "pipe");
    let needle = dir.path().to_string_lossy().into_owned();
    let victim = processes_in(&needle)[0];
    // SAFETY: killing a worker of our own child. (Not SIGSEGV: Rust's runtime catches a
    // sent SIGSEGV once, for its stack-overflow check, and the process goes on.)
    unsafe { libc::kill(victim as i32, libc::SIGKILL) };
    let status = wait_with_timeout(&mut child, Duration::from_secs(10));
    assert_eq!(status.code(), Some(1));
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(
        stderr.contains("pipe") && stderr.contains("SIGKILL"),
        "{stderr}"
    );
    assert!(processes_in(&needle).is_empty());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn list_shows_every_test_with_unit_and_baseline() {
    let out = bin().arg("list").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("Pipe-based Context Switching"));
    assert!(text.contains("12440.0"));
    assert!(text.contains("index"));
    // Every test says which clock divides its count.
    assert!(text.contains("DIVISOR"));
    let row = |id: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("no row for {id}"))
            .to_string()
    };
    assert!(row("fstime").contains(" own time "), "{}", row("fstime"));
    assert!(row("whetstone-double").contains(" own time "));
    assert!(row("pipe").contains(" wall "), "{}", row("pipe"));
    assert!(row("shell8").contains(" wall "));
}

#[test]
fn a_process_limit_below_the_copies_is_refused_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = std_bin();
    cmd.args(["run", "shell8", "--copies", "4", "--no-store", "--dir"])
        .arg(dir.path());
    common::with_process_limit(&mut cmd, 50);
    // As an unprivileged user: root is not held to the limit.
    common::as_unprivileged(&mut cmd, common::unprivileged::RUN, &[dir.path()]);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--copies 4") && stderr.contains("ulimit -u"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(out.stdout.is_empty());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing may start"
    );
}

/// Whether a process working in `dir` runs the worker of `test` (or, for `spawn`, the
/// `patchbench-spawn` program the worker hands over to).
fn worker_running(dir: &Path, test: &str) -> bool {
    let companion = format!("patchbench-{test}");
    processes_in(&dir.to_string_lossy()).into_iter().any(|pid| {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|c| {
                let c = String::from_utf8_lossy(&c).into_owned();
                let mut args = c.split('\0');
                let program = args.next().unwrap_or("");
                args.next() == Some(test) || program.ends_with(&companion)
            })
            .unwrap_or(false)
    })
}

#[test]
fn an_interrupted_run_keeps_the_tests_that_finished_in_json_and_store() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("partial.json");
    let store = dir.path().join("results.db");
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let mut child = std_bin()
        .args([
            "run",
            "pipe,spawn",
            "--copies",
            "1",
            "--passes",
            "1",
            "--duration",
            "5",
            "--no-settle",
        ])
        .args(["--label", "partial", "--dir"])
        .arg(&work)
        .arg("--json")
        .arg(&json)
        .arg("--store")
        .arg(&store)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until pipe is done and spawn is running, then interrupt.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !worker_running(&work, "spawn") {
        assert!(Instant::now() < deadline, "spawn never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = wait_with_timeout(&mut child, Duration::from_secs(10));
    assert_eq!(status.code(), Some(130));
    let mut stdout = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    assert!(
        stdout.contains("Pipe Throughput"),
        "the finished test is reported: {stdout}"
    );
    assert!(stdout.contains("INCOMPLETE"), "{stdout}");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(record["incomplete"], true);
    let tests = record["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 1);
    assert_eq!(tests[0]["test"], "pipe");
    // The store has the run with its finished test.
    let out = bin()
        .args(["show", "1", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("pipe") && shown.contains("partial"),
        "{shown}"
    );
    assert_eq!(
        std::fs::read_dir(&work).unwrap().count(),
        0,
        "private directory removed"
    );
}

/// The perf_event descriptors a `run syscall` holds one second into its timed pass, with the
/// extra arguments `extra`.
fn perf_events_held_while_measuring(extra: &[&str]) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "syscall",
        "--copies",
        "1",
        "--passes",
        "1",
        "--duration",
        "3",
    ];
    let mut child = start_run(dir.path(), &[&args[..], extra].concat(), 1);
    std::thread::sleep(Duration::from_millis(1000));
    let held = std::fs::read_dir(format!("/proc/{}/fd", child.id()))
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|target| target.to_string_lossy() == "anon_inode:[perf_event]")
        .count();
    let status = wait_with_timeout(&mut child, Duration::from_secs(60));
    assert!(status.success(), "{status:?}");
    held
}

#[test]
fn nothing_of_ours_counts_inside_the_timed_window_unless_asked() {
    // The default monitors are read around the window: no perf counter is open while the
    // workload is timed (an inherited one costs context1 and spawn 12-18 %).
    assert_eq!(perf_events_held_while_measuring(&[]), 0);
    // --perf-stat opens the workload's inherited counters: at least the four software events.
    assert!(perf_events_held_while_measuring(&["--perf-stat"]) >= 4);
}

/// A `run syscall` of one short pass writing `json`, with `lock` as its measurement lock;
/// stderr piped.
fn locked_run(lock: &Path, json: &Path, extra: &[&str]) -> std::process::Child {
    let dir = json.parent().unwrap();
    std_bin()
        .env(patchbench::proc::measure_lock::LOCK_ENV, lock)
        .args(["run", "syscall", "--copies", "1", "--passes", "1"])
        .args(["--duration", "0.5", "--no-settle", "--no-store", "--dir"])
        .arg(dir)
        .arg("--json")
        .arg(json)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Reads `child`'s stderr on a thread, line by line, into the returned list.
fn stderr_lines(child: &mut std::process::Child) -> std::sync::Arc<std::sync::Mutex<Vec<String>>> {
    use std::io::BufRead;
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let out = std::sync::Arc::clone(&lines);
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            out.lock().unwrap().push(l);
        }
    });
    lines
}

#[test]
fn one_measurement_at_a_time_the_waiter_names_the_holder_and_overlap_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("measure.lock");
    // This test process holds the machine's measurement lock, as another measurement would.
    let held = std::fs::File::create(&lock).unwrap();
    // SAFETY: flock on a valid descriptor.
    assert_eq!(
        unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&held), libc::LOCK_EX) },
        0
    );
    let me = std::process::id();

    // A run waits, naming the holder, and measures nothing meanwhile.
    let a_json = dir.path().join("a").join("a.json");
    std::fs::create_dir_all(a_json.parent().unwrap()).unwrap();
    let mut a = locked_run(&lock, &a_json, &[]);
    let a_err = stderr_lines(&mut a);
    let waiting = format!("waiting for pid {me} (");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !a_err.lock().unwrap().iter().any(|l| l.contains(&waiting)) {
        assert!(Instant::now() < deadline, "{:?}", a_err.lock().unwrap());
        std::thread::sleep(Duration::from_millis(20));
    }
    let line = a_err.lock().unwrap().join("\n");
    assert!(line.contains("--allow-overlap"), "{line}");

    // With --allow-overlap a run measures beside the holder, and its record says whom.
    let b_json = dir.path().join("b").join("b.json");
    std::fs::create_dir_all(b_json.parent().unwrap()).unwrap();
    let b = locked_run(&lock, &b_json, &["--allow-overlap"]);
    let b_out = b.wait_with_output().unwrap();
    assert!(
        b_out.status.success(),
        "{}",
        String::from_utf8_lossy(&b_out.stderr)
    );
    let b_doc = common::read_json(&b_json);
    let beside = b_doc["system"]["extra"]["measured_beside"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(beside.starts_with(&format!("pid {me} (")), "{b_doc}");
    assert!(
        a.try_wait().unwrap().is_none(),
        "the waiting run is still waiting"
    );

    // Released, the waiting run measures, after the release.
    let released = patchbench::clock::now_rfc3339();
    drop(held);
    let status = wait_with_timeout(&mut a, Duration::from_secs(60));
    assert!(status.success(), "{:?}", a_err.lock().unwrap());
    let a_doc = common::read_json(&a_json);
    let started = a_doc["started_at"].as_str().unwrap();
    assert!(
        patchbench::clock::secs_between(&released, started).unwrap() >= 0.0,
        "measured from {started}, released at {released}"
    );
    assert!(a_doc["system"]["extra"].get("measured_beside").is_none());

    // Two runs started together on one lock: their measurements never overlap.
    let (c_json, d_json) = (dir.path().join("c/c.json"), dir.path().join("d/d.json"));
    for j in [&c_json, &d_json] {
        std::fs::create_dir_all(j.parent().unwrap()).unwrap();
    }
    let c = locked_run(&lock, &c_json, &[]);
    let d = locked_run(&lock, &d_json, &[]);
    for p in [c, d] {
        let out = p.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let span = |j: &Path| {
        let doc = common::read_json(j);
        (
            doc["started_at"].as_str().unwrap().to_string(),
            doc["finished_at"].as_str().unwrap().to_string(),
        )
    };
    let (c_span, d_span) = (span(&c_json), span(&d_json));
    let (first, second) = if c_span.0 <= d_span.0 {
        (c_span, d_span)
    } else {
        (d_span, c_span)
    };
    assert!(
        patchbench::clock::secs_between(&first.1, &second.0).unwrap() >= 0.0,
        "{first:?} overlaps {second:?}"
    );
}
