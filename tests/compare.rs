//! Tests of `patchbench compare`: the rule's properties on synthetic samples, and the command
//! end to end on fixture reports, a posted cover-letter table and synthetic runs (gate, zero
//! drops, bad values, index rows, incomplete runs, noise profiles, bimodal rows). The
//! calibration over many seeded tables is in `tests/calibration.rs`.

mod common;

use assert_cmd::Command;
use common::fixture;
use patchbench::compare::model::from_values;
use patchbench::compare::verdict::{judge_table, RowInput, RowKind, Rule, Settings, Verdict};
use patchbench::record::{Direction, Kind, Metric, RunRecord};
use patchbench::stats::multiplicity::bh_q_values;
use patchbench::sysinfo::SystemInfo;
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn patchbench(store: &Path) -> Command {
    let mut c = common::patchbench();
    c.env("PATCHBENCH_STORE", store);
    c
}

fn stdout(c: &mut Command) -> String {
    let out = c.output().expect("run");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A store holding the three base and three patched UnixBench reports.
fn unixbench_store() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("results.db");
    for side in ["base", "patched"] {
        let files: Vec<String> = (1..=3)
            .map(|i| fixture(&format!("ub60-{side}-{i}.txt")))
            .collect();
        patchbench(&store)
            .arg("import")
            .args(["--label", side])
            .args(&files)
            .assert()
            .success();
    }
    (dir, store)
}

/// A synthetic run: `metrics` are (test, copies, value, within-run samples).
fn run(host: &str, kernel: &str, label: &str, metrics: &[(&str, u32, f64, Vec<f64>)]) -> RunRecord {
    let system = SystemInfo {
        hostname: host.into(),
        kernel_release: kernel.into(),
        ..SystemInfo::default()
    };
    let mut config = BTreeMap::new();
    config.insert("profile".to_string(), serde_json::json!("quick"));
    let mut r = RunRecord::new(Kind::Unixbench, system, &config);
    r.label = Some(label.into());
    r.metrics = metrics
        .iter()
        .map(|(test, copies, value, samples)| {
            Metric::new(
                "unixbench.score",
                &[("test", test.to_string()), ("copies", copies.to_string())],
                test.to_string(),
                "lps",
                Direction::HigherIsBetter,
                *value,
                samples.clone(),
            )
        })
        .collect();
    r
}

/// Writes runs as JSON files; returns them joined by commas (one side).
fn side_files(dir: &Path, name: &str, runs: &[RunRecord]) -> String {
    runs.iter()
        .enumerate()
        .map(|(i, r)| {
            let p = dir.join(format!("{name}-{i}.json"));
            std::fs::write(&p, r.to_json().expect("json")).expect("write");
            p.display().to_string()
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Runs of one metric `pipe` at 1 copy with the given values.
fn pipe_runs(label: &str, values: &[f64]) -> Vec<RunRecord> {
    values
        .iter()
        .map(|v| run("h", "k", label, &[("pipe", 1, *v, vec![])]))
        .collect()
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).expect("json")
}

fn row<'a>(v: &'a serde_json::Value, key: &str) -> &'a serde_json::Value {
    v["rows"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["key"] == key))
        .unwrap_or_else(|| panic!("no row {key}"))
}

// ---- the rule, on synthetic rows ----

fn judge_one(b: &[f64], n: &[f64], direction: Direction, s: &Settings) -> Verdict {
    let (b, n) = (from_values(b, 0), from_values(n, b.len()));
    let row = RowInput {
        base: &b,
        new: &n,
        direction,
        base_profile: None,
        new_profile: None,
        names: ("base", "patched"),
        cause: None,
        pairs: None,
        kind: RowKind::Score,
    };
    judge_table(&[row], s).remove(0).verdict
}

