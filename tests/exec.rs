//! `patchbench exec` for real: stress-ng 0.15.06 (Debian's; `scripts/test.sh` installs it)
//! stored with its LKP-named metrics, a shell command read by a `--metric` pattern with the
//! `{dir}` placeholder, a failing command (one line with its last words, no value), a
//! missing tool (refused, exit 2, its Debian package named), Ctrl-C (no process or file left),
//! a local A/A campaign of a stress-ng stressor whose report flags nothing, and `perf bench
//! sched pipe` read by its labels, fio 3.33 run on `{dir}` (and refused without a directory),
//! `compare` refusing sides whose tool or arguments differ unless told to, sysbench's cpu
//! and mutex tests read by their labels and its fileio test prepared, read and cleaned up,
//! `perf bench futex wake|wake-parallel|requeue` read as times, `{cpus}`/`{ncpus}` under
//! taskset, fio job files checked job by job, and a vm campaign refusing a program its guest
//! would not find.
//! rt-tests' hackbench read as throughput and time. The readers themselves are tested on real
//! outputs (`tests/fixtures/exec/`) in `src/exec/`.

mod common;

use common::{patchbench_with_store, processes_in, read_json, wait_until, wait_with_timeout};
use std::path::Path;
use std::time::Duration;

/// `tool` (Debian's `package`) must be here: a test that cannot run must not pass.
fn installed(tool: &str, package: &str) {
    let found = std::process::Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "{tool} is not installed: apt-get install {package} (scripts/test.sh does)"
    );
}

/// `tool` (Debian's `package`) must be on PATH, for a tool with no `--version`.
fn installed_by_name(tool: &str, package: &str) {
    let found = std::process::Command::new("sh")
        .args(["-c", "command -v \"$0\"", tool])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "{tool} is not installed: apt-get install {package} (scripts/test.sh does)"
    );
}

fn stress_ng() {
    installed("stress-ng", "stress-ng");
}

/// `patchbench exec WORDS` with the store in `dir`; its output.
fn exec(dir: &Path, words: &[&str]) -> std::process::Output {
    patchbench_with_store(&dir.join("s.db"))
        .arg("exec")
        .args(words)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// `exec --runs RUNS --no-store --json DIR/r.json --dir DIR -- WORDS` in `dir`: its output
/// (the document, when it ran, is `read_json(DIR/r.json)`).
fn measured(dir: &Path, runs: &str, words: &[&str]) -> std::process::Output {
    let json = dir.join("r.json");
    let d = dir.to_str().unwrap();
    let mut all = vec!["--runs", runs, "--no-store", "--json"];
    all.extend([json.to_str().unwrap(), "--dir", d, "--"]);
    all.extend(words);
    exec(dir, &all)
}

/// [`measured`] with 2 runs, which must succeed; its document.
fn two_runs(dir: &Path, words: &[&str]) -> serde_json::Value {
    let out = measured(dir, "2", words);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    read_json(&dir.join("r.json"))
}

fn metric<'a>(doc: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    doc["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {:#}", doc["metrics"]))
}

