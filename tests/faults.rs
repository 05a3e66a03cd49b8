//! Issue #12's defects, each reproduced for real: non-finite and out-of-domain values in
//! imported files and in a store written by an earlier build, thread start failure under a
//! real address-space limit, unbounded imports (`/dev/zero`, a 1 GB file, a pipe), broken
//! import data, a symbolic link given as `--dir` with a trailing slash, the messages for a
//! killed task, the process limit, a full tmpfs, `/proc`, short durations and an empty store
//! file, and a lowered open-file limit. Tests that mount a tmpfs need root and fail, saying so,
//! without it.

mod common;

use common::{
    fingerprint, fixture, patchbench_with_store, run_bounded, with_limit, with_soft_limit, Outcome,
    Tmpfs,
};
use std::path::Path;
use std::time::Duration;

const CSV_HEADER: &str = "tasks,processes,processes_idle,threads,threads_idle,linear\n";

/// A store holding one good import, and its directory.
fn store_with_one_run() -> (tempfile::TempDir, std::path::PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("results.db");
    let out = patchbench_with_store(&store)
        .arg("import")
        .arg(fixture("brk2.csv"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    (d, store)
}

/// Asserts that `out` is a refusal (exit 2) whose message contains every one of `says`.
fn assert_refusal(out: &Outcome, what: &str, says: &[&str]) {
    assert_eq!(out.code, Some(2), "{what}: {out:?}");
    for s in says {
        assert!(
            out.stderr.contains(s),
            "{what}: wanted {s:?}: {}",
            out.stderr
        );
    }
}

/// Imports `text` as `name` into `store`; asserts it is refused with exit 2, one line naming
/// the file (and `line`, when given) and containing `says`, and the store untouched.
fn assert_refused(store: &Path, name: &str, text: &[u8], line: Option<usize>, says: &str) {
    let dir = store.parent().unwrap();
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    let before = fingerprint(store);
    let out = run_bounded(
        patchbench_with_store(store).arg("import").arg(&file),
        Duration::from_secs(30),
    );
    let where_ = match line {
        Some(n) => format!("{}:{n}:", file.display()),
        None => format!("{}:", file.display()),
    };
    assert_eq!(out.code, Some(2), "{name}: {out:?}");
    assert!(
        out.stderr.contains(&where_),
        "{name}: wanted {where_}: {}",
        out.stderr
    );
    assert!(
        out.stderr.contains(says),
        "{name}: wanted {says:?}: {}",
        out.stderr
    );
    assert_eq!(out.stderr.lines().count(), 1, "{name}: {}", out.stderr);
    assert!(fingerprint(store) == before, "{name}: the store changed");
}

#[test]
fn an_infinite_or_nan_value_refuses_the_file_and_leaves_the_store_as_it_was() {
    let (_d, store) = store_with_one_run();
    for v in ["inf", "1e309", "1e400", "Infinity", "NaN", "-inf"] {
        let csv = format!("{CSV_HEADER}1,{v},50,100,50,100\n");
        assert_refused(&store, "x.csv", csv.as_bytes(), Some(2), "field processes");
    }
    // The label's good run is still readable.
    let out = patchbench_with_store(&store)
        .args(["show", "1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// The schema of stores written before domain checks (version 1), as that build made it.
const SCHEMA_V1: &str = r#"
CREATE TABLE runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    label       TEXT,
    kind        TEXT NOT NULL,
    source      TEXT,
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    host        TEXT NOT NULL,
    kernel      TEXT NOT NULL,
    incomplete  INTEGER NOT NULL,
    record_json TEXT NOT NULL
);
CREATE INDEX runs_by_label ON runs(label);
CREATE TABLE metrics (
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    key          TEXT NOT NULL,
    name         TEXT NOT NULL,
    params_json  TEXT NOT NULL,
    title        TEXT NOT NULL,
    unit         TEXT NOT NULL,
    direction    TEXT NOT NULL,
    value        REAL NOT NULL,
    samples_json TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
PRAGMA application_id = 1346528104;
PRAGMA user_version = 1;
"#;

/// Writes one run as the earlier build did: `value` into the metrics table as given, and
/// into the record JSON (schema patchbench.run/1) as serde_json writes it (`null` when not
/// finite).
fn write_old_run(db: &rusqlite::Connection, label: &str, value: f64) {
    let mut record = patchbench::import::import_file(
        Path::new(&fixture("brk2.csv")),
        &patchbench::import::ImportOptions::default(),
    )
    .unwrap();
    record.label = Some(label.to_string());
    record.metrics[0].value = value;
    let mut doc = serde_json::to_value(&record).unwrap();
    doc["schema"] = serde_json::json!("patchbench.run/1");
    let json = doc.to_string();
    db.execute(
        "INSERT INTO runs (label, kind, source, started_at, finished_at, host, kernel,
                           incomplete, record_json) VALUES (?1, ?2, ?3, ?4, ?5, '', '', 0, ?6)",
        rusqlite::params![
            label,
            record.kind.as_str(),
            record.source,
            record.started_at,
            record.finished_at,
            json
        ],
    )
    .unwrap();
    let id = db.last_insert_rowid();
    for m in &record.metrics {
        db.execute(
            "INSERT INTO metrics VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'higher-is-better', ?7, '[]')",
            rusqlite::params![
                id,
                m.key(),
                m.name.as_str(),
                serde_json::to_string(&m.params).unwrap(),
                m.title.as_str(),
                m.unit.as_str(),
                m.value
            ],
        )
        .unwrap();
    }
}

#[test]
fn a_store_with_bad_values_from_an_earlier_build_opens_and_skips_them() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("old.db");
    {
        let db = rusqlite::Connection::open(&store).unwrap();
        db.execute_batch(SCHEMA_V1).unwrap();
        write_old_run(&db, "wis", 2000.0);
        write_old_run(&db, "wis", f64::INFINITY);
        write_old_run(&db, "wis", 0.0);
        write_old_run(&db, "wis", 2100.0);
    }
    let ok = |args: &[&str]| -> Outcome {
        let out = run_bounded(
            patchbench_with_store(&store).args(args),
            Duration::from_secs(60),
        );
        assert_eq!(out.code, Some(0), "{args:?}: {out:?}");
        out
    };
    let out = ok(&["runs"]);
    assert_eq!(out.stdout.lines().count(), 5, "{}", out.stdout);
    for id in ["2", "3"] {
        let out = ok(&["show", id]);
        assert!(
            out.stderr
                .contains("will-it-scale.per_process_ops[mode=process,tasks=1,test=brk2]"),
            "the warning names the metric left out: {}",
            out.stderr
        );
        let out = ok(&["export", id]);
        let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        for m in doc["metrics"].as_array().unwrap() {
            assert!(m["value"].as_f64().is_some_and(|v| v > 0.0), "{m}");
        }
    }
    let out = ok(&["compare", "wis", "wis"]);
    assert!(out.stdout.contains("brk2"), "{}", out.stdout);
    {
        let db = rusqlite::Connection::open(&store).unwrap();
        let refused: i64 = db
            .query_row("SELECT count(*) FROM metrics_refused", [], |r| r.get(0))
            .unwrap();
        assert_eq!(refused, 2, "the bad rows are kept aside, not deleted");
        let bad: i64 = db
            .query_row(
                "SELECT count(*) FROM metrics WHERE NOT (abs(value) < 1e308) OR value <= 0",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(bad, 0);
        // The schema now refuses such a row itself.
        let err = db.execute(
            "INSERT INTO metrics VALUES (1, 'k', 'unixbench.score', '{}', '', '', \
             'higher-is-better', 1e999, '[]')",
            [],
        );
        assert!(err.is_err(), "an infinite value got into the metrics table");
    }
    ok(&["rm", "2", "3"]);
    let out = ok(&["runs"]);
    assert_eq!(out.stdout.lines().count(), 3, "{}", out.stdout);
}

#[test]
fn importers_refuse_broken_data_with_file_line_and_field() {
    let (_d, store) = store_with_one_run();
    let csv = |rows: &str| format!("{CSV_HEADER}{rows}").into_bytes();
    assert_refused(
        &store,
        "neg.csv",
        &csv("1,-5,50,100,50,100\n"),
        Some(2),
        "field processes",
    );
    assert_refused(
        &store,
        "frac.csv",
        &csv("1.5,100,50,100,50,100\n"),
        Some(2),
        "field tasks",
    );
    assert_refused(
        &store,
        "inft.csv",
        &csv("inf,100,50,100,50,100\n"),
        Some(2),
        "field tasks",
    );
    assert_refused(
        &store,
        "dup.csv",
        &csv("1,100,50,100,50,100\n1,200,50,200,50,200\n"),
        Some(3),
        "tasks 1 is given a second time",
    );

    let ub = std::fs::read_to_string(fixture("ub60-base-1.txt")).unwrap();
    let zero = ub.replacen("41178404.0 lps", "       0.0 lps", 1);
    assert_refused(
        &store,
        "zero.txt",
        zero.as_bytes(),
        Some(15),
        "field score is 0.0",
    );
    let mut lines: Vec<&str> = ub.lines().collect();
    lines.insert(16, lines[15]);
    let dup = lines.join("\n");
    assert_refused(&store, "dupline.txt", dup.as_bytes(), Some(17), "a second");

    let aim = std::fs::read_to_string(fixture("aim7-base/creat-clo.txt")).unwrap();
    let load0 = aim.replacen(" 3000 ", "    0 ", 1);
    assert_refused(
        &store,
        "load0.txt",
        load0.as_bytes(),
        Some(4),
        "field tasks is 0",
    );
    let huge = aim.replacen(" 3000 ", " 12345678901234567890123456789 ", 1);
    assert_refused(&store, "huge.txt", huge.as_bytes(), Some(4), "field tasks");

    // patchbench JSON with a negative and a zero score.
    let json = patchbench_with_store(&store)
        .args(["export", "1"])
        .output()
        .unwrap();
    let mut doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    for bad in [-5.0, 0.0] {
        doc["metrics"][0]["value"] = serde_json::json!(bad);
        let text = serde_json::to_vec(&doc).unwrap();
        assert_refused(
            &store,
            "bad.json",
            &text,
            None,
            "must be a finite number > 0",
        );
    }
}

#[test]
fn thread_mode_that_cannot_make_its_threads_ends_with_one_line() {
    let d = tempfile::tempdir().unwrap();
    let threads = ["--tasks", "512", "--mode", "thread", "--no-store"];
    for cmd in [&["scale", "getppid1"][..], &["model", "model-setbit"][..]] {
        let mut c = patchbench_with_store(&d.path().join("unused.db"));
        c.args(cmd)
            .args(threads)
            .args(common::SHORT)
            .arg("--dir")
            .arg(d.path());
        // 512 threads need 1 GiB of stacks; the driver alone fits in 150 MB.
        with_limit(&mut c, libc::RLIMIT_AS, 150_000_000);
        let out = run_bounded(&mut c, Duration::from_secs(30));
        assert!(!out.timed_out, "{cmd:?} hung: {out:?}");
        // A start the system refused: the one "start refused" error of the process layer,
        // exit status 2 (a limit to raise).
        assert_eq!(out.code, Some(2), "{cmd:?}: {out:?}");
        // One line of ours. When glibc itself cannot set up a thread (its TLS destructors) it
        // says so on the host's way out ("Fatal glibc error: ..."): the host then dies of
        // SIGABRT, and that too is the one "start refused" of ours, never a panic.
        let errors: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.contains("error") && !l.starts_with("Fatal glibc error:"))
            .collect();
        assert_eq!(errors.len(), 1, "{}", out.stderr);
        assert!(
            !out.stderr.contains("panicked") && !out.stderr.contains("BACKTRACE"),
            "{}",
            out.stderr
        );
        let e = errors[0];
        assert!(
            e.starts_with("patchbench: error: ")
                && e.contains("starting threads: only")
                && e.contains("of 512 tasks could be started")
                && e.contains("stopped")
                && e.contains("ulimit -v"),
            "{e}"
        );
        assert_eq!(out.left_behind, 0, "{cmd:?} left processes behind");
    }
}

#[test]
fn imports_are_bounded_whatever_the_input() {
    let (d, store) = store_with_one_run();
    let before = fingerprint(&store);
    let import = |file: &Path| -> Outcome {
        let mut c = patchbench_with_store(&store);
        c.arg("import").arg(file);
        // An unbounded reader fails here quickly instead of eating the machine's memory.
        with_limit(&mut c, libc::RLIMIT_AS, 1 << 30);
        run_bounded(&mut c, Duration::from_secs(20))
    };
    let out = import(Path::new("/dev/zero"));
    assert_refusal(&out, "", &["larger than the 8 MiB"]);
    assert!(out.seconds < 10.0, "took {} s", out.seconds);

    // A 1 GB file (sparse, so the test writes nothing) is refused by its size.
    let big = d.path().join("big.csv");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(1 << 30).unwrap();
    let out = import(&big);
    assert_refusal(&out, "", &["big.csv: larger than the 8 MiB"]);

    // A pipe that never ends is cut off at the limit too.
    let fifo = d.path().join("stream.csv");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            use std::io::Write;
            let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            let _ = w.write_all(CSV_HEADER.as_bytes());
            let row = b"1,1,1,1,1,1\n".repeat(4096);
            while w.write_all(&row).is_ok() {}
        })
    };
    let out = import(&fifo);
    assert_refusal(&out, "", &["larger than the 8 MiB"]);
    writer.join().unwrap();
    assert!(fingerprint(&store) == before, "the store changed");
}