fn positive_samples() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(50.0f64..150.0, 2..12)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn verdict_is_symmetric_under_swap_with_direction_flipped(
        a in positive_samples(), b in positive_samples(), shift in -0.1f64..0.1,
    ) {
        let b: Vec<f64> = b.iter().map(|v| v * (1.0 + shift)).collect();
        for rule in [Rule::Welch, Rule::Lkp] {
            let s = Settings { rule, ..Settings::default() };
            prop_assert_eq!(
                judge_one(&a, &b, Direction::HigherIsBetter, &s),
                judge_one(&b, &a, Direction::LowerIsBetter, &s)
            );
        }
    }

    #[test]
    fn interval_holds_the_point_and_p_is_a_probability(a in positive_samples(), b in positive_samples()) {
        let (x, y) = (from_values(&a, 0), from_values(&b, a.len()));
        let row = RowInput {
            base: &x, new: &y, direction: Direction::HigherIsBetter, base_profile: None,
            new_profile: None, names: ("a", "b"), cause: None, pairs: None,
            kind: RowKind::Score,
        };
        let j = judge_table(&[row], &Settings::default()).remove(0);
        let e = j.estimate.unwrap();
        prop_assert!(e.lower_pct <= e.point_pct && e.point_pct <= e.upper_pct);
        prop_assert!((0.0..=1.0).contains(&e.p));
    }
}

// ---- the command, end to end ----

#[test]
fn json_has_runs_intervals_q_values_and_settings() {
    let (_d, store) = unixbench_store();
    let v = json(&stdout(
        patchbench(&store).args(["compare", "base", "patched", "--format", "json"]),
    ));
    assert_eq!(v["settings"]["rule"], "welch");
    assert_eq!(v["settings"]["confidence"], 0.9);
    assert_eq!(v["warnings"].as_array().map(Vec::len), Some(0));
    let pipe = row(&v, "unixbench.score[copies=2,test=pipe]");
    assert_eq!(pipe["base"]["n"], 3);
    assert_eq!(pipe["base"]["values"].as_array().map(Vec::len), Some(3));
    assert_eq!(pipe["verdict"], "improved");
    let e = &pipe["estimate"];
    assert!(e["lower_pct"].as_f64().unwrap() > 1.0, "{e}");
    assert!(e["q"].as_f64().unwrap() < 0.05, "{e}");
    assert_eq!(
        row(&v, "unixbench.score[copies=2,test=shell8]")["verdict"],
        "regressed"
    );
    let index = row(&v, "unixbench.index[copies=1]");
    assert_eq!(index["verdict"], "no-change");
    assert_eq!(index["primary"], true);
    // The interval is exp(mean ln patched − mean ln base) − 1: check the point by hand.
    let ln_mean = |side: &str| {
        let s = pipe[side]["values"].as_array().unwrap();
        s.iter().map(|x| x.as_f64().unwrap().ln()).sum::<f64>() / s.len() as f64
    };
    let point = 100.0 * ((ln_mean("patched") - ln_mean("base")).exp() - 1.0);
    assert!((e["point_pct"].as_f64().unwrap() - point).abs() < 1e-9);
    // q-values are Benjamini–Hochberg over every row's p.
    let rows = v["rows"].as_array().unwrap();
    let p: Vec<f64> = rows
        .iter()
        .map(|r| r["estimate"]["p"].as_f64().unwrap())
        .collect();
    for (r, q) in rows.iter().zip(bh_q_values(&p)) {
        assert!((r["estimate"]["q"].as_f64().unwrap() - q).abs() < 1e-12);
    }
    assert_eq!(v["family"]["rows"], 26);
    assert_eq!(v["family"]["flagged"], 2);
}

