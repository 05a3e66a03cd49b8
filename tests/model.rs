//! Integration tests of `patchbench model`: model-setbit reports both variants and their ratio
//! at every task count; model-isize's correct variants see no ordering violation while the
//! planted publish-first writer is caught; bad input is refused with exit status 2. Only
//! counts, ratios' presence and exit statuses are checked, never rates.

mod common;

use common::{patchbench, SHORT};
use predicates::prelude::PredicateBooleanExt;
use std::path::Path;

fn metrics(path: &Path) -> Vec<serde_json::Value> {
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(r["kind"], "model");
    r["metrics"].as_array().unwrap().clone()
}

fn find<'a>(
    ms: &'a [serde_json::Value],
    name: &str,
    params: &[(&str, &str)],
) -> &'a serde_json::Value {
    ms.iter()
        .find(|m| m["name"] == name && params.iter().all(|(k, v)| m["params"][*k] == *v))
        .unwrap_or_else(|| panic!("no {name} {params:?}"))
}

#[test]
fn setbit_reports_both_variants_and_the_ratio_in_both_modes() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("m.json");
    let out = patchbench()
        .args([
            "model",
            "model-setbit",
            "--tasks",
            "1,2",
            "--mode",
            "both",
            "--read-mix",
        ])
        .args(SHORT)
        .arg("--no-store")
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("test-first/always"));
    let ms = metrics(&json);
    common::assert_noise_check(&common::read_json(&json), &std::env::temp_dir());
    for mode in ["threads", "processes"] {
        for tasks in ["1", "2"] {
            for variant in ["always", "test-first"] {
                let m = find(
                    &ms,
                    "model.setbit.ops_per_task",
                    &[("variant", variant), ("tasks", tasks), ("mode", mode)],
                );
                assert!(m["value"].as_f64().unwrap() > 0.0);
            }
            let r = find(
                &ms,
                "model.setbit.ratio",
                &[("tasks", tasks), ("mode", mode)],
            );
            assert!(r["value"].as_f64().unwrap() > 0.0);
        }
    }
}

#[test]
fn isize_correct_variants_see_no_violation() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("i.json");
    patchbench()
        .args(["model", "model-isize", "--tasks", "1", "--mode", "both"])
        .args(["--reads", "200000"])
        .args(SHORT)
        .arg("--no-store")
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let ms = metrics(&json);
    for mode in ["threads", "processes"] {
        for variant in ["fence", "acquire", "seqcount"] {
            let p = [("variant", variant), ("mode", mode), ("readers", "1")];
            assert_eq!(find(&ms, "model.isize.violations", &p)["value"], 0.0);
            assert!(
                find(&ms, "model.isize.reads", &p)["value"]
                    .as_f64()
                    .unwrap()
                    >= 200000.0
            );
            assert!(
                find(&ms, "model.isize.writer_ops", &p)["value"]
                    .as_f64()
                    .unwrap()
                    > 0.0
            );
        }
    }
}

#[test]
fn isize_counts_the_planted_violation() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("p.json");
    patchbench()
        .args([
            "model",
            "isize",
            "--variants",
            "publish-first",
            "--tasks",
            "1",
        ])
        .args(["--reads", "1000000"])
        .args(SHORT)
        .arg("--no-store")
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let ms = metrics(&json);
    let v = find(
        &ms,
        "model.isize.violations",
        &[("variant", "publish-first")],
    );
    assert!(
        v["value"].as_f64().unwrap() > 0.0,
        "the planted bug went unseen"
    );
}

#[test]
fn bad_model_input_is_refused() {
    for (args, expect) in [
        (vec!["model", "model-nope"], "unknown model"),
        (vec!["model"], "give a model"),
        (
            vec!["model", "model-setbit", "--variants", "sometimes"],
            "unknown variant",
        ),
        (vec!["model", "model-setbit", "--tasks", "0"], "at least 1"),
        (
            vec!["model", "model-isize", "--json", "/nonexistent-dir/x.json"],
            "does not exist",
        ),
    ] {
        patchbench()
            .args(&args)
            .arg("--no-store")
            .assert()
            .code(2)
            .stderr(predicates::str::contains(expect));
    }
}

#[test]
fn list_describes_both_models() {
    patchbench()
        .args(["model", "--list"])
        .assert()
        .success()
        .stdout(
            predicates::str::contains("model-setbit")
                .and(predicates::str::contains("publish-first")),
        );
}