#[test]
fn a_symbolic_link_given_as_dir_is_refused_with_or_without_a_trailing_slash() {
    let d = tempfile::tempdir().unwrap();
    let real = d.path().join("real");
    std::fs::create_dir_all(real.join("sub")).unwrap();
    std::os::unix::fs::symlink(&real, d.path().join("linkdir")).unwrap();
    let real_sub = std::fs::canonicalize(real.join("sub")).unwrap();
    let commands: [&[&str]; 4] = [
        &["run", "syscall", "-d", "0.1", "-i", "1", "--no-settle"],
        &[
            "aim7",
            "creat-clo",
            "--load",
            "1",
            "--jobs",
            "1",
            "--no-start-delay",
        ],
        &[
            "scale",
            "getppid1",
            "--tasks",
            "1",
            "--duration",
            "0.25",
            "--warmup",
            "0",
        ],
        &[
            "model",
            "model-setbit",
            "--tasks",
            "1",
            "--duration",
            "0.25",
            "--warmup",
            "0",
        ],
    ];
    for cmd in commands {
        // The link itself, however it is written, is refused with the real directory named.
        for dir in ["linkdir", "./linkdir/", "linkdir/.", "./linkdir//"] {
            let mut c = patchbench_with_store(&d.path().join("unused.db"));
            c.current_dir(d.path())
                .args(cmd)
                .args(["--no-store", "--dir", dir]);
            let out = run_bounded(&mut c, Duration::from_secs(60));
            let what = format!("{cmd:?} --dir {dir}");
            let real_shown = std::fs::canonicalize(&real).unwrap();
            assert_refusal(
                &out,
                &what,
                &[
                    "is a symbolic link",
                    &format!("--dir {}", real_shown.display()),
                ],
            );
        }
        // A link among the parents (a home reached through a link) is resolved: the run
        // works in the real directory and says so.
        let json = d.path().join("out.json");
        let mut c = patchbench_with_store(&d.path().join("unused.db"));
        c.current_dir(d.path())
            .args(cmd)
            .args(["--no-store", "--dir", "linkdir/sub", "--json"])
            .arg(&json);
        let out = run_bounded(&mut c, Duration::from_secs(60));
        assert_eq!(out.code, Some(0), "{cmd:?} --dir linkdir/sub: {out:?}");
        let text = std::fs::read_to_string(&json).unwrap();
        // run and aim7 record their directory (scale and model do not).
        if ["run", "aim7"].contains(&cmd[0]) {
            assert!(
                text.contains(&format!("{}\"", real_sub.display())),
                "{cmd:?}: the record names the real directory {}: {text}",
                real_sub.display()
            );
        }
        assert!(
            !text.contains("linkdir"),
            "{cmd:?}: the record names the link: {text}"
        );
        assert_eq!(
            std::fs::read_dir(&real_sub).unwrap().count(),
            0,
            "{cmd:?}: its private directory was left in {}",
            real_sub.display()
        );
    }
    assert_eq!(
        std::fs::read_dir(&real).unwrap().count(),
        1,
        "nothing was made in the link's target"
    );
}