#[test]
fn every_format_prints_the_interval_p_q_and_n() {
    let (_d, store) = unixbench_store();
    let out = |fmt: &str| {
        stdout(patchbench(&store).args(["compare", "base", "patched", "--format", fmt]))
    };
    let ub = out("unixbench");
    assert!(
        ub.contains("System Benchmarks Index Values (1 parallel copy) | n |"),
        "{ub}"
    );
    assert!(ub.contains(" 90% CI |") && ub.contains("p, q"), "{ub}");
    let pipe = ub
        .lines()
        .filter(|l| l.starts_with("Pipe Throughput"))
        .nth(1)
        .unwrap();
    assert!(
        pipe.contains("[+3.0% +4.2% +5.4%]") && pipe.contains("improved"),
        "{pipe}"
    );
    assert!(ub.contains("False flags: 2 of 26 rows flagged"), "{ub}");
    assert!(
        ub.contains("Primary: System Benchmarks Index Score [copies=1]"),
        "{ub}"
    );
    assert!(ub.contains("runs a side for 1%"), "{ub}");
    let lkp = out("lkp");
    assert!(
        lkp.contains("         %stddev     %change         %stddev"),
        "{lkp}"
    );
    assert!(
        lkp.contains("unixbench.score[copies=2,test=pipe]  [+3.0% +4.2% +5.4%] (p=0.0020 q=0.049 n=3+3) improved"),
        "{lkp}"
    );
    let inline = out("inline");
    assert!(
        inline.contains("Pipe Throughput [copies=2]: +4.2% (2981274 -> 3105707) [+3.0% +4.2% +5.4%] (p=0.0020 q=0.049 n=3+3)"),
        "{inline}"
    );
    let md = out("markdown");
    assert!(
        md.contains(" 90% CI |") && md.contains("**System Benchmarks Index Score"),
        "{md}"
    );
    let csv = out("csv");
    let header = csv.lines().next().unwrap();
    for col in [
        "ci_low_pct",
        "p_value",
        "q_value",
        "holm_p",
        "mde_pct",
        "runs_for_2pct",
    ] {
        assert!(header.contains(col), "{header}");
    }
}

#[test]
fn the_gate_exits_1_on_a_real_regression_and_on_a_patched_side_whose_runs_failed() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("none.db");
    let base = side_files(
        d.path(),
        "b",
        &pipe_runs("b", &[1000.0, 1004.0, 996.0, 1002.0, 998.0]),
    );
    let same = side_files(
        d.path(),
        "s",
        &pipe_runs("s", &[1001.0, 997.0, 1003.0, 999.0, 1000.0]),
    );
    let down = side_files(
        d.path(),
        "d",
        &pipe_runs("d", &[950.0, 954.0, 946.0, 952.0, 948.0]),
    );
    let zero = side_files(d.path(), "z", &pipe_runs("z", &[0.0, 0.0, 0.0, 0.0, 0.0]));
    patchbench(&store)
        .args(["compare", &base, &same, "--fail-on-regression", "2"])
        .assert()
        .code(0);
    patchbench(&store)
        .args(["compare", &base, &down, "--fail-on-regression", "2"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "regression beyond 2%: pipe [copies=1] -5.00%",
        ));
    // -5 % is not beyond a 10 % gate.
    patchbench(&store)
        .args(["compare", &base, &down, "--fail-on-regression", "10"])
        .assert()
        .code(0);
    let out = patchbench(&store)
        .args([
            "compare",
            &base,
            &zero,
            "--fail-on-regression",
            "50",
            "--format",
            "inline",
        ])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "gate: pipe [copies=1]: failed in 5 of 5 runs of patched; a failed run is not a \
             measurement, and a workload that fails on the patched side fails the gate",
        ))
        .get_output()
        .stdout
        .clone();
    // A workload that failed in every run of a side (a score of 0) is said, not judged: no
    // certain drop; a CI gate fails on it all the same (a failed patched workload must not
    // pass CI).
    let out = String::from_utf8_lossy(&out);
    assert!(
        out.contains("-100.0% (1000 -> 0.000)") && out.contains("no verdict"),
        "{out}"
    );
    let row = out
        .lines()
        .find(|l| l.starts_with("pipe [copies=1]: -100.0%"))
        .unwrap_or_default();
    assert!(row.ends_with("no verdict"), "{out}");
    assert!(out.contains("failed in 5 of 5 runs of patched"), "{out}");
    assert!(!store.exists(), "comparing files must not create a store");
}