#[test]
fn a_stress_ng_run_is_stored_with_lkps_metric_names() {
    stress_ng();
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("r.json");
    let out = exec(
        d.path(),
        &[
            "--runs",
            "2",
            "--json",
            json.to_str().unwrap(),
            "--dir",
            d.path().to_str().unwrap(),
            "--",
            "stress-ng",
            "--get",
            "1",
            "--timeout",
            "1",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{err}");
    assert!(text.contains("stress-ng.get.ops_per_sec"), "{text}");
    assert!(err.contains("saved as run 1"), "{err}");
    let doc = read_json(&json);
    assert_eq!(doc["kind"], "exec");
    let ops = metric(&doc, "stress-ng.get.ops_per_sec");
    assert_eq!(ops["direction"], "higher-is-better");
    assert_eq!(ops["samples"].as_array().unwrap().len(), 2);
    // getpid-like calls: thousands a second at least, on any machine.
    let v = ops["value"].as_f64().unwrap();
    assert!(v > 1000.0 && v < 1e9, "{v}");
    assert!(metric(&doc, "stress-ng.get.ops")["value"].as_f64().unwrap() > v * 0.5);
    let wall = metric(&doc, "exec.wall_time");
    assert_eq!(wall["direction"], "lower-is-better");
    for s in wall["samples"].as_array().unwrap() {
        let s = s.as_f64().unwrap();
        assert!((1.0..10.0).contains(&s), "stress-ng --timeout 1 took {s} s");
    }
    // The settings name the tool, its version (the number, not the kernel it printed) and
    // the argv as given.
    assert_eq!(doc["config"]["tool"], "stress-ng");
    let version = doc["config"]["version"].as_str().unwrap();
    assert!(
        version.starts_with(|c: char| c.is_ascii_digit()) && !version.contains(' '),
        "{version}"
    );
    assert_eq!(
        doc["config"]["argv"],
        serde_json::json!(["stress-ng", "--get", "1", "--timeout", "1"])
    );
    assert_eq!(doc["exec"]["invocations"].as_array().unwrap().len(), 2);
    // The monitors' rows are there, as for every workload.
    assert!(doc["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["name"] == "time.system_time"));
    // Nothing left in --dir but the store and the JSON (no private directory).
    let mut names = common::entries(d.path());
    names.sort();
    assert_eq!(names, ["r.json", "s.db"]);
    // And it is in the store.
    let s = common::open_store(d.path().join("s.db"));
    assert_eq!(s.list(None).unwrap().len(), 1);
}

#[test]
fn a_pattern_reads_a_metric_and_dir_names_the_working_directory() {
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("r.json");
    // The program checks that {dir} and PATCHBENCH_DIR are one writable directory.
    let script = r#"test "$1" = "$PATCHBENCH_DIR" && touch "$1/f" && echo "score: 42""#;
    let out = exec(
        d.path(),
        &[
            "--runs",
            "3",
            "--warmup",
            "1",
            "--metric",
            r"score:points=score: (\d+)",
            "--metric",
            r"lat:ms:lower=latency (\d+)",
            "--no-store",
            "--json",
            json.to_str().unwrap(),
            "--dir",
            d.path().to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &format!("{script}; echo latency 7 >&2"),
            "sh",
            "{dir}",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc = read_json(&json);
    let score = metric(&doc, "exec.score");
    assert_eq!(score["value"], 42.0);
    assert_eq!(score["unit"], "points");
    assert_eq!(score["samples"], serde_json::json!([42.0, 42.0, 42.0]));
    let lat = metric(&doc, "exec.lat");
    assert_eq!(lat["value"], 7.0);
    assert_eq!(lat["direction"], "lower-is-better");
    assert_eq!(
        metric(&doc, "exec.wall_time")["samples"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    // Four invocations, the first a warm-up; the private directory is gone.
    let invs = doc["exec"]["invocations"].as_array().unwrap();
    assert_eq!(invs.len(), 4);
    assert_eq!(invs[0]["warmup"], true);
    assert_eq!(common::entries(d.path()), ["r.json"]);
}

#[test]
fn a_failing_command_fails_the_run_in_one_line_and_keeps_no_value() {
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("r.json");
    let out = exec(
        d.path(),
        &[
            "--json",
            json.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "echo partial score 5; echo 'cannot open /dev/thing' >&2; exit 3",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(
        errors,
        ["patchbench: error: sh exited with status 3: cannot open /dev/thing"],
        "{err}"
    );
    let doc = read_json(&json);
    assert_eq!(doc["incomplete"], true);
    assert!(doc["metrics"].as_array().unwrap().is_empty(), "{doc:#}");
    assert!(!err.contains("saved as"), "{err}");

    // The second of three invocations fails: the first one's numbers go too.
    let flag = d.path().join("flag");
    let script = format!(
        "if [ -e {0} ]; then echo 'second time: no' >&2; exit 4; fi; touch {0}",
        flag.display()
    );
    let out = exec(
        d.path(),
        &[
            "--runs",
            "3",
            "--json",
            json.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("exited with status 4: second time: no"),
        "{err}"
    );
    let doc = read_json(&json);
    assert!(doc["metrics"].as_array().unwrap().is_empty(), "{doc:#}");
    let s = common::open_store(d.path().join("s.db"));
    for run in s.list(None).unwrap_or_default() {
        let r = s.get(run.id).unwrap().unwrap();
        assert!(
            r.metrics.is_empty() && r.incomplete,
            "run {} kept a value",
            run.id
        );
    }

    // A pattern that does not match fails the run too.
    let out = exec(
        d.path(),
        &[
            "--no-store",
            "--metric",
            r"s=score (\d+)",
            "--",
            "echo",
            "nothing",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not match --metric"), "{err}");

    // So does the timeout.
    let out = exec(
        d.path(),
        &["--no-store", "--timeout", "0.5", "--", "sleep", "30"],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did not end within --timeout 0.5 s"), "{err}");
}

#[test]
fn a_missing_tool_is_refused_before_anything_starts_naming_its_package() {
    let d = tempfile::tempdir().unwrap();
    for (tool, package) in [("stress-ng", "stress-ng"), ("hackbench", "rt-tests")] {
        let out = patchbench_with_store(&d.path().join("s.db"))
            .args(["exec", "--", tool, "-x"])
            .env("PATH", "/nonexistent")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("install Debian's package {package}")),
            "{err}"
        );
    }
    let out = exec(d.path(), &["--", "./no-such-bench"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not an executable file"), "{err}");
    let out = exec(d.path(), &["--bogus", "stress-ng"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!d.path().join("s.db").exists(), "nothing was stored");
}

#[test]
fn ctrl_c_leaves_no_process_and_no_file() {
    let d = tempfile::tempdir().unwrap();
    let work = d.path().join("w");
    std::fs::create_dir(&work).unwrap();
    let mut child = patchbench_with_store(&d.path().join("s.db"))
        .args(["exec", "--dir", work.to_str().unwrap(), "--"])
        .args(["sh", "-c", "sleep 30 & sleep 31"])
        .current_dir(d.path())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let here = d.path().to_str().unwrap().to_string();
    wait_until(Duration::from_secs(20), "the program's sleeps", || {
        processes_in(&here).len() >= 3
    });
    common::signal(&child, libc::SIGINT);
    let status = wait_with_timeout(&mut child, Duration::from_secs(20));
    assert_eq!(status.code(), Some(130));
    wait_until(Duration::from_secs(5), "no process left", || {
        processes_in(&here).is_empty()
    });
    assert!(
        common::entries(&work).is_empty(),
        "{:?}",
        common::entries(&work)
    );
}

#[test]
fn a_local_aa_campaign_of_a_stress_ng_stressor_flags_nothing() {
    stress_ng();
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    // Without the inner `--`: the campaign puts it before the program, so that the step's
    // own `--json FILE --no-store` are exec's and never stress-ng's.
    let out = patchbench_with_store(&store)
        .args([
            "campaign",
            "start",
            "aa",
            "--executor",
            "local",
            "--rounds",
            "3",
        ])
        .args(["--", "exec", "stress-ng", "--get", "1", "--timeout", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("campaign aa finished: 6 steps done, 0 failed"),
        "{err}"
    );
    let report = patchbench_with_store(&store)
        .args(["campaign", "report", "aa"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(report.status.success(), "{text}");
    assert!(
        text.contains("workload:  patchbench exec -- stress-ng --get 1 --timeout 1"),
        "{text}"
    );
    assert!(
        text.contains("stress-ng.get.ops_per_sec") && text.contains("3 pairs"),
        "{text}"
    );
    // One kernel on both sides: no row improved or regressed. (The table's false discovery
    // rate is 2.5 % and a row must also move beyond ±1 % to be flagged; with 3 pairs the
    // interval is wide, so a false flag here is far rarer than that.)
    assert!(text.contains("0 of 3 rows flagged"), "{text}");
    assert!(text.contains("What changed with it: 0 of"), "{text}");
}

#[test]
fn perf_bench_sched_pipe_is_read_by_its_labels() {
    // linux-perf is in scripts/test.sh's packages (the profiles' test needs it too).
    installed("perf", "linux-perf");
    let d = tempfile::tempdir().unwrap();
    let doc = two_runs(d.path(), &["perf", "bench", "sched", "pipe", "-l", "2000"]);
    assert_eq!(doc["config"]["reader"], "perf-bench");
    let ops = metric(&doc, "perf-bench.sched-pipe.ops_per_sec");
    assert!(ops["value"].as_f64().unwrap() > 100.0, "{ops}");
    assert_eq!(ops["samples"].as_array().unwrap().len(), 2);
    let usecs = metric(&doc, "perf-bench.sched-pipe.usecs_per_op");
    assert_eq!(usecs["direction"], "lower-is-better");
    // The version is perf's number.
    let version = doc["config"]["version"].as_str().unwrap();
    assert!(
        version.starts_with(|c: char| c.is_ascii_digit()),
        "{version}"
    );
}

#[test]
fn hackbench_is_read_as_throughput_and_time() {
    installed_by_name("hackbench", "rt-tests");
    let d = tempfile::tempdir().unwrap();
    let doc = two_runs(d.path(), &["hackbench", "-g", "2", "-l", "50"]);
    assert_eq!(doc["config"]["reader"], "hackbench");
    let time = metric(&doc, "hackbench.time");
    assert_eq!(time["direction"], "lower-is-better");
    assert_eq!(time["samples"].as_array().unwrap().len(), 2);
    // 2 groups x 20 senders x 20 receivers x 50 loops = 40,000 messages a run.
    let tput = metric(&doc, "hackbench.throughput");
    let expected = 40_000.0 / time["samples"][0].as_f64().unwrap();
    let first = tput["samples"][0].as_f64().unwrap();
    assert!((first / expected - 1.0).abs() < 1e-6, "{tput} {time}");
}

#[test]
fn fio_runs_on_dir_and_is_read_per_job_and_direction() {
    installed("fio", "fio");
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("r.json");
    let fio_args = [
        "fio",
        "--size=4M",
        "--bs=4k",
        "--runtime=1",
        "--time_based",
        "--ioengine=psync",
        "--directory={dir}",
        "--name=r",
        "--rw=randread",
        "--name=w",
        "--rw=randwrite",
    ];
    let mut words = vec![
        "--runs",
        "2",
        "--no-store",
        "--json",
        json.to_str().unwrap(),
        "--dir",
        d.path().to_str().unwrap(),
        "--",
    ];
    words.extend(fio_args);
    let out = exec(d.path(), &words);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc = read_json(&json);
    assert_eq!(doc["config"]["reader"], "fio");
    let version = doc["config"]["version"].as_str().unwrap();
    assert!(
        version.starts_with(|c: char| c.is_ascii_digit()),
        "{version}"
    );
    let job = |name: &str, job: &str| -> serde_json::Value {
        doc["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name && m["params"]["job"] == job)
            .unwrap_or_else(|| panic!("no {name} of job {job} in {:#}", doc["metrics"]))
            .clone()
    };
    let iops = job("fio.read_iops", "r");
    assert_eq!(iops["direction"], "higher-is-better");
    assert_eq!(iops["samples"].as_array().unwrap().len(), 2);
    assert!(iops["value"].as_f64().unwrap() > 10.0, "{iops}");
    let bw = job("fio.write_bw_MBps", "w");
    assert_eq!(bw["unit"], "MiB/s");
    assert!(bw["value"].as_f64().unwrap() > 0.0, "{bw}");
    assert_eq!(
        job("fio.write_clat_99%_ns", "w")["direction"],
        "lower-is-better"
    );
    assert!(job("fio.read_clat_mean_ns", "r")["value"].as_f64().unwrap() > 0.0);
    // Only the directions each job used.
    assert!(!doc["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["name"] == "fio.write_iops" && m["params"]["job"] == "r"));
    // The argv is as given ({dir} unexpanded); fio wrote only in the private directory, now
    // removed, and nothing in the current directory (the temp dir too).
    assert_eq!(doc["config"]["argv"], serde_json::json!(fio_args));
    assert_eq!(common::entries(d.path()), ["r.json"]);

    // Without --directory or --filename fio would write in the current directory: refused,
    // before anything starts.
    let out = exec(
        d.path(),
        &[
            "--no-store",
            "--",
            "fio",
            "--name=t",
            "--rw=read",
            "--size=1M",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("fio's job t (on its command line) would lay out its files")
            && err.contains("--directory={dir}"),
        "{err}"
    );
    assert_eq!(common::entries(d.path()), ["r.json"]);
}

#[test]
fn compare_refuses_sides_of_different_tools_or_arguments_unless_told_to() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    let bench = d.path().join("bench.sh");
    let write_bench = |score: u32| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(&bench, format!("#!/bin/sh\necho \"score: {score}$1\"\n")).unwrap();
        std::fs::set_permissions(&bench, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    let run = |label: &str, arg: &str| {
        let out = exec(
            d.path(),
            &[
                "--runs",
                "3",
                "--label",
                label,
                "--metric",
                r"score=score: (\d+)",
                "--",
                "./bench.sh",
                arg,
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let compare = |extra: &[&str], base: &str, patched: &str| {
        patchbench_with_store(&store)
            .args(["compare", base, patched])
            .args(extra)
            .current_dir(d.path())
            .output()
            .unwrap()
    };
    write_bench(1);
    run("a", "0");
    run("a2", "0");
    run("b", "1");
    // Same tool, version and arguments: judged.
    let out = compare(&[], "a", "a2");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Another argument: refused in one line that names what differs and the flag.
    let out = compare(&[], "a", "b");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(r#"config.argv differs: a ["./bench.sh","0"] vs b ["./bench.sh","1"]"#),
        "{err}"
    );
    assert!(err.contains("--allow-different-tools"), "{err}");
    assert!(out.stdout.is_empty());
    // Told to: judged, and still warned about.
    let out = compare(&["--allow-different-tools"], "a", "b");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("exec.score"), "{text}");
    assert!(
        text.contains("not comparable: config.argv differs"),
        "{text}"
    );
    // Another build of the program (its SHA-256 is its version): refused too.
    write_bench(2);
    run("c", "0");
    let out = compare(&[], "a", "c");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("config.version differs") && !err.contains("config.argv"),
        "{err}"
    );
}

#[test]
fn sysbench_cpu_and_mutex_are_read_by_their_labels() {
    installed("sysbench", "sysbench");
    let d = tempfile::tempdir().unwrap();
    let run = |words: &[&str]| two_runs(d.path(), words);
    let doc = run(&["sysbench", "cpu", "--time=1", "run"]);
    assert_eq!(doc["config"]["reader"], "sysbench");
    let eps = metric(&doc, "sysbench.cpu.events_per_sec");
    assert_eq!(eps["direction"], "higher-is-better");
    assert_eq!(eps["samples"].as_array().unwrap().len(), 2);
    assert!(eps["value"].as_f64().unwrap() > 1.0, "{eps}");
    let doc = run(&[
        "sysbench",
        "mutex",
        "--threads=2",
        "--mutex-loops=1000",
        "run",
    ]);
    for name in [
        "sysbench.mutex.total_time",
        "sysbench.mutex.latency_avg_ms",
        "sysbench.mutex.latency_95th_ms",
    ] {
        let m = metric(&doc, name);
        assert_eq!(m["direction"], "lower-is-better", "{m}");
        assert!(m["value"].as_f64().unwrap() >= 0.0, "{m}");
    }
    // A test this reader does not read, when asked for it: refused before anything starts.
    let out = exec(
        d.path(),
        &[
            "--no-store",
            "--reader",
            "sysbench",
            "--",
            "sysbench",
            "oltp_read_only",
            "run",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--reader generic"), "{err}");
}

/// iperf3's client as typed (`-c 127.0.0.1`): patchbench starts a one-off server on the
/// loopback for each invocation (on a free port it adds), reads the client's JSON under LKP's
/// names, and leaves no iperf3 behind; a server's command line is refused before anything
/// starts.
#[test]
fn iperf3_on_the_loopback_gets_its_server_and_is_read_under_lkps_names() {
    installed("iperf3", "iperf3");
    let d = tempfile::tempdir().unwrap();
    let doc = two_runs(d.path(), &["iperf3", "-c", "127.0.0.1", "-t", "1"]);
    assert_eq!(doc["config"]["reader"], "iperf3");
    for name in ["iperf.tcp.sender.bps", "iperf.tcp.receiver.bps"] {
        let m = metric(&doc, name);
        assert_eq!(m["direction"], "higher-is-better", "{m}");
        assert_eq!(m["samples"].as_array().unwrap().len(), 2, "{m}");
        assert!(m["value"].as_f64().unwrap() > 1e6, "{m}");
    }
    let leftover = std::process::Command::new("pgrep")
        .args(["-x", "iperf3"])
        .output()
        .unwrap();
    assert!(
        leftover.stdout.is_empty(),
        "iperf3 left running: {}",
        String::from_utf8_lossy(&leftover.stdout)
    );
    let out = exec(d.path(), &["--no-store", "--", "iperf3", "-s"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("client command line"), "{err}");
}

/// `{cpus}` and `{ncpus}` (and `PATCHBENCH_CPUS`, `PATCHBENCH_NCPUS`) are the CPUs patchbench
/// may run on, here one CPU given by taskset: the program sees them, stress-ng starts that
/// many stressors, and the record keeps the placeholders in its argv and the list in
/// `config.cpus`.
#[test]
fn cpus_and_ncpus_are_the_cpus_the_run_may_use() {
    stress_ng();
    installed("taskset", "util-linux");
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("r.json");
    let on_cpu_0 = |words: &[&str]| {
        let pb = patchbench_with_store(&d.path().join("s.db"));
        let mut c = std::process::Command::new("taskset");
        c.args(["-c", "0"])
            .arg(pb.get_program())
            .arg("exec")
            .args(["--no-store", "--json", json.to_str().unwrap()])
            .args(words)
            .current_dir(d.path());
        for (k, v) in pb.get_envs() {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        read_json(&json)
    };
    let script = r#"test "$1" = "$PATCHBENCH_CPUS" && echo "n=$2 env=$PATCHBENCH_NCPUS""#;
    let doc = on_cpu_0(&[
        "--metric",
        r"n=(?m)n=(\d+) env=1$",
        "--",
        "sh",
        "-c",
        script,
        "sh",
        "{cpus}",
        "{ncpus}",
    ]);
    assert_eq!(metric(&doc, "exec.n")["value"], 1.0);
    assert_eq!(doc["config"]["cpus"], "0");
    let doc = on_cpu_0(&[
        "--metric",
        r"hogs=dispatching hogs: (\d+) cpu",
        "--",
        "stress-ng",
        "--cpu",
        "{ncpus}",
        "--timeout",
        "1",
    ]);
    assert_eq!(metric(&doc, "exec.hogs")["value"], 1.0);
    assert!(
        metric(&doc, "stress-ng.cpu.ops_per_sec")["value"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert_eq!(
        doc["config"]["argv"],
        serde_json::json!(["stress-ng", "--cpu", "{ncpus}", "--timeout", "1"])
    );
}

/// sysbench's fileio test as typed: patchbench runs `prepare` with the same options in the
/// run's working directory before the measured invocations, runs them there, and `cleanup`
/// after, also after a failed invocation; the rows are named after LKP's fileio test. A failing
/// prepare is a failed run with sysbench's own words, and nothing is left in `--dir` or in the
/// current directory.
#[test]
fn sysbench_fileio_is_prepared_in_dir_read_and_cleaned_up() {
    installed("sysbench", "sysbench");
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("r.json");
    let run = |runs: &str, extra: &str| {
        let mut words = vec![
            "sysbench",
            "fileio",
            "--file-num=16",
            "--file-total-size=16M",
        ];
        words.push("--time=1");
        words.extend(extra.split_whitespace());
        words.push("run");
        measured(d.path(), runs, &words)
    };
    let out = run("2", "--file-test-mode=rndrw");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let (prepare, first, cleanup) = (
        err.find("sysbench fileio prepare: ").expect(&err),
        err.find("run 1/2").expect(&err),
        err.find("sysbench fileio cleanup: ").expect(&err),
    );
    assert!(prepare < first && first < cleanup, "{err}");
    let doc = read_json(&json);
    assert_eq!(doc["config"]["reader"], "sysbench");
    for name in [
        "sysbench.fileio.read_operations_per_sec",
        "sysbench.fileio.read_bytes_MiBps",
        "sysbench.fileio.write_operations_per_sec",
        "sysbench.fileio.write_bytes_MiBps",
        "sysbench.fileio.fsync_operations_per_sec",
    ] {
        let m = metric(&doc, name);
        assert_eq!(m["direction"], "higher-is-better", "{m}");
        assert_eq!(m["samples"].as_array().unwrap().len(), 2, "{m}");
        assert!(m["value"].as_f64().unwrap() > 0.0, "{m}");
    }
    let p95 = metric(&doc, "sysbench.fileio.latency_95th_ms");
    assert_eq!(p95["direction"], "lower-is-better");
    assert_eq!(common::entries(d.path()), ["r.json"]);

    // A prepare that fails is the run's failure, in sysbench's words; nothing is measured.
    let out = run("1", "--file-test-mode=rndrw --bogus");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "error: sysbench fileio prepare exited with status 1: invalid option: --bogus"
        ),
        "{err}"
    );
    assert!(!err.contains("run 1/1"), "{err}");
    // An invocation that fails (sysbench says FATAL on its standard output) after a good
    // prepare: the files are still cleaned up.
    let out = run("1", "--file-test-mode=bogus");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("error: sysbench exited with status 1: FATAL: Invalid IO operations mode"),
        "{err}"
    );
    assert!(err.contains("sysbench fileio cleanup: "), "{err}");
    assert_eq!(common::entries(d.path()), ["r.json"]);
}

/// `perf bench futex wake`, `wake-parallel` and `requeue` for real: each read from its
/// averaged line (a time in ms, lower is better), one sample per invocation.
#[test]
fn perf_bench_futex_wake_and_requeue_are_read_as_times() {
    installed("perf", "linux-perf");
    let d = tempfile::tempdir().unwrap();
    for (bench, name) in [
        ("wake", "perf-bench.futex-wake.time_ms"),
        ("wake-parallel", "perf-bench.futex-wake-parallel.latency_ms"),
        ("requeue", "perf-bench.futex-requeue.time_ms"),
    ] {
        let doc = two_runs(d.path(), &["perf", "bench", "futex", bench, "-t", "2"]);
        assert_eq!(doc["config"]["reader"], "perf-bench");
        let m = metric(&doc, name);
        assert_eq!(m["unit"], "ms", "{m}");
        assert_eq!(m["direction"], "lower-is-better", "{m}");
        assert_eq!(m["samples"].as_array().unwrap().len(), 2, "{m}");
        // Waking or requeuing 2 threads: more than nothing, less than a second.
        let v = m["value"].as_f64().unwrap();
        assert!(v > 0.0 && v < 1000.0, "{m}");
    }
}

/// fio given a job file, as fio users give one: accepted when every job is told where to
/// write (here its `[global]` section's `directory=${PATCHBENCH_DIR}`, the run's private
/// directory), run there and read per job; a job file with a job that would write in the
/// current directory is refused before anything starts, in one line naming the job.
#[test]
fn fio_job_files_are_checked_job_by_job_and_run() {
    installed("fio", "fio");
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("r.json");
    std::fs::write(
        d.path().join("job.fio"),
        "[global]\ndirectory=${PATCHBENCH_DIR}\nsize=4M\nbs=4k\nruntime=1\ntime_based\n\
         ioengine=psync\n\n[r]\nrw=randread\n\n[w]\nrw=randwrite\n",
    )
    .unwrap();
    let out = measured(d.path(), "1", &["fio", "job.fio"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc = read_json(&json);
    let job = |name: &str, job: &str| {
        doc["metrics"].as_array().unwrap().iter().any(|m| {
            m["name"] == name && m["params"]["job"] == job && m["value"].as_f64() > Some(0.0)
        })
    };
    assert!(
        job("fio.read_iops", "r") && job("fio.write_iops", "w"),
        "{doc:#}"
    );
    // fio wrote in the private directory, now removed, and not in the current one.
    let mut names = common::entries(d.path());
    names.sort();
    assert_eq!(names, ["job.fio", "r.json"]);

    std::fs::write(
        d.path().join("bad.fio"),
        "[global]\nsize=1M\nrw=read\nioengine=psync\n[placed]\ndirectory=${PATCHBENCH_DIR}\n\
         [stray]\n",
    )
    .unwrap();
    let out = exec(d.path(), &["--no-store", "--", "fio", "bad.fio"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("fio's job stray (in bad.fio) would lay out its files in the current"),
        "{err}"
    );
    let mut names = common::entries(d.path());
    names.sort();
    assert_eq!(names, ["bad.fio", "job.fio", "r.json"]);
}

/// A vm campaign's step runs in a guest on this host's root, but with its own PATH, in `/tmp`
/// and with an empty tmpfs over `/tmp`: a program the guest would not find is refused by
/// `campaign start` before any build or boot, in one line, and nothing is stored. (The base
/// kernel named does not exist: were the program let through, the start would fail on it,
/// still before a boot.)
#[test]
fn a_vm_campaign_refuses_a_program_its_guest_would_not_find() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
    let bin = d.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let bench = bin.join("mybench");
    std::fs::write(&bench, "#!/bin/sh\necho score: 1\n").unwrap();
    std::fs::set_permissions(&bench, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let bench = bench.to_str().unwrap();
    for (program, says) in [
        (
            bench,
            "is under /tmp, which a vm guest covers with an empty tmpfs",
        ),
        (
            "./bin/mybench",
            "is a relative path, and a vm guest's step runs in another",
        ),
        (
            "mybench",
            "is on this shell's PATH but not on the PATH a vm guest's step has",
        ),
    ] {
        let out = patchbench_with_store(&d.path().join("s.db"))
            .args(["campaign", "start", "t", "--executor", "vm"])
            .args([
                "--base",
                "/nonexistent/vmlinuz",
                "--",
                "exec",
                "--",
                program,
            ])
            .env("PATH", &path)
            .current_dir(d.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{program}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{program}: {err}");
    }
    assert!(!d.path().join("s.db").exists(), "nothing was stored");
}
