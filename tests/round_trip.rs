//! Everything a run stores can be exported and imported back, a property over every kind of
//! run: proptest makes random runs through the builders the commands use (UnixBench test
//! results combined from random passes and copies, AIM7 load points, will-it-scale points,
//! the two models' points), exports each as `patchbench export` does (`RunRecord::to_json`)
//! and imports the file as `patchbench import` does; the imported run must equal the run
//! (its `source` aside, which names the file). A UnixBench run's report (`show --report`) must
//! import back too, with every score and index as the report prints it.
//!
//! Through the binary: `run --copies 1,1` (which stored one metric twice, so that neither its
//! export nor its report could be imported back) is refused with one line, as are
//! `aim7 --load 1,1` and a testcase given twice to `scale`, and a real `run` at two copy counts
//! survives export and import.

mod common;

use patchbench::counter_harness::Mode;
use patchbench::import::{import_file, ImportOptions};
use patchbench::record::aim7::{Aim7Details, Aim7Point, Aim7Run, Figures};
use patchbench::record::will_it_scale::{ScaleDetails, ScalePoint};
use patchbench::record::{CopySample, Kind, RunRecord};
use patchbench::sysinfo::SystemInfo;
use patchbench::unixbench::runner::{record as ub, scoring};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The system fingerprint of every generated run (collected once).
fn system() -> SystemInfo {
    static SYSTEM: OnceLock<SystemInfo> = OnceLock::new();
    SYSTEM.get_or_init(SystemInfo::collect).clone()
}

/// A run's passes: for each (test, copy count), the passes, each with every copy's count
/// and time.
type Passes = Vec<Vec<(f64, f64)>>;

/// A UnixBench run: distinct tests, distinct copy counts, per (copies, test) its passes.
fn unixbench_run() -> impl Strategy<Value = RunRecord> {
    let all: Vec<&'static str> = patchbench::unixbench::catalog::select("all")
        .unwrap()
        .into_iter()
        .map(|t| t.id)
        .collect();
    (
        proptest::sample::subsequence(all, 1..=4),
        proptest::sample::subsequence((1u32..=8).collect::<Vec<_>>(), 1..=3),
        proptest::collection::vec(
            proptest::collection::vec((1.0f64..1e9, 0.5f64..30.0), 1..=4),
            1..=4,
        ),
    )
        .prop_map(|(tests, copies, passes): (Vec<&str>, Vec<u32>, Passes)| {
            let mut r = RunRecord::new(Kind::Unixbench, system(), &());
            for &c in &copies {
                ub::begin_block(&mut r, c);
                for &id in &tests {
                    let spec = patchbench::unixbench::catalog::find(id).unwrap();
                    let pass_results = passes
                        .iter()
                        .enumerate()
                        .map(|(i, samples)| {
                            let copies: Vec<CopySample> = (0..c)
                                .map(|k| {
                                    let (count, seconds) = samples[k as usize % samples.len()];
                                    CopySample {
                                        copy: k,
                                        count,
                                        seconds,
                                        wall_seconds: seconds,
                                        rate: count / seconds,
                                        window: None,
                                        stderr_bytes: 0,
                                    }
                                })
                                .collect();
                            scoring::combine_copies(i as u32 + 1, copies, spec.timebase)
                        })
                        .collect();
                    let result = scoring::combine_passes(spec, c, 10.0, pass_results);
                    ub::add_test(&mut r, result);
                }
                ub::end_block(&mut r, c);
            }
            ub::finish(&mut r);
            r
        })
}

/// An AIM7 run: distinct loads of one test, each with its runs' figures.
fn aim7_run() -> impl Strategy<Value = RunRecord> {
    let tests = vec!["creat-clo", "disk_rr", "sieve", "fork_test", "add_long"];
    (
        proptest::sample::select(tests),
        proptest::sample::subsequence((1u32..=40).collect::<Vec<_>>(), 1..=3),
        proptest::collection::vec((1.0f64..1e6, 0i64..=100, 0.01f64..100.0), 1..=3),
    )
        .prop_map(|(test, loads, runs)| {
            let points = loads
                .iter()
                .map(|&load| Aim7Point {
                    test: test.to_string(),
                    load,
                    jobs_per_task: 100,
                    disk_blocks: 0,
                    tests: vec![test.to_string()],
                    factor: None,
                    units: None,
                    factor_is_disk_blocks: false,
                    crossover: false,
                    runs: runs
                        .iter()
                        .enumerate()
                        .map(|(i, &(jpm, jti, real))| Aim7Run {
                            run: i + 1,
                            figures: Figures {
                                tasks: load,
                                jobs_per_min: jpm,
                                jti,
                                jobs_per_min_per_task: jpm / f64::from(load),
                                real,
                                cpu: real / 2.0,
                            },
                            park_seconds: 0.01,
                            counters: BTreeMap::new(),
                            jobs: Vec::new(),
                            log_lines: 0,
                            leftover_files: 0,
                            task_max_rss_kib: 1000,
                            task0_private_kib: 100,
                            task0_pss_kib: 200,
                            driver_max_rss_kib: 3000,
                            completion_seconds: (0..load)
                                .map(|t| real * f64::from(t + 1) / f64::from(load))
                                .collect(),
                            noise: None,
                        })
                        .collect(),
                })
                .collect();
            let mut r = RunRecord::new(Kind::Aim7, system(), &());
            r.aim7 = Some(Aim7Details {
                points,
                filesystems: Vec::new(),
            });
            patchbench::aim7::update_metrics(&mut r);
            r
        })
}