#[test]
fn one_run_per_side_gives_numbers_within_run_spread_and_what_is_needed() {
    let d = tempfile::tempdir().unwrap();
    let b = run(
        "h",
        "k",
        "b",
        &[("pipe", 1, 1000.0, vec![990.0, 1000.0, 1010.0])],
    );
    let p = run(
        "h",
        "k",
        "p",
        &[("pipe", 1, 1030.0, vec![1020.0, 1030.0, 1040.0])],
    );
    let (b, p) = (
        side_files(d.path(), "b", &[b]),
        side_files(d.path(), "p", &[p]),
    );
    let out = stdout(
        patchbench(&d.path().join("none.db")).args(["compare", &b, &p, "--format", "inline"]),
    );
    assert!(
        out.contains("pipe [copies=1]: +3.0% (1000 -> 1030) - (n=1+1)"),
        "{out}"
    );
    assert!(out.contains("no verdict"), "{out}");
    assert!(out.contains("at least 2 runs a side are needed"), "{out}");
    assert!(out.contains("note: one run per side: no verdict"), "{out}");
    // The passes are shown as within-run spread, not used.
    assert!(out.contains("±0.99% ×3"), "{out}");
    // The AIM7 pair of the old test: numbers, no verdict.
    let out = stdout(
        patchbench(&d.path().join("none.db"))
            .args([
                "compare",
                &fixture("aim7-base/creat-clo.txt"),
                &fixture("aim7-patched/creat-clo.txt"),
            ])
            .args(["--format", "inline"]),
    );
    assert!(
        out.contains("jobs/min [load=3000]: +3.3% (15431 -> 15936)"),
        "{out}"
    );
    assert!(out.contains("no verdict"), "{out}");
}

#[test]
fn a_posted_table_imports_as_two_runs_and_compares_to_the_digit() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("results.db");
    let letter = fixture("posted-cover-letter.txt");
    patchbench(&store)
        .args(["import", &letter])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "as run 1 (label base, 26 metrics)",
        ))
        .stdout(predicates::str::contains(
            "as run 2 (label patched, 26 metrics)",
        ));
    let out = stdout(patchbench(&store).args(["compare", "base", "patched"]));
    // Every row's cmp, as posted, to the digit.
    let posted = std::fs::read_to_string(&letter).unwrap();
    let cells = |l: &str| -> Vec<String> { l.split('|').map(|c| c.trim().to_string()).collect() };
    let mut checked = 0;
    let is_row = |l: &&str| {
        let c = cells(l);
        c.len() == 5 && c[3].ends_with('%')
    };
    let mut ours = out.lines().filter(is_row);
    for line in posted.lines().filter(is_row) {
        let want = cells(line);
        let got = cells(ours.next().expect("a row per posted row"));
        assert_eq!(
            (&got[1], &got[2], &got[3]),
            (&want[1], &want[2], &want[3]),
            "{line}"
        );
        checked += 1;
    }
    assert_eq!(checked, 26);
    assert!(
        out.contains("26 rows: no verdict: 1 run of base, 1 of patched"),
        "{out}"
    );
    // Given as a side, the file says how to use it.
    patchbench(&store)
        .args(["compare", &letter, "patched"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "posted comparison table holds two sides",
        ));
    // Our own table reads back the same.
    let own = d.path().join("own.txt");
    std::fs::write(&own, &out).unwrap();
    let store2 = d.path().join("again.db");
    patchbench(&store2)
        .args(["import", own.to_str().unwrap()])
        .assert()
        .success();
    let again = stdout(patchbench(&store2).args(["compare", "base", "patched"]));
    assert_eq!(again, out);
}

#[test]
fn bad_posted_tables_are_one_line_errors_and_store_nothing() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("results.db");
    let letter = std::fs::read_to_string(fixture("posted-cover-letter.txt")).unwrap();
    let cases = [
        (
            "| 779.15    | 758.56    |",
            "| 779.15    | NaN       |",
            "Pipe Throughput: the value NaN",
        ),
        (
            "| 779.15    | 758.56    |",
            "| 758.56    | 779.15    |",
            "are the columns swapped",
        ),
        (
            "| 779.15    | 758.56    |",
            "| -779.15   | 758.56    |",
            "not a finite number ≥ 0",
        ),
    ];
    for (from, to, message) in cases {
        let f = d.path().join("bad.txt");
        std::fs::write(&f, letter.replacen(from, to, 1)).unwrap();
        let out = patchbench(&store)
            .args(["import", f.to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("bad.txt:22:") && err.contains(message),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!store.exists(), "nothing stored");
    }
}

