//! Integration tests of `patchbench scale`: every testcase runs briefly in both modes and its
//! counter moves; CSV, SVG and JSON are written; bad input is refused with one line and exit
//! status 2 before anything starts; SIGINT and SIGTERM leave no task and no file behind.
//! Nothing here depends on how fast the machine is: only counts > 0, files and exit statuses.

mod common;

use common::{entries, patchbench, processes_mentioning, read_json, walk, SHORT};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Sampling for the counter walk: `secs` measured in 0.1 s samples, no warm-up.
const fn sampling(secs: &str) -> [&str; 6] {
    [
        "--duration",
        secs,
        "--warmup",
        "0",
        "--sample-interval",
        "0.1",
    ]
}

/// The testcases `scale --list` names, in its order.
fn registry() -> Vec<String> {
    let out = patchbench().args(["scale", "--list"]).assert().success();
    String::from_utf8(out.get_output().stdout.clone())
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

/// Testcases that need something of the machine beyond a writable temp directory: O_DIRECT on
/// `--dir` (read3, read4) and a tmpfs in /dev/shm (fallocate1). The walk runs them on their own,
/// under target/, and accepts their documented refusal.
const NEEDS_MORE: [&str; 3] = ["fallocate1", "read3", "read4"];

/// Runs `tests` in one invocation, both modes, one task, with the private directory made in
/// `parent` (a fresh temporary directory when None); returns the testcases of which some
/// point counted nothing, and checks that nothing is left behind.
fn idle_testcases(tests: &[String], parent: Option<&Path>, secs: &str) -> Vec<String> {
    let tmp = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir_in(parent.unwrap_or(tmp.path())).unwrap();
    let json = tmp.path().join("r.json");
    patchbench()
        .args(["scale", &tests.join(",")])
        .args(["--tasks", "1", "--mode", "both", "--no-store"])
        // Unpinned, so the two halves that run side by side use both cores (pinned, each
        // would put its one task on the first core).
        .arg("--no-pin")
        .args(sampling(secs))
        .arg("--dir")
        .arg(work.path())
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let r = read_json(&json);
    let points = r["will_it_scale"]["points"].as_array().unwrap();
    assert_eq!(
        points.len(),
        2 * tests.len(),
        "one point per testcase and mode"
    );
    // Every point says what else used the CPUs while it ran (#11's per-point monitor).
    for p in points {
        let noise = &p["noise"];
        assert!(
            noise["window_secs"].as_f64().unwrap() > 0.0
                && noise["total_ticks"].as_u64().unwrap() > 0
                && noise["steal_pct"].as_f64().is_some(),
            "{}: noise {noise}",
            p["test"]
        );
    }
    assert!(
        entries(work.path()).is_empty(),
        "left {:?}",
        walk(work.path())
    );
    let counted = |test: &str, mode: &str| -> u64 {
        let p = points
            .iter()
            .find(|p| p["test"] == test && p["mode"] == mode)
            .unwrap_or_else(|| panic!("{test} {mode}: no point"));
        p["per_task_ops"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .sum()
    };
    tests
        .iter()
        .filter(|t| counted(t, "processes") == 0 || counted(t, "threads") == 0)
        .cloned()
        .collect()
}

/// Checks that every testcase's counter moves in both modes: 0.3 s each, and for any that
/// counted nothing in that time (its set-up, such as poll2's 128 file creations, can take
/// longer on a machine with a busy disk), once more for 3 s.
fn counters_move(tests: &[String], parent: Option<&Path>) {
    let slow = idle_testcases(tests, parent, "0.3");
    if !slow.is_empty() {
        eprintln!("counted nothing in 0.3 s, running again for 3 s: {slow:?}");
        let still = idle_testcases(&slow, parent, "3");
        assert!(still.is_empty(), "counters did not move: {still:?}");
    }
}

/// Whether files in `dir` can be opened with O_DIRECT (the kernel refuses with EINVAL where the
/// file system cannot).
fn o_direct_works(dir: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let probe = tempfile::NamedTempFile::new_in(dir).unwrap();
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(probe.path())
        .is_ok()
}

/// Whether /dev/shm is a tmpfs.
fn shm_is_tmpfs() -> bool {
    nix::sys::statfs::statfs("/dev/shm")
        .is_ok_and(|s| s.filesystem_type() == nix::sys::statfs::TMPFS_MAGIC)
}

/// read3 and read4 (O_DIRECT, under target/, which is rarely tmpfs) and fallocate1 (/dev/shm)
/// count; one that this machine cannot run is refused with its one line instead, and the test
/// checks for itself that the machine really cannot (the file system refuses O_DIRECT, or
/// /dev/shm is no tmpfs), so a wrong refusal fails.
fn needing_o_direct_or_tmpfs_count_or_are_refused(names: &[String]) {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let mut runnable = Vec::new();
    for name in names {
        let probe = patchbench()
            .args(["scale", name, "--tasks", "1", "--no-store"])
            .args(["--duration", "0.1", "--warmup", "0", "--mode", "process"])
            .arg("--dir")
            .arg(target)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&probe.stderr);
        if probe.status.code() == Some(2) && err.contains("O_DIRECT") {
            assert!(
                !o_direct_works(target),
                "{name} was refused, but {} takes O_DIRECT: {err}",
                target.display()
            );
            eprintln!("{name} is refused here, rightly (no O_DIRECT): {err}");
        } else if probe.status.code() == Some(2) && err.contains("/dev/shm") {
            assert!(
                !shm_is_tmpfs(),
                "{name} was refused, but /dev/shm is a tmpfs: {err}"
            );
            eprintln!("{name} is refused here, rightly (/dev/shm is no tmpfs): {err}");
        } else {
            assert!(probe.status.success(), "{name}: {err}");
            runnable.push(name.clone());
        }
    }
    counters_move(&runnable, Some(target));
}

/// The walk: every registered testcase counts in both modes. The testcases run many to one
/// invocation (one process start and noise check each, not one per testcase), in two halves
/// side by side for the two cores, then NEEDS_MORE on its own.
#[test]
fn every_registered_testcase_counts_in_both_modes() {
    let names: Vec<String> = patchbench::will_it_scale::testcases::ALL
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    let (special, rest): (Vec<String>, Vec<String>) = names
        .into_iter()
        .partition(|t| NEEDS_MORE.contains(&t.as_str()));
    assert_eq!(special.len(), NEEDS_MORE.len(), "NEEDS_MORE are registered");
    let half = |k: usize| -> Vec<String> {
        rest.iter()
            .enumerate()
            .filter(|(i, _)| i % 2 == k)
            .map(|(_, t)| t.clone())
            .collect()
    };
    let halves = [half(0), half(1)];
    std::thread::scope(|s| {
        for h in &halves {
            s.spawn(|| counters_move(h, None));
        }
    });
    needing_o_direct_or_tmpfs_count_or_are_refused(&special);
}

/// Runs `script` as root in a private mount namespace, so that what it mounts vanishes with
/// it. Where the system does not allow that (no unshare, no privilege to unshare or to mount,
/// which the script reports with status 99) the test fails, saying what it needs.
fn in_mount_namespace(script: &str) -> std::process::Output {
    let unshare = |script: &str| {
        std::process::Command::new("unshare")
            .args(["-m", "sh", "-c", script])
            .output()
            .unwrap_or_else(|e| panic!("this test needs `unshare` ({e}): install util-linux"))
    };
    let probe = unshare("exit 0");
    assert!(
        probe.status.success(),
        "this test needs a private mount namespace (unshare -m), which failed: {}; run the \
         tests as root (it needs CAP_SYS_ADMIN)",
        String::from_utf8_lossy(&probe.stderr).trim()
    );
    let out = unshare(script);
    assert_ne!(
        out.status.code(),
        Some(99),
        "this test mounts a ramfs in a private mount namespace, which failed: {}; run the \
         tests as root (mount needs CAP_SYS_ADMIN)",
        String::from_utf8_lossy(&out.stderr).trim()
    );
    out
}

/// A filesystem without O_DIRECT (ramfs) is refused for read3 with one line naming it, exit
/// status 2, before the testcase named first has run; a /dev/shm that is not tmpfs is refused
/// for fallocate1 the same way.
#[test]
fn o_direct_and_tmpfs_refusals_name_the_testcase_and_filesystem() {
    let bin = assert_cmd::cargo::cargo_bin("patchbench");
    let dir = tempfile::tempdir().unwrap();
    let (d, bin) = (dir.path().display(), bin.display());
    let read3 = format!(
        "mount -t ramfs none {d} || exit 99; exec {bin} scale getppid1,read3 --tasks 1 \
         --no-store --dir {d}"
    );
    let out = in_mount_namespace(&read3);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "stderr: {err}");
    assert!(
        err.contains("read3 reads with O_DIRECT, which ramfs"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing was measured");
    let fallocate1 = format!(
        "mount -t ramfs none /dev/shm || exit 99; exec {bin} scale fallocate1 --tasks 1 \
         --no-store --dir {d}"
    );
    let out = in_mount_namespace(&fallocate1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(
        err.contains("fallocate1 runs against tmpfs in /dev/shm"),
        "{err}"
    );
    assert!(entries(dir.path()).is_empty());
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
        .args(sampling(secs))
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
            read_json(&json)["will_it_scale"]["points"][0]["per_task_ops"]
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
    assert_eq!(names.len(), 60, "will-it-scale has 60 testcases");
    assert_eq!(names, registry());
    assert_eq!(names.len(), patchbench::will_it_scale::testcases::ALL.len());
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted, names, "names are unique and in alphabetical order");
    assert!(text.contains("open1") && text.contains("Separate file open/close"));
    assert!(text.contains("writeseek2") && text.contains("Same file seek+read"));
}

/// Runs `python3 tests/wis_csv_check.py folder` (will-it-scale's way of reading the files);
/// where there is no python3 the test fails, saying so.
fn postprocess_check(folder: &Path) -> std::process::Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/wis_csv_check.py");
    std::process::Command::new("python3")
        .arg(script)
        .arg(folder)
        .output()
        .unwrap_or_else(|e| {
            panic!("this test reads the files with python3, which cannot be run ({e}): install python3")
        })
}

/// One CSV row as integers the way runtest.py writes them (`%d,%d,%0.2f,%d,%0.2f,%d`); the
/// idle columns as hundredths.
fn csv_row(line: &str) -> [u64; 6] {
    let f: Vec<&str> = line.split(',').collect();
    assert_eq!(f.len(), 6, "{line}");
    let int = |s: &str| -> u64 {
        assert!(s == "0" || !s.starts_with('0'), "{s} in {line}");
        s.parse()
            .unwrap_or_else(|_| panic!("{s} is not an integer in {line}"))
    };
    let idle = |s: &str| -> u64 {
        let (a, b) = s.split_once('.').unwrap_or_else(|| panic!("{s} in {line}"));
        assert_eq!(b.len(), 2, "{s} has two decimals in {line}");
        int(a) * 100 + b.parse::<u64>().unwrap()
    };
    [
        int(f[0]),
        int(f[1]),
        idle(f[2]),
        int(f[3]),
        idle(f[4]),
        int(f[5]),
    ]
}

/// One run, three outputs: will-it-scale's files in a directory, read unchanged by its tools
/// (and by patchbench's importer), the SVG, and the JSON with LKP's metric names.
#[test]
fn csv_dir_svg_and_json_are_what_will_it_scale_and_lkp_read() {
    let dir = tempfile::tempdir().unwrap();
    let (wis, svg, json) = (
        dir.path().join("wis"),
        dir.path().join("s.svg"),
        dir.path().join("s.json"),
    );
    std::fs::create_dir(&wis).unwrap();
    patchbench()
        .args([
            "scale", "getppid1", "open1", "--tasks", "1,2", "--mode", "both",
        ])
        .arg("--no-store")
        .args(SHORT)
        .arg("--csv")
        .arg(&wis)
        .arg("--svg")
        .arg(&svg)
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let mut files = entries(&wis);
    files.sort();
    assert_eq!(
        files,
        ["getppid1.csv", "getppid1.title", "open1.csv", "open1.title"]
    );
    assert_eq!(
        std::fs::read_to_string(wis.join("open1.title")).unwrap(),
        "Separate file open/close\n"
    );
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
    let points = r["will_it_scale"]["points"].as_array().unwrap();
    let ops = |test: &str, tasks: u64, mode: &str| -> u64 {
        let p = points
            .iter()
            .find(|p| p["test"] == test && p["tasks"] == tasks && p["mode"] == mode)
            .unwrap();
        p["ops_per_sec"].as_f64().unwrap() as u64
    };
    for test in ["getppid1", "open1"] {
        let text = std::fs::read_to_string(wis.join(format!("{test}.csv"))).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[..2],
            [
                "tasks,processes,processes_idle,threads,threads_idle,linear",
                "0,0,100,0,100,0"
            ]
        );
        assert_eq!(lines.len(), 4, "{text}");
        let one = ops(test, 1, "processes").max(ops(test, 1, "threads"));
        for (line, tasks) in lines[2..].iter().zip([1u64, 2]) {
            let row = csv_row(line);
            assert_eq!(row[0], tasks);
            assert_eq!(row[1], ops(test, tasks, "processes"), "{test}: {line}");
            assert_eq!(row[3], ops(test, tasks, "threads"), "{test}: {line}");
            assert!(row[2] <= 10000 && row[4] <= 10000);
            assert_eq!(row[5], one * tasks, "{test}: linear in {line}");
        }
    }
    let out = postprocess_check(&wis);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("getppid1: getppid: 2 rows, per_process_ops="));
    assert!(stdout.contains("open1: Separate file open/close: 2 rows"));
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg"));
    for label in ["processes", "threads", "linear", "getppid1", "open1"] {
        assert!(svg.contains(label), "SVG lacks {label}");
    }
    // patchbench's own importer reads the file as will-it-scale's, naming the test by file.
    let store = dir.path().join("store.db");
    patchbench()
        .env("PATCHBENCH_STORE", &store)
        .arg("import")
        .arg(wis.join("open1.csv"))
        .assert()
        .success();
}

