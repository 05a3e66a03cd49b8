//! Tests of the result store and its commands: saving through `save` and the incremental
//! sink, `runs`/`show`/`export`/`rm`, `import` (exact numbers, bad and cut-off files leave
//! the store untouched), damaged stores, a writer killed with SIGKILL, and two writers at once.

mod common;

use assert_cmd::Command;
use common::{fixture, sample_record as record};
use patchbench::record::sink::Sink;
use patchbench::record::RunRecord;
use patchbench::store;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

fn patchbench(store: &Path) -> Command {
    let mut c = common::patchbench();
    c.env("PATCHBENCH_STORE", store);
    c
}

fn temp_store() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().expect("tempdir");
    let p = d.path().join("sub").join("results.db");
    (d, p)
}

#[test]
fn save_and_read_back() {
    let (_d, path) = temp_store();
    let r = record("base", &[("pipe", 1000.0), ("syscall", 2000.0)]);
    let id = store::save(&common::file(&path), Some("patched".into()), &r).unwrap();
    assert_eq!(id, 1);
    let s = common::open_store(&path);
    let back = s.get(1).unwrap().unwrap();
    assert_eq!(back.label.as_deref(), Some("patched"), "--label wins");
    assert_eq!(back.metrics, r.metrics);
    assert_eq!(s.ids_with_label("patched").unwrap(), vec![1]);
    let list = s.list(None).unwrap();
    assert_eq!(
        (list[0].metrics, list[0].tests, list[0].incomplete),
        (2, 2, false)
    );
}

#[test]
fn sink_commits_each_step_and_marks_the_end() {
    let (_d, path) = temp_store();
    let location = store::Location::File(path.clone());
    let mut sink = store::sink(&location, Some("base".into()), None).unwrap();
    let mut r = record("x", &[]);
    sink.started(&r).unwrap();
    // Nothing is stored before the first result.
    assert_eq!(sink.saved_as(), None);
    assert_eq!(common::open_store(&path).list(None).unwrap().len(), 0);
    r.metrics = record("x", &[("pipe", 5.0)]).metrics;
    sink.progress(&r).unwrap();
    assert_eq!(sink.saved_as().as_deref(), Some("1"));
    let s = common::open_store(&path);
    let l = s.list(None).unwrap();
    assert_eq!((l[0].metrics, l[0].incomplete), (1, true));
    assert_eq!(l[0].label.as_deref(), Some("base"));
    sink.finished(&r).unwrap();
    assert!(!s.list(None).unwrap()[0].incomplete);
}