#[test]
fn a_negative_value_is_refused_by_import_and_named_by_compare() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("results.db");
    let b = side_files(d.path(), "b", &pipe_runs("b", &[1000.0, 1001.0]));
    let bad = side_files(d.path(), "p", &pipe_runs("p", &[1000.0, -3.0]));
    // The store never takes it: the file is refused whole, naming file and metric.
    let out = patchbench(&store)
        .args(["import", "--label", "p"])
        .args(bad.split(','))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("p-1.json") && err.contains("unixbench.score[copies=1,test=pipe]"),
        "{err}"
    );
    // Given to compare as a file, it is an error naming the metric and the run.
    let out = patchbench(&store)
        .args(["compare", &b, &bad])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("metric unixbench.score[copies=1,test=pipe] has the value -3"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn full_and_partial_indexes_never_share_a_row_and_incomplete_runs_are_left_out() {
    let (_d, store) = unixbench_store();
    // A partial run (two tests) labelled base, and an interrupted run labelled patched.
    let d = tempfile::tempdir().unwrap();
    let mut partial =
        RunRecord::from_json(&stdout(patchbench(&store).args(["export", "1"]))).unwrap();
    partial
        .tests
        .retain(|t| t.test == "pipe" || t.test == "syscall");
    partial.metrics.retain(|m| {
        m.params
            .get("test")
            .is_none_or(|t| t == "pipe" || t == "syscall")
    });
    partial.indexes.clear();
    // New runs made from run 1's document: each its own UUID (a store keeps a run once).
    partial.uuid = None;
    let mut cut = partial.clone();
    cut.incomplete = true;
    let files = side_files(d.path(), "x", &[partial, cut]);
    let (p1, p2) = files.split_once(',').unwrap();
    patchbench(&store)
        .args(["import", "--label", "base", p1])
        .assert()
        .success();
    patchbench(&store)
        .args(["import", "--label", "patched", p2])
        .assert()
        .success();
    let v = json(&stdout(
        patchbench(&store).args(["compare", "base", "patched", "--format", "json"]),
    ));
    let full = row(&v, "unixbench.index[copies=1]");
    assert_eq!(
        (full["base"]["n"].as_u64(), full["patched"]["n"].as_u64()),
        (Some(3), Some(3))
    );
    let part = row(&v, "unixbench.index[copies=1,partial=pipe+syscall]");
    assert_eq!(part["base"]["n"], 1);
    assert!(part["patched"].is_null());
    assert_eq!(part["primary"], false);
    assert!(
        v["notes"][0]
            .as_str()
            .unwrap()
            .contains("left out 1 incomplete run of patched"),
        "{}",
        v["notes"]
    );
    let v = json(&stdout(patchbench(&store).args([
        "compare",
        "base",
        "patched",
        "--format",
        "json",
        "--include-incomplete",
    ])));
    assert_eq!(
        row(&v, "unixbench.index[copies=1,partial=pipe+syscall]")["patched"]["n"],
        1
    );
}

#[test]
fn a_side_with_one_run_borrows_the_noise_profile_of_its_host_kernel_and_settings() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("results.db");
    let mut all = Vec::new();
    for (label, kernel, values) in [
        ("old-a", "k1", vec![1000.0, 1003.0, 998.0, 1001.0]),
        ("old-b", "k1", vec![1004.0, 1001.0, 999.0]),
        ("base", "k1", vec![1000.0]),
        ("new-a", "k2", vec![950.0, 953.0, 948.0, 951.0]),
        ("patched", "k2", vec![950.0]),
    ] {
        for v in values {
            all.push(run("box", kernel, label, &[("pipe", 1, v, vec![])]));
        }
    }
    for (i, r) in all.iter().enumerate() {
        let f = d.path().join(format!("r{i}.json"));
        std::fs::write(&f, r.to_json().unwrap()).unwrap();
        patchbench(&store)
            .args(["import", f.to_str().unwrap()])
            .assert()
            .success();
    }
    let v = json(&stdout(
        patchbench(&store).args(["compare", "base", "patched", "--format", "json"]),
    ));
    let pipe = row(&v, "unixbench.score[copies=1,test=pipe]");
    assert_eq!(pipe["verdict"], "regressed", "{pipe}");
    assert_eq!(
        pipe["estimate"]["borrowed"],
        serde_json::json!(["base", "patched"])
    );
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("noise profile of 8 runs of host box, kernel k1"),
        "{notes}"
    );
    let off = json(&stdout(patchbench(&store).args([
        "compare",
        "base",
        "patched",
        "--format",
        "json",
        "--no-profile",
    ])));
    assert_eq!(
        row(&off, "unixbench.score[copies=1,test=pipe]")["verdict"],
        "no-verdict"
    );
}