#[test]
fn a_killed_will_it_scale_task_is_reported_with_testcase_and_task_count() {
    let d = tempfile::tempdir().unwrap();
    let child = patchbench_with_store(&d.path().join("unused.db"))
        .args(["scale", "getppid1", "--tasks", "2", "--mode", "process"])
        .args([
            "--duration",
            "20",
            "--warmup",
            "0",
            "--sample-interval",
            "0.25",
        ])
        .arg("--no-store")
        .arg("--dir")
        .arg(d.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while common::children(child.id()).len() < 2 && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let tasks = common::children(child.id());
    assert_eq!(tasks.len(), 2, "the tasks did not start");
    // SAFETY: killing a task process this test's command started.
    unsafe { libc::kill(tasks[1], libc::SIGKILL) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("getppid1 at 2 processes: task")
            && err.contains("killed by signal 9 (SIGKILL)"),
        "{err}"
    );
}

#[test]
fn a_load_over_the_process_limit_names_the_number_asked_for() {
    let d = tempfile::tempdir().unwrap();
    let mut c = patchbench_with_store(&d.path().join("unused.db"));
    c.args(["scale", "getppid1", "--tasks", "50", "--no-store", "--dir"])
        .arg(d.path());
    with_soft_limit(&mut c, libc::RLIMIT_NPROC, 1);
    // As an unprivileged user: root is not held to the limit.
    common::as_unprivileged(&mut c, common::unprivileged::FAULTS, &[d.path()]);
    let out = run_bounded(&mut c, Duration::from_secs(30));
    assert_refusal(&out, "", &["--tasks 50 needs", "RLIMIT_NPROC"]);
}

#[test]
fn a_full_dir_during_file_and_shell_tests_names_the_directory_and_the_fix() {
    let fs = Tmpfs::mount("size=1m");
    let dir = fs.path.display().to_string();
    let wants = |out: &Outcome, what: &str| {
        assert_ne!(out.code, Some(0), "{what}: {out:?}");
        assert!(
            out.stderr.contains(&format!("--dir {dir}")) && out.stderr.contains("free some space"),
            "{what}: {}",
            out.stderr
        );
    };
    let run = |test: &str, secs: &str| {
        let mut c = patchbench_with_store(&fs.path.join("unused.db"));
        c.args([
            "run",
            test,
            "-d",
            secs,
            "-i",
            "1",
            "--no-settle",
            "--no-store",
            "--dir",
        ])
        .arg(&fs.path);
        c
    };
    // fsdisk's 8 MB file does not fit in 1 MB.
    wants(
        &run_bounded(&mut run("fsdisk", "1"), Duration::from_secs(60)),
        "fsdisk",
    );
    // Full before the run starts.
    fs.fill();
    wants(
        &run_bounded(&mut run("shell1", "1"), Duration::from_secs(60)),
        "shell1 full",
    );
    // Refused before a run is opened: nothing, not even an incomplete run, reaches the store.
    let store = tempfile::tempdir().unwrap();
    let db = store.path().join("s.db");
    let mut c = patchbench_with_store(&db);
    c.args([
        "run",
        "shell1",
        "-d",
        "1",
        "-i",
        "1",
        "--no-settle",
        "--dir",
    ])
    .arg(&fs.path);
    wants(
        &run_bounded(&mut c, Duration::from_secs(60)),
        "shell1 full, stored",
    );
    assert!(!db.exists(), "a refused run left a store behind");
    std::fs::remove_file(fs.path.join("filler")).unwrap();
    // Full while shell1 runs: its scripts ignore failed writes, so the pass must notice.
    let mut c = run("shell1", "3");
    c.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    let start = std::time::Instant::now();
    while std::fs::read_dir(&fs.path).unwrap().count() == 0
        && start.elapsed() < Duration::from_secs(30)
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(300));
    // Keep it full: the scripts' `rm` frees a few blocks each loop, which the filler takes.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let filler = {
        let (done, path) = (done.clone(), fs.path.join("fill"));
        std::thread::spawn(move || {
            use std::io::Write;
            let mut f = std::fs::File::create(path).unwrap();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if f.write_all(&[0u8; 4096]).is_err() {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        })
    };
    let out = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    filler.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "shell1 filled mid-run: {err}");
    assert!(
        err.contains(&format!("--dir {dir}")) && err.contains("free some space"),
        "shell1 filled mid-run: {err}"
    );
}

