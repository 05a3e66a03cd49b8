//! The catalogue walked: every registered UnixBench test runs briefly through `patchbench run`
//! (one copy, one pass of 0.3 s; 2 s for the looper tests, whose one loop is a whole gcc, dc
//! or grep) where the programs it needs are here, and is skipped with one line, without
//! stopping the run, where they are not. The runs go concurrently: most of the
//! wall time is the file tests' fixed pauses (fstime's sleeps, 4 to 11 s), which cost no CPU.

mod common;

use patchbench::unixbench::catalog::{TimeSource, TESTS};
use patchbench::unixbench::runner::tools;
use patchbench::unixbench::workloads::Params;
use std::path::Path;
use std::process::{Child, Stdio};

fn start(test: &str, secs: &str, dir: &Path, json: &Path, path: Option<&str>) -> Child {
    let mut cmd = common::std_patchbench();
    cmd.args([
        "run",
        test,
        "--duration",
        secs,
        "--passes",
        "1",
        "--copies",
        "1",
        "--no-settle",
        "--no-store",
    ])
    .arg("--dir")
    .arg(dir)
    .arg("--json")
    .arg(json)
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    cmd.spawn().unwrap()
}

#[test]
fn every_registered_test_runs_briefly_or_is_skipped_with_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = std::env::var("PATH").unwrap_or_default();
    let runs: Vec<_> = TESTS
        .iter()
        .map(|t| {
            let json = dir.path().join(format!("{}.json", t.id));
            let secs = match t.params {
                Params::Looper { .. } => "2",
                _ => "0.3",
            };
            (t, start(t.id, secs, dir.path(), &json, None), json)
        })
        .collect();
    for (t, child, json) in runs {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if let Some(reason) = tools::missing(t, &path) {
            // Alone in its run, a skipped test leaves nothing to run: one line, exit 2.
            assert_eq!(out.status.code(), Some(2), "{}: {stderr}", t.id);
            assert!(stderr.contains(&reason), "{}: {stderr}", t.id);
            assert_eq!(stderr.trim().lines().count(), 1, "{}: {stderr}", t.id);
            eprintln!("{}: skipped here ({reason})", t.id);
            continue;
        }
        assert!(out.status.success(), "{}: {stderr}", t.id);
        let doc = common::read_json(&json);
        let r = &doc["tests"][0];
        assert_eq!(r["test"], t.id);
        assert_eq!(r["name"], t.name);
        assert_eq!(r["unit"], t.unit);
        let divisor = match t.time_source {
            TimeSource::Wall => "wall",
            TimeSource::SelfReported => "own-time",
        };
        assert_eq!(r["divisor"], divisor, "{}", t.id);
        let copy = &r["passes"][0]["copies"][0];
        let count = copy["count"].as_f64().unwrap();
        let window = copy["window"].as_array().unwrap();
        let (a, b) = (window[0].as_f64().unwrap(), window[1].as_f64().unwrap());
        assert!(0.0 <= a && a <= b, "{}: window {a}..{b}", t.id);
        assert_eq!(r["overlap"]["overlap"], 1.0, "{}: one copy", t.id);
        // A shell test's one loop (8 or 16 pipelines) may outlast 0.3 s on a busy machine
        // (count 0); every other test counts something in its time.
        if matches!(t.params, Params::Shell { .. }) {
            assert!(count >= 0.0, "{}", t.id);
        } else {
            assert!(count > 0.0, "{}: count {count}", t.id);
        }
        if t.id == "C" {
            // gcc ran at least once and warned about cctest.c; the warnings are kept, the run
            // is not stopped.
            assert!(r["stderr"]["bytes"].as_u64().unwrap() > 0, "{doc}");
            assert!(r["stderr"]["text"].as_str().unwrap().contains("warning"));
            assert!(
                stderr.contains("wrote") && stderr.contains("stderr"),
                "{stderr}"
            );
        }
    }
}

/// With the programs missing (an empty PATH), `C` and `dc` are each skipped with one line, the
/// rest of the run goes on, and the JSON says what was skipped and why.
#[test]
fn a_missing_program_skips_its_test_not_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let empty_path = empty.path().to_str().unwrap();
    let out = start("C,dc,pipe", "0.3", dir.path(), &json, Some(empty_path))
        .wait_with_output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let skips: Vec<&str> = stderr.lines().filter(|l| l.contains("skipping")).collect();
    assert_eq!(skips.len(), 2, "{stderr}");
    assert!(skips[0].contains("skipping C: it needs `gcc`, which is not in PATH"));
    assert!(skips[1].contains("skipping dc: it needs `dc`"));
    let doc = common::read_json(&json);
    let ids: Vec<&str> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["test"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["pipe"]);
    let skipped: Vec<&str> = doc["config"]["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["test"].as_str().unwrap())
        .collect();
    assert_eq!(skipped, ["C", "dc"]);

    // Nothing left to run: one line, exit 2.
    let out = start("dc", "0.3", dir.path(), &json, Some(empty_path))
        .wait_with_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no selected test can run here"));
}

/// docs/run.md shows `patchbench list`'s output in full; it must be what the program prints.
#[test]
fn the_docs_show_the_list_output_as_printed() {
    let out = common::std_patchbench().arg("list").output().unwrap();
    assert!(out.status.success());
    let list = String::from_utf8(out.stdout).unwrap();
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/run.md")).unwrap();
    assert!(
        doc.contains(&format!("$ patchbench list\n{list}```")),
        "docs/run.md's `patchbench list` section is out of date; paste the output of `patchbench list`"
    );
}