#[test]
fn context_switching_in_two_modes_is_bimodal_with_its_cause() {
    let d = tempfile::tempdir().unwrap();
    let mk = |label: &str, vals: &[f64]| -> Vec<RunRecord> {
        vals.iter()
            .map(|v| {
                run(
                    "h",
                    "k",
                    label,
                    &[
                        ("context1", 1, *v, vec![]),
                        ("pipe", 1, 1000.0 + v / 1e4, vec![]),
                    ],
                )
            })
            .collect()
    };
    let b = side_files(
        d.path(),
        "b",
        &mk(
            "b",
            &[
                251_000.0, 16_200.0, 248_500.0, 15_900.0, 16_400.0, 252_300.0,
            ],
        ),
    );
    let p = side_files(
        d.path(),
        "p",
        &mk(
            "p",
            &[16_000.0, 249_000.0, 16_300.0, 250_100.0, 15_800.0, 16_100.0],
        ),
    );
    let out = stdout(
        patchbench(&d.path().join("none.db")).args(["compare", &b, &p, "--format", "inline"]),
    );
    assert!(
        out.contains("context1 [copies=1]:") && out.contains("bimodal"),
        "{out}"
    );
    assert!(
        out.contains("runs of base fall into two groups, 3 near 16165 and 3 near 250595"),
        "{out}"
    );
    assert!(out.contains("pinning the run to one CPU"), "{out}");
}

#[test]
fn the_lkp_rule_prints_its_false_alarm_rate() {
    let (_d, store) = unixbench_store();
    let out = stdout(patchbench(&store).args([
        "compare", "base", "patched", "--rule", "lkp", "--format", "lkp",
    ]));
    assert!(
        out.contains("the lkp rule flags a row 20.0% of the time at 3+3 runs, so a table of this size shows at least one flag 99.7% of the time"),
        "{out}"
    );
    assert!(out.contains("not flagged"), "{out}");
}

#[test]
fn differences_between_the_sides_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let out = stdout(patchbench(&dir.path().join("none.db")).args([
        "compare",
        &fixture("ub513-base.txt"),
        &fixture("ub60-patched-1.txt"),
    ]));
    let first = out.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("warning: not comparable: config.unixbench_version differs"),
        "{out}"
    );
}

#[test]
fn unknown_label_is_a_clear_error() {
    let (_d, store) = unixbench_store();
    patchbench(&store)
        .args(["compare", "base", "nosuch"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no runs labelled \"nosuch\""))
        .stderr(predicates::str::contains("labels there: base, patched"));
}

/// A run of `pipe` whose fingerprint holds a noise check with the given warnings (source,
/// value).
fn noisy_pipe_run(label: &str, value: f64, warnings: &[(&str, &str)]) -> RunRecord {
    use patchbench::noise::{Finding, Kind as NoiseKind, NoiseReport, SCHEMA};
    let mut r = run("h", "k", label, &[("pipe", 1, value, vec![])]);
    let mut findings = vec![Finding::ok(
        "smt",
        "SMT (hyper-threads)",
        NoiseKind::Setting,
        "off",
    )];
    findings.extend(
        warnings
            .iter()
            .map(|(source, value)| Finding::warn("x", source, NoiseKind::Activity, *value, "fix")),
    );
    r.system.noise = Some(NoiseReport {
        schema: SCHEMA.into(),
        sample_secs: 0.25,
        dir: "/tmp".into(),
        findings,
        activity: None,
    });
    r
}