/// A will-it-scale run: distinct testcases, task counts and modes, with samples.
fn scale_run() -> impl Strategy<Value = RunRecord> {
    let names: Vec<&'static str> = patchbench::will_it_scale::testcases::ALL
        .iter()
        .map(|t| t.name)
        .collect();
    (
        proptest::sample::subsequence(names, 1..=2),
        proptest::sample::subsequence((1usize..=8).collect::<Vec<_>>(), 1..=3),
        proptest::sample::subsequence(vec![Mode::Process, Mode::Thread], 1..=2),
        proptest::collection::vec(1.0f64..1e9, 1..=5),
        any::<bool>(),
    )
        .prop_map(|(tests, tasks, modes, samples, counters)| {
            let mut r = RunRecord::new(Kind::WillItScale, system(), &());
            for t in &tests {
                for &n in &tasks {
                    for &mode in &modes {
                        let mean = samples.iter().sum::<f64>() / samples.len() as f64;
                        let p = ScalePoint {
                            test: t.to_string(),
                            description: String::new(),
                            mode: mode.plural().to_string(),
                            tasks: n,
                            ops_per_sec: mean,
                            ops_per_sec_per_task: mean / n as f64,
                            idle_percent: Some(1.0),
                            measured_idle_percent: Some(1.0),
                            measured_seconds: samples.len() as f64,
                            samples: samples.clone(),
                            warmup_samples: Vec::new(),
                            per_task_ops: vec![mean as u64; n],
                            counters_per_op: counters
                                .then(|| BTreeMap::from([("cycles".to_string(), 120.5)])),
                            noise: None,
                        };
                        r.metrics
                            .extend(patchbench::will_it_scale::point_metrics(&p));
                        r.will_it_scale
                            .get_or_insert_with(ScaleDetails::default)
                            .points
                            .push(p);
                    }
                }
            }
            r
        })
}

/// A model run (setbit or isize): distinct task counts and modes.
fn model_run() -> impl Strategy<Value = RunRecord> {
    use patchbench::model::{isize, setbit};
    (
        any::<bool>(),
        proptest::sample::subsequence((1usize..=8).collect::<Vec<_>>(), 1..=3),
        proptest::sample::subsequence(vec![Mode::Process, Mode::Thread], 1..=2),
        proptest::collection::vec(1.0f64..1e9, 1..=4),
        0u64..1000,
    )
        .prop_map(|(is_setbit, tasks, modes, rates, violations)| {
            let mut r = RunRecord::new(Kind::Model, system(), &());
            let mean = rates.iter().sum::<f64>() / rates.len() as f64;
            for &n in &tasks {
                for &mode in &modes {
                    if is_setbit {
                        for v in [setbit::Variant::Always, setbit::Variant::TestFirst] {
                            r.metrics
                                .push(setbit::point_metric(v, n, mode, mean, rates.clone()));
                        }
                        r.metrics.push(setbit::ratio_metric(n, mode, 1.5));
                    } else {
                        for v in [
                            isize::Variant::Fence,
                            isize::Variant::Acquire,
                            isize::Variant::Seqcount,
                            isize::Variant::PublishFirst,
                        ] {
                            let s = isize::Result1 {
                                reader_rate: mean,
                                writer_rate: mean / 3.0,
                                reads: 1 + mean as u64,
                                violations: if v == isize::Variant::PublishFirst {
                                    violations
                                } else {
                                    0
                                },
                            };
                            r.metrics.extend(isize::point_metrics(
                                v,
                                n,
                                mode,
                                &s,
                                rates.clone(),
                                rates.clone(),
                            ));
                        }
                    }
                }
            }
            r
        })
}