#[test]
fn the_check_script_reads_will_it_scale_s_own_csv() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/brk2.csv");
    std::fs::copy(fixture, dir.path().join("brk2.csv")).unwrap();
    std::fs::write(
        dir.path().join("brk2.title"),
        "brk unshared increase/decrease of one page\n",
    )
    .unwrap();
    let out = postprocess_check(dir.path());
    assert!(out.status.success(), "{out:?}");
    // And refuses what our old format wrote (a leading test column, blanks for a mode).
    std::fs::write(
        dir.path().join("brk2.csv"),
        "test,tasks,processes,processes_idle,threads,threads_idle,linear\n\
         brk2,0,0,100,0,100,0\nbrk2,1,100,50.00,,,100\n",
    )
    .unwrap();
    let out = postprocess_check(dir.path());
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn csv_file_holds_one_testcase_with_zeros_for_a_mode_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("getppid1.csv");
    patchbench()
        .args(["scale", "getppid1", "--tasks", "1,2", "--mode", "process"])
        .arg("--no-store")
        .args(SHORT)
        .arg("--csv")
        .arg(&csv)
        .assert()
        .success();
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<[u64; 6]> = text.lines().skip(2).map(csv_row).collect();
    assert_eq!(rows.len(), 2, "{text}");
    for (r, tasks) in rows.iter().zip([1, 2]) {
        assert_eq!(r[0], tasks);
        assert!(r[1] > 0);
        assert_eq!((r[3], r[4]), (0, 0), "threads did not run: 0,0.00");
        assert_eq!(r[5], rows[0][1] * tasks, "linear from the 1-task processes");
    }
    assert_eq!(entries(dir.path()), ["getppid1.csv"]);
    refused(
        &["scale", "getppid1", "open1", "--csv", csv.to_str().unwrap()],
        "will-it-scale's CSV holds one testcase and 2 were given",
    );
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
    // As an unprivileged user: root is not held to the limit.
    common::as_unprivileged(&mut cmd, common::unprivileged::SCALE, &[dir.path()]);
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