#[test]
fn aim7_on_proc_says_it_is_not_storage() {
    let out = run_bounded(
        common::std_patchbench().args(["aim7", "creat-clo", "--no-store", "--dir", "/proc"]),
        Duration::from_secs(30),
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("proc filesystem") && !out.stderr.contains("full"),
        "{}",
        out.stderr
    );
}

#[test]
fn durations_below_the_documented_minimum_are_refused_with_the_real_range() {
    for d in ["0.0001", "0", "0.09", "86401"] {
        for cmd in [&["run", "pipe"][..], &["scale", "getppid1"][..]] {
            let out = common::std_patchbench()
                .args(cmd)
                .args(["--duration", d, "--no-store"])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{d}: {err}");
            assert!(err.contains("from 0.1 to 86400 seconds"), "{d}: {err}");
        }
    }
    let d = tempfile::tempdir().unwrap();
    let out = common::std_patchbench()
        .args([
            "run",
            "syscall",
            "-d",
            "0.1",
            "-i",
            "1",
            "--no-settle",
            "--no-store",
        ])
        .arg("--dir")
        .arg(d.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn an_empty_file_given_as_store_to_read_only_commands_is_not_made_a_store() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("empty.db");
    std::fs::write(&store, b"").unwrap();
    for args in [
        &["runs"][..],
        &["show", "1"],
        &["export", "1"],
        &["compare", "a", "b"],
    ] {
        let out = patchbench_with_store(&store).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("empty.db is empty, not a patchbench store"),
            "{err}"
        );
        assert_eq!(std::fs::metadata(&store).unwrap().len(), 0);
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            1,
            "side files made"
        );
    }
}

#[test]
fn too_few_open_files_are_refused_before_the_run_starts() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("fds.db");
    let mut c = patchbench_with_store(&store);
    c.args([
        "run",
        "pipe",
        "--copies",
        "40",
        "-d",
        "0.1",
        "-i",
        "1",
        "--no-settle",
        "--dir",
    ])
    .arg(d.path());
    with_limit(&mut c, libc::RLIMIT_NOFILE, 64);
    let out = run_bounded(&mut c, Duration::from_secs(60));
    assert_refusal(&out, "", &["--copies 40 needs", "ulimit -n"]);
    assert!(
        !store.exists(),
        "a run was stored: {:?}",
        std::fs::read_dir(d.path())
    );
}