/// Exports `r` as `patchbench export` does and imports the file as `patchbench import` does.
fn export_and_import(r: &RunRecord) -> Result<RunRecord, TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("export.json");
    std::fs::write(&file, r.to_json().unwrap()).unwrap();
    import_file(&file, &ImportOptions::default())
        .map_err(|e| TestCaseError::fail(format!("the export does not import back: {e:#}")))
}

fn same_but_source(r: &RunRecord) -> Result<(), TestCaseError> {
    let back = export_and_import(r)?;
    let expected = RunRecord {
        source: back.source.clone(),
        ..r.clone()
    };
    prop_assert_eq!(back, expected);
    Ok(())
}

/// 48 cases per kind (about a second); `PATCHBENCH_ROUNDTRIP_CASES=N` runs more.
fn config() -> Config {
    Config {
        cases: std::env::var("PATCHBENCH_ROUNDTRIP_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(48),
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn a_unixbench_run_exports_and_imports_back(r in unixbench_run()) {
        same_but_source(&r)?;
    }

    #[test]
    fn a_unixbench_runs_report_imports_back(r in unixbench_run()) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("report.txt");
        std::fs::write(&file, patchbench::report::unixbench_text::render(&r)).unwrap();
        let back = import_file(&file, &ImportOptions::default())
            .map_err(|e| TestCaseError::fail(format!("the report does not import back: {e:#}")))?;
        let key = |m: &patchbench::record::Metric| m.key();
        let mut want: Vec<String> = r.metrics.iter().map(key).collect();
        let mut got: Vec<String> = back.metrics.iter().map(key).collect();
        want.sort();
        got.sort();
        prop_assert_eq!(&got, &want);
        for m in &r.metrics {
            let b = back.metrics.iter().find(|b| b.key() == m.key()).unwrap();
            // The report prints every score and index with one decimal.
            let printed: f64 = format!("{:.1}", m.value).parse().unwrap();
            prop_assert!(
                (b.value - printed).abs() <= 1e-9 * printed.abs().max(1.0),
                "{}: {} imported as {}", m.key(), m.value, b.value
            );
        }
    }

    #[test]
    fn an_aim7_run_exports_and_imports_back(r in aim7_run()) {
        same_but_source(&r)?;
    }

    #[test]
    fn a_will_it_scale_run_exports_and_imports_back(r in scale_run()) {
        same_but_source(&r)?;
    }

    #[test]
    fn a_model_run_exports_and_imports_back(r in model_run()) {
        same_but_source(&r)?;
    }
}

#[test]
fn a_repeated_copy_count_load_or_testcase_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    let cases: [(&[&str], &str); 3] = [
        (
            &["run", "syscall", "--copies", "1,1", "--passes", "1"],
            "copy count 1 is given twice",
        ),
        (
            &["aim7", "creat-clo", "--load", "1,2,1", "--no-start-delay"],
            "load 1 is given twice",
        ),
        (
            &["scale", "getppid1,getppid1", "--tasks", "1"],
            "testcase getppid1 is given twice",
        ),
    ];
    for (args, want) in cases {
        let out = common::patchbench_with_store(&store)
            .args(args)
            .arg("--dir")
            .arg(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        // One line says it (clap adds its `--help` hint to a value it refuses).
        assert_eq!(
            err.lines().filter(|l| l.contains("error")).count(),
            1,
            "{args:?}: {err}"
        );
        assert!(!store.exists(), "{args:?}: nothing was stored");
    }
}

#[test]
fn a_real_run_at_two_copy_counts_survives_export_and_import() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    let out = common::patchbench_with_store(&a)
        .args(["run", "syscall", "--copies", "2,1", "--passes", "1"])
        .args(["--duration", "0.3", "--no-settle", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (what, args) in [
        ("export", vec!["export", "1", "-o"]),
        ("report", vec!["show", "1", "--report"]),
    ] {
        let file = dir.path().join(what);
        let mut c = common::patchbench_with_store(&a);
        c.args(&args);
        if what == "export" {
            c.arg(&file);
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{what}");
        if what == "report" {
            std::fs::write(&file, &out.stdout).unwrap();
        }
        let out = common::patchbench_with_store(&b)
            .arg("import")
            .arg(&file)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{what} does not import back: {err}"
        );
        // The report holds the 2 scores and 2 indexes; the export every metric, the
        // monitors' and the scores per CPU-second too.
        let want = if what == "report" {
            4
        } else {
            common::read_json(&file)["metrics"]
                .as_array()
                .unwrap()
                .len()
        };
        assert!(
            want > 4 || what == "report",
            "the export has no monitor rows"
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(&format!("(label -, {want} metrics)")),
            "{what}: {want} metrics: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}