#[test]
fn a_side_that_ran_with_noise_check_warnings_is_named_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let base = side_files(
        dir.path(),
        "b",
        &[
            noisy_pipe_run("base", 100.0, &[("cpufreq governor", "powersave")]),
            noisy_pipe_run(
                "base",
                101.0,
                &[
                    ("cpufreq governor", "powersave"),
                    ("hypervisor steal", "4.0% of CPU time"),
                ],
            ),
            noisy_pipe_run("base", 99.0, &[]),
        ],
    );
    let patched = side_files(
        dir.path(),
        "p",
        &[
            noisy_pipe_run("patched", 100.0, &[]),
            noisy_pipe_run("patched", 100.5, &[]),
        ],
    );
    let store = dir.path().join("none.db");
    let text = stdout(patchbench(&store).args(["compare", "--format", "inline", &base, &patched]));
    let line = text
        .lines()
        .find(|l| l.starts_with("warning: noise: "))
        .unwrap_or_else(|| panic!("no noise warning: {text}"));
    assert!(
        line.contains(
            ": 2 of 3 runs ran with noise-check warnings: cpufreq governor: powersave (runs "
        ),
        "{line}"
    );
    assert!(
        line.contains("hypervisor steal: 4.0% of CPU time (run "),
        "{line}"
    );
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("warning: noise: "))
            .count(),
        1,
        "the quiet side has no warning: {text}"
    );
    // JSON carries them per side with each run's value; csv and json say them on stderr.
    let out = patchbench(&store)
        .args(["compare", "--format", "json", &base, &patched])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning: noise: "));
    let v = json(&String::from_utf8_lossy(&out.stdout));
    let noise = &v["noise"][0];
    assert_eq!(noise["runs"], 3);
    assert_eq!(noise["checked"], 3);
    assert_eq!(noise["warned"], 2);
    assert_eq!(noise["warnings"][0]["source"], "cpufreq governor");
    assert_eq!(
        noise["warnings"][0]["values"],
        serde_json::json!(["powersave", "powersave"])
    );
    assert_eq!(noise["warnings"][1]["runs"].as_array().unwrap().len(), 1);
    assert!(noise["line"].as_str().unwrap().contains("2 of 3 runs"));
    assert_eq!(v["noise"][1]["warned"], 0);
    assert!(v["noise"][1]["line"].is_null());
    let html = stdout(patchbench(&store).args(["compare", "--format", "html", &base, &patched]));
    assert!(html.contains("warning: noise: "), "the page's warnings");
    assert!(html.contains("<li>run ") && html.contains("4.0% of CPU time"));
}

#[test]
fn the_same_runs_on_both_sides_are_said_to_be_the_same() {
    let (_dir, store) = unixbench_store();
    let text = stdout(patchbench(&store).args(["compare", "base", "base", "--format", "lkp"]));
    assert!(
        text.contains("note: the two sides are the same runs (1, 2, 3)"),
        "{text}"
    );
    let text = stdout(patchbench(&store).args(["compare", "1,4", "1,2", "--format", "lkp"]));
    assert!(text.contains("note: 1 run is on both sides (1)"), "{text}");
    let text = stdout(patchbench(&store).args(["compare", "base", "patched", "--format", "lkp"]));
    assert!(
        !text.contains("on both sides") && !text.contains("same runs"),
        "{text}"
    );
}

#[test]
fn a_noise_band_or_limit_beyond_100_percent_is_refused() {
    let (_dir, store) = unixbench_store();
    for args in [
        ["--noise", "1e308"],
        ["--fail-on-regression", "1e308"],
        ["--noise", "101"],
        ["--plan", "1e308"],
    ] {
        let out = patchbench(&store)
            .args(["compare", "base", "patched"])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("give a percentage from 0 to"),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty());
        assert!(
            err.lines().all(|l| l.len() < 300),
            "no 300-digit number: {err}"
        );
    }
    let text = stdout(patchbench(&store).args([
        "compare", "base", "patched", "--noise", "100", "--format", "lkp",
    ]));
    assert!(
        text.lines().all(|l| l.len() < 1000),
        "no endless number: {text}"
    );
}
