//! `--format json` on standard output for `runs`, `show` and `list` (docs/json.md): each
//! parses, has its schema and its documented field names with the right types and values.
//! (`check --format json` is tested in tests/check.rs, `compare --format json` in
//! tests/compare.rs.)

mod common;

use serde_json::Value;
use std::path::Path;

fn json_of(store: &Path, args: &[&str]) -> Value {
    let out = common::patchbench_with_store(store)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// A store with the three base and three patched UnixBench reports of the fixtures.
fn store() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("results.db");
    for (label, side) in [("base", "base"), ("patched", "patched")] {
        let mut c = common::patchbench_with_store(&store);
        c.args(["import", "--label", label]);
        for i in 1..=3 {
            c.arg(common::fixture(&format!("ub60-{side}-{i}.txt")));
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    (dir, store)
}

#[test]
fn runs_as_json() {
    let (_d, store) = store();
    let v = json_of(&store, &["runs", "--format", "json"]);
    assert_eq!(v["schema"], "patchbench.runs/1");
    assert_eq!(v["store"], store.display().to_string());
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 6);
    let first = &runs[0];
    assert_eq!(first["id"], 1);
    assert_eq!(first["label"], "base");
    assert_eq!(first["kind"], "unixbench");
    assert_eq!(first["tests"], 12, "distinct tests, at any copy count");
    assert_eq!(first["metrics"], 26);
    assert_eq!(first["incomplete"], false);
    for key in ["started_at", "host", "kernel"] {
        assert!(first[key].is_string(), "{key}: {first}");
    }
    let only = json_of(&store, &["runs", "--label", "patched", "--format", "json"]);
    let ids: Vec<i64> = only["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, vec![4, 5, 6]);
}

#[test]
fn show_as_json() {
    let (_d, store) = store();
    let v = json_of(&store, &["show", "2", "--format", "json"]);
    assert_eq!(v["schema"], "patchbench.show/1");
    assert_eq!(v["id"], 2);
    assert_eq!(v["label"], "base");
    assert_eq!(v["kind"], "unixbench");
    assert_eq!(v["incomplete"], false);
    assert!(v["system"]["hostname"].is_string());
    assert!(v["config"].is_object());
    assert_eq!(
        v["noise_warnings"],
        serde_json::json!([]),
        "an import has no noise check"
    );
    let metrics = v["metrics"].as_array().unwrap();
    assert_eq!(metrics.len(), 26);
    let index = metrics
        .iter()
        .find(|m| m["key"] == "unixbench.index[copies=1]")
        .unwrap();
    assert_eq!(index["name"], "unixbench.index");
    assert_eq!(index["params"]["copies"], "1");
    assert_eq!(index["unit"], "index");
    assert_eq!(index["direction"], "higher-is-better");
    assert!(index["value"].as_f64().unwrap() > 1000.0);
    for m in metrics {
        let n = m["n"].as_u64().unwrap() as usize;
        assert_eq!(m["samples"].as_array().unwrap().len(), n, "{m}");
        assert!(m["stddev_pct"].is_null() || m["stddev_pct"].is_f64(), "{m}");
        assert!(m["title"].is_string());
    }
    // The text and the JSON say the same: every key of the text's table is in the JSON.
    let text = common::patchbench_with_store(&store)
        .args(["show", "2"])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    for m in metrics {
        assert!(text.contains(m["key"].as_str().unwrap()));
    }
    let both = common::patchbench_with_store(&store)
        .args(["show", "2", "--report", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        both.status.code(),
        Some(2),
        "--report is a text format of its own"
    );
}

#[test]
fn list_as_json() {
    let v = json_of(
        Path::new("/nonexistent/store.db"),
        &["list", "--format", "json"],
    );
    assert_eq!(v["schema"], "patchbench.list/1");
    let tests = v["tests"].as_array().unwrap();
    assert_eq!(tests.iter().filter(|t| t["index"] == true).count(), 12);
    let pipe = tests.iter().find(|t| t["id"] == "pipe").unwrap();
    assert_eq!(pipe["name"], "Pipe Throughput");
    assert_eq!(pipe["unit"], "lps");
    assert_eq!(pipe["baseline"], 12440.0);
    assert!(pipe["description"].as_str().is_some_and(|d| !d.is_empty()));
    assert!(
        tests.iter().any(|t| t["baseline"].is_null()),
        "tests without a baseline"
    );
    let aliases = v["aliases"].as_array().unwrap();
    let index = aliases.iter().find(|a| a["alias"] == "index").unwrap();
    assert_eq!(index["tests"].as_array().unwrap().len(), 12);
}