#[test]
fn runs_show_export_rm() {
    let (_d, path) = temp_store();
    store::save(
        &common::file(&path),
        None,
        &record("base", &[("pipe", 1234.5)]),
    )
    .unwrap();
    patchbench(&path)
        .arg("runs")
        .assert()
        .success()
        .stdout(predicates::str::contains("base"));
    patchbench(&path)
        .args(["show", "1"])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "unixbench.score[copies=1,test=pipe]",
        ));
    let out = patchbench(&path)
        .args(["export", "1", "--format", "json"])
        .output()
        .unwrap();
    let back = RunRecord::from_json(&String::from_utf8_lossy(&out.stdout)).unwrap();
    assert_eq!(back.metrics[0].value, 1234.5);
    patchbench(&path)
        .args(["export", "1", "--format", "csv"])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "1,base,\"unixbench.score[copies=1,test=pipe]\"",
        ));
    patchbench(&path)
        .args(["rm", "1", "7"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no run 7"));
    patchbench(&path).args(["rm", "1"]).assert().success();
    patchbench(&path)
        .args(["show", "1"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no run 1"));
}

#[test]
fn importing_the_spec_sample_gives_exactly_its_numbers() {
    let (_d, path) = temp_store();
    patchbench(&path)
        .args([
            "import",
            "--label",
            "sample",
            &fixture("unixbench-7.1-sample.txt"),
        ])
        .assert()
        .success();
    let r = common::open_store(&path).get(1).unwrap().unwrap();
    let value = |key: &str| r.metrics.iter().find(|m| m.key() == key).unwrap().value;
    let expected = [
        ("dhry2reg", 45448570.8),
        ("whetstone-double", 5024.7),
        ("execl", 4475.4),
        ("fstime", 658585.0),
        ("fsbuffer", 177570.0),
        ("fsdisk", 1951349.0),
        ("pipe", 1660768.6),
        ("context1", 137573.5),
        ("spawn", 8817.5),
        ("shell1", 12539.0),
        ("shell8", 5006.0),
        ("syscall", 1452805.5),
    ];
    for (test, score) in expected {
        assert_eq!(
            value(&format!("unixbench.score[copies=1,test={test}]")),
            score
        );
    }
    assert_eq!(value("unixbench.index[copies=1]"), 1534.7);
    assert_eq!(r.metrics.len(), 13);
    let idx: Vec<f64> = r.tests.iter().filter_map(|t| t.index).collect();
    assert_eq!(idx[0], 3894.5);
    assert_eq!(idx[11], 968.5);
    assert_eq!(r.label.as_deref(), Some("sample"));
}

#[test]
fn import_reads_both_unixbench_versions_aim7_and_will_it_scale() {
    let (_d, path) = temp_store();
    patchbench(&path)
        .args(["import", &fixture("ub513-base.txt"), &fixture("brk2.csv")])
        .arg(fixture("aim7-base/creat-clo.txt"))
        .assert()
        .success();
    let s = common::open_store(&path);
    let ub = s.get(1).unwrap().unwrap();
    assert_eq!(ub.metrics.len(), 26, "12 tests + index at 1 and 2 copies");
    assert_eq!(ub.system.hostname, "testbox");
    assert_eq!(ub.system.kernel_release, "6.7.0-next-20240118");
    assert_eq!(ub.config["unixbench_version"], "5.1.3");
    let wis = s.get(2).unwrap().unwrap();
    let m = wis
        .metrics
        .iter()
        .find(|m| m.key() == "will-it-scale.per_process_ops[mode=process,tasks=2,test=brk2]")
        .unwrap();
    assert_eq!(m.value, 258001.0 / 2.0);
    let aim = s.get(3).unwrap().unwrap();
    let jpm = aim
        .metrics
        .iter()
        .find(|m| m.name == "aim7.jobs-per-min")
        .unwrap();
    assert_eq!(
        (
            jpm.value,
            jpm.params["load"].as_str(),
            jpm.params["test"].as_str()
        ),
        (15431.17, "3000", "creat-clo")
    );
}

#[test]
fn failed_import_stores_nothing_and_names_file_and_line() {
    let (_d, path) = temp_store();
    patchbench(&path)
        .args(["import", &fixture("ub60-base-1.txt")])
        .assert()
        .success();
    let before = std::fs::read(&path).unwrap();
    patchbench(&path)
        .args([
            "import",
            &fixture("ub60-base-2.txt"),
            &fixture("ub60-truncated.txt"),
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::is_match(r"ub60-truncated\.txt:\d+: ").unwrap());
    patchbench(&path)
        .args(["import", &fixture("not-a-result.txt")])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "not-a-result.txt: not a known result format",
        ));
    assert_eq!(common::open_store(&path).list(None).unwrap().len(), 1);
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn cut_off_index_table_is_reported_at_its_line() {
    let d = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("unixbench-7.1-sample.txt")).unwrap();
    let cut: String = text.lines().take(8).collect::<Vec<_>>().join("\n");
    let f = d.path().join("cut.txt");
    std::fs::write(&f, cut).unwrap();
    patchbench(&d.path().join("s.db"))
        .arg("import")
        .arg(&f)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("cut.txt:8: cut off"));
    assert!(!d.path().join("s.db").exists());
}

#[test]
fn damaged_or_foreign_stores_are_refused_with_one_line() {
    let d = tempfile::tempdir().unwrap();
    let garbage = d.path().join("garbage.db");
    std::fs::write(&garbage, vec![b'x'; 8192]).unwrap();
    let out = patchbench(&garbage).arg("runs").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("garbage.db is not a readable patchbench store"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    // A real store cut in half.
    let path = d.path().join("cut.db");
    for i in 0..40 {
        store::save(
            &common::file(&path),
            None,
            &record("base", &[("pipe", i as f64 + 1.0)]),
        )
        .unwrap();
    }
    let len = std::fs::metadata(&path).unwrap().len();
    assert!(len > 8192, "store too small to cut: {len}");
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(len / 2).unwrap();
    drop(f);
    let out = patchbench(&path)
        .args(["compare", "base", "base"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cut.db"));

    // Some other program's SQLite database.
    let other = d.path().join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE t (x INTEGER);")
        .unwrap();
    patchbench(&other)
        .arg("runs")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("not a patchbench store"));

    patchbench(&d.path().join("missing.db"))
        .arg("runs")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("does not exist"));
}

fn writer(path: &Path, label: &str, tests: u32, stall_after: u32) -> std::process::Child {
    common::std_patchbench()
        .args(["debug-slow-writer", "--label", label])
        .args([
            "--tests",
            &tests.to_string(),
            "--stall-after",
            &stall_after.to_string(),
        ])
        .args(["--pause-ms", "600000", "--store"])
        .arg(path)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn writer")
}

#[test]
fn sigkill_mid_run_keeps_the_committed_tests() {
    let (_d, path) = temp_store();
    let mut child = writer(&path, "killed", 6, 3);
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    // Wait until the third test is committed; the writer then stalls inside "test 4".
    for line in lines.by_ref() {
        if line.unwrap() == "committed 3" {
            break;
        }
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success());
    let s = common::open_store(&path);
    let l = s.list(None).unwrap();
    assert_eq!(l.len(), 1);
    assert!(l[0].incomplete);
    assert_eq!(l[0].metrics, 3);
    let r = s.get(l[0].id).unwrap().unwrap();
    let values: Vec<f64> = r.metrics.iter().map(|m| m.value).collect();
    assert_eq!(values, vec![1000.0, 1001.0, 1002.0]);
    patchbench(&path)
        .arg("runs")
        .assert()
        .success()
        .stdout(predicates::str::contains("(incomplete)"));
}

#[test]
fn two_writers_at_once_are_both_kept() {
    let (_d, path) = temp_store();
    let a = writer(&path, "a", 60, 0);
    let b = writer(&path, "b", 60, 0);
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    let s = common::open_store(&path);
    let l = s.list(None).unwrap();
    assert_eq!(l.len(), 2);
    for run in l {
        assert_eq!((run.metrics, run.incomplete), (60, false), "{run:?}");
    }
}

/// The sample report of unixbench.md §7.1 survives import and `show --report` byte for byte:
/// its index section comes back exactly as published.
#[test]
fn imported_sample_report_is_printed_back_unchanged() {
    let (_dir, store) = temp_store();
    patchbench(&store)
        .args(["import", "--label", "sample"])
        .arg(fixture("unixbench-7.1-sample.txt"))
        .assert()
        .success();
    let out = patchbench(&store)
        .args(["show", "1", "--report"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let source = std::fs::read_to_string(fixture("unixbench-7.1-sample.txt")).unwrap();
    let section = |t: &str| -> String {
        let start = t
            .find("System Benchmarks Index Values")
            .expect("index section");
        let end = t[start..].find("System Benchmarks Index Score").unwrap() + start;
        let line_end = t[end..].find('\n').unwrap() + end;
        t[start..line_end].to_string()
    };
    assert_eq!(section(&text), section(&source));
}

/// Result documents of schema patchbench.run/1 (written by the previous release) are still
/// read, by `import` and as a compare side, with their untyped sections moved into the typed
/// ones.
#[test]
fn schema_1_documents_are_still_read() {
    let (_d, path) = temp_store();
    for kind in ["unixbench", "aim7", "scale", "model"] {
        let file = fixture(&format!("v1/{kind}.json"));
        let text = std::fs::read_to_string(&file).unwrap();
        let r = RunRecord::from_json(&text).unwrap();
        assert_eq!(r.schema, patchbench::record::SCHEMA, "{kind}");
        assert!(!r.metrics.is_empty(), "{kind}");
        match kind {
            "unixbench" => assert_eq!(r.blocks.len(), 1),
            "aim7" => assert_eq!(r.aim7.as_ref().unwrap().points.len(), 2),
            "scale" => assert!(!r.will_it_scale.as_ref().unwrap().points.is_empty()),
            _ => {}
        }
        assert!(!r.extra.contains_key("blocks") && !r.extra.contains_key("points"));
        patchbench(&path)
            .arg("import")
            .arg(&file)
            .assert()
            .success();
    }
    patchbench(&path)
        .args(["compare", "1", "1", "--format", "inline"])
        .assert()
        .success();
}

/// The UnixBench text report is promised byte for byte: a stored run (here a schema-1 JSON
/// file, so the bytes are fixed) prints exactly the snapshot.
#[test]
fn the_unixbench_report_is_unchanged_byte_for_byte() {
    let (_d, path) = temp_store();
    patchbench(&path)
        .arg("import")
        .arg(fixture("v1/unixbench.json"))
        .assert()
        .success();
    let out = patchbench(&path)
        .args(["show", "1", "--report"])
        .env("TZ", "UTC")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    // insta compares without the trailing newlines; UnixBench ends each block with one.
    assert!(text.ends_with("964.7\n\n"), "{text:?}");
    insta::assert_snapshot!(text);
}

#[test]
fn importing_a_stored_run_again_stores_it_once() {
    let (d, path) = temp_store();
    store::save(
        &common::file(&path),
        Some("base".into()),
        &record("base", &[("pipe", 1000.0)]),
    )
    .unwrap();
    let out = patchbench(&path).args(["export", "1"]).output().unwrap();
    let file = d.path().join("run1.json");
    std::fs::write(&file, &out.stdout).unwrap();
    for _ in 0..2 {
        let out = patchbench(&path).arg("import").arg(&file).output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("already stored as run 1"), "{text}");
    }
    assert_eq!(common::open_store(&path).list(None).unwrap().len(), 1);
}

/// A real full-index run (`run --quick --copies 1`, 12 tests, 4,057 metrics) written as
/// the run sink writes it, a unit at a time: each later part holds about what that unit
/// added (its score, monitor and per-CPU rows, the moved index rows), not the run so far,
/// and the run reads back as written.
#[test]
fn a_run_written_unit_by_unit_appends_only_each_units_values() {
    let text = String::from_utf8(common::gunzipped("run-quick-1copy.json.gz")).unwrap();
    let full = RunRecord::from_json(&text).unwrap();
    assert_eq!(full.tests.len(), 12);
    let d = tempfile::tempdir().unwrap();
    let mut store = patchbench::store::db::Store::open(
        &store::Location::File(d.path().join("s.db")),
        store::Access::Create,
        None,
    )
    .unwrap();
    let mut r = RunRecord {
        tests: Vec::new(),
        monitors: Vec::new(),
        indexes: Vec::new(),
        metrics: Vec::new(),
        ..full.clone()
    };
    let mut id = None;
    let mut added = Vec::new();
    for (t, u) in full.tests.iter().zip(&full.monitors) {
        let before = r.metrics.len();
        r.monitors.push(u.clone());
        patchbench::unixbench::runner::record::add_test(&mut r, t.clone());
        added.push(r.metrics.len() - before);
        match id {
            None => id = Some(store.insert(&r).unwrap()),
            Some(id) => store.update(id, &r).unwrap(),
        }
    }
    let id = id.unwrap();
    assert_eq!(store.get(id).unwrap().unwrap(), r);
    let conn = rusqlite::Connection::open(d.path().join("s.db")).unwrap();
    let mut q = conn
        .prepare("SELECT body FROM run_parts WHERE run_id=?1 ORDER BY seq")
        .unwrap();
    let bodies: Vec<Vec<u8>> = q
        .query_map([id], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(bodies.len(), 12);
    for (k, body) in bodies.iter().enumerate().skip(1) {
        let part = patchbench::store::packed::decode(body).unwrap();
        let written: usize = part.metrics.iter().map(|s| s.insert.len()).sum();
        // The unit's new rows, and the index rows it moved (at most 2 at 1 copy).
        assert!(
            written >= added[k] && written <= added[k] + 4,
            "unit {k}: {written} entries written for {} new",
            added[k]
        );
        let lines: usize = part.lines.iter().map(|s| s.insert.len()).sum();
        assert!(lines < 40, "unit {k}: {lines} lines written");
    }
}
