//! `patchbench calibrate` end to end: a few runs of the A/A corpus (tests/fixtures/corpus)
//! imported into a store under one label, then the text and JSON reports, a campaign's runs
//! by `--campaign`, and the refusal of too few runs (exit 2, saying how many and how to get
//! them).

mod common;
#[path = "common/corpus.rs"]
mod corpus;

use std::path::{Path, PathBuf};

/// The first corpus file with at least `n` runs whose runs are (`campaign`) or are not a
/// campaign's, and its documents.
fn corpus_runs(n: usize, campaign: bool) -> Option<(String, Vec<String>)> {
    corpus::files().into_iter().find_map(|(name, path)| {
        let docs = corpus::read(&path);
        let is_campaign = docs.iter().all(|(_, r)| r.campaign.is_some());
        (docs.len() >= n && is_campaign == campaign)
            .then(|| (name, docs.into_iter().map(|(line, _)| line).collect()))
    })
}

/// Imports `docs` (one file each) into `store`, under `label` when given.
fn import(dir: &Path, store: &Path, docs: &[String], label: Option<&str>) {
    let files: Vec<PathBuf> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let f = dir.join(format!("run-{i}.json"));
            std::fs::write(&f, d).unwrap();
            f
        })
        .collect();
    let mut c = common::patchbench();
    c.arg("import").arg("--store").arg(store);
    if let Some(l) = label {
        c.args(["--label", l]);
    }
    c.args(&files).assert().success();
}

fn calibrate(store: &Path, args: &[&str]) -> std::process::Output {
    common::patchbench()
        .arg("calibrate")
        .arg("--store")
        .arg(store)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn calibrate_reports_rates_from_a_label_as_text_and_json() {
    let (name, docs) = corpus_runs(6, false).expect("a corpus file of 6 plain runs or more");
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("results.db");
    import(dir.path(), &store, &docs[..6], Some("aa"));

    let out = calibrate(&store, &["--label", "aa", "--tables", "50"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{name}: {text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for want in [
        "calibrate label aa:",
        "False alarms",
        "3 v 3",
        "scores",
        "monitors",
        "By kind of row",
        "headline row:",
        "Monitor rows too sporadic to judge on this box",
    ] {
        assert!(text.contains(want), "{want:?} missing:\n{text}");
    }

    let out = calibrate(
        &store,
        &["--label", "aa", "--tables", "50", "--format", "json"],
    );
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "patchbench.calibrate/1");
    assert_eq!(doc["tables"], 50);
    let designs = doc["designs"].as_array().unwrap();
    assert_eq!(designs.len(), 6);
    let first = &designs[0];
    assert_eq!(first["label"], "3 v 3");
    assert_eq!(first["aa"]["any"]["tables"], 50);
    let r = first["aa"]["monitors"]["rate"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&r));
    assert!(first["aa"]["monitors"]["low"].as_f64().unwrap() <= r);
    // 10 v 10 needs 20 runs: said, not drawn.
    let ten = designs.iter().find(|d| d["label"] == "10 v 10").unwrap();
    assert!(ten["aa"].is_null());
    assert!(ten["skipped"].as_str().unwrap().contains("needs 20 runs"));
}

#[test]
fn calibrate_pairs_a_campaigns_rounds() {
    let Some((name, docs)) = corpus_runs(6, true) else {
        panic!("no campaign file in the corpus: record one with scripts/record-corpus.sh");
    };
    // Its first 3 rounds (6 runs), so that the tables are few and small.
    let docs: Vec<String> = docs
        .into_iter()
        .filter(|d| {
            let v: serde_json::Value = serde_json::from_str(d).unwrap();
            v["campaign"]["round"].as_u64().is_some_and(|r| r <= 3)
        })
        .collect();
    assert_eq!(docs.len(), 6, "{name}: rounds 1-3 are not 6 runs");
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("results.db");
    // The six as one JSON-lines file, as the corpus keeps them: one run a document.
    let lines = dir.path().join("rounds.jsonl");
    std::fs::write(&lines, docs.join("\n") + "\n").unwrap();
    common::patchbench()
        .args(["import", "--store"])
        .arg(&store)
        .arg(&lines)
        .assert()
        .success()
        .stdout(predicates::str::contains("rounds.jsonl (6 of 6) as run 6"));
    let campaign = serde_json::from_str::<serde_json::Value>(&docs[0]).unwrap()["campaign"]
        ["campaign"]
        .as_str()
        .unwrap()
        .to_string();
    let out = calibrate(
        &store,
        &[
            "--campaign",
            &campaign,
            "--tables",
            "50",
            "--format",
            "json",
        ],
    );
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["rounds_from"], "campaign");
    assert_eq!(doc["runs"].as_u64().unwrap() as usize, docs.len());
    let three = doc["designs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["label"] == "3 rounds")
        .unwrap();
    assert_eq!(three["aa"]["any"]["tables"], 50, "{three}");
}

#[test]
fn too_few_runs_is_one_line_with_the_count_and_how_to_get_more() {
    let (_, docs) = corpus_runs(5, false).expect("a corpus file of plain runs");
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("results.db");
    import(dir.path(), &store, &docs[..5], Some("few"));
    let out = calibrate(&store, &["--label", "few"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("at least 6"), "{err}");
    assert!(err.contains("has 5"), "{err}");
    assert!(err.contains("--label few"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn import_takes_json_lines_whole_or_not_at_all() {
    let (_, docs) = corpus_runs(2, false).expect("a corpus file of 2 plain runs or more");
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("results.db");
    let lines = dir.path().join("runs.jsonl");
    // Imports `text` as one file, which must be refused (exit 2, one line, nothing stored);
    // returns the line.
    let refused = |text: String| -> String {
        std::fs::write(&lines, text).unwrap();
        let out = common::patchbench()
            .args(["import", "--store"])
            .arg(&store)
            .arg(&lines)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!store.exists(), "a refused file stored something");
        err
    };
    // Two good documents and a third of another schema: the error names the document.
    let err = refused(format!(
        "{}\n{}\n{{\"schema\": \"other/1\"}}\n",
        docs[0], docs[1]
    ));
    assert!(err.contains("runs.jsonl (document 3)"), "{err}");
    // Broken JSON in the middle: said with its line.
    let err = refused(format!("{}\n{{\"schema\": }}\n{}\n", docs[0], docs[1]));
    assert!(
        err.contains("not valid JSON") && err.contains("line 2"),
        "{err}"
    );
}
