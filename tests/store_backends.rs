//! The store suite, run against both backends: every test in `on_both_backends!` runs once on
//! a SQLite file and once on a database of a real PostgreSQL server (`common::pg_server`;
//! the test fails with the reason if the server cannot start). It covers the record queries,
//! the schema's own rules against `crate::record::domain`, the campaign tables (claims,
//! leases, exactly-once finishing, concurrent claimers) and the store commands; and, across
//! the two, that the commands print the same results whichever backend holds the runs.

mod common;

use common::pg_server::{PgServer, ADMIN};
use common::{fixture, sample_record};
use patchbench::record::campaign::plan::PlannedStep;
use patchbench::record::campaign::spec::{CampaignSpec, ExecutorKind, Order, Schedule, SideSpec};
use patchbench::record::campaign::state::{CampaignState, Decision, StepState};
use patchbench::record::domain::{JTI_METRIC, POSITIVE_METRICS};
use patchbench::record::{Direction, Kind, Metric, RunRecord};
use patchbench::store::campaign::AfterFailure;
use patchbench::store::db::Store;
use patchbench::store::{Access, Location};
use std::ffi::OsString;
use std::time::Duration;

/// A store for one test, on one backend.
pub struct TestStore {
    /// The `--store` value.
    pub arg: OsString,
    pub location: Location,
    _dir: Option<tempfile::TempDir>,
}

impl TestStore {
    pub fn sqlite() -> TestStore {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        TestStore {
            arg: path.clone().into(),
            location: Location::File(path),
            _dir: Some(dir),
        }
    }

    pub fn postgres() -> TestStore {
        let server = PgServer::shared();
        let url = server.socket_url(ADMIN, &server.database());
        TestStore {
            location: Location::parse(url.as_ref()).unwrap(),
            arg: url.into(),
            _dir: None,
        }
    }

    pub fn open(&self) -> Store {
        Store::open(&self.location, Access::Create, None).unwrap()
    }

    pub fn cli(&self) -> assert_cmd::Command {
        let mut c = common::patchbench();
        c.env("PATCHBENCH_STORE", &self.arg);
        c
    }

    /// Runs the CLI with `args`; returns stdout, failing the test on a non-zero exit.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.cli().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

/// Each test body once on SQLite and once on PostgreSQL.
macro_rules! on_both_backends {
    ($($name:ident($store:ident) $body:block)*) => {
        $(
            mod $name {
                #[allow(unused_imports)]
                use super::*;
                fn body($store: TestStore) $body
                #[test]
                fn sqlite() {
                    body(TestStore::sqlite())
                }
                #[test]
                fn postgres() {
                    body(TestStore::postgres())
                }
            }
        )*
    };
}

fn spec(name: &str) -> CampaignSpec {
    let side = |n: &str| SideSpec {
        name: n.to_string(),
        kernel: None,
        cmdline: Vec::new(),
        setup: None,
        build: None,
    };
    CampaignSpec {
        name: name.to_string(),
        sides: vec![side("base"), side("patched")],
        workload: vec!["run".into(), "pipe".into()],
        schedule: Schedule::Rounds { rounds: 3 },
        order: Order::Abba,
        seed: 7,
        executor: ExecutorKind::Local,
        duet: false,
        scratch: None,
        vm: None,
        step_timeout_s: 60.0,
        settle_s: 0.0,
        primary: None,
        confidence: 0.9,
        program: "/bin/true".into(),
        started_on: "testbox".into(),
        kexec: None,
        lab: None,
        build: None,
    }
}

fn planned(rounds: std::ops::RangeInclusive<u32>) -> Vec<PlannedStep> {
    rounds
        .flat_map(|round| {
            ["base", "patched"]
                .into_iter()
                .enumerate()
                .map(move |(slot, side)| PlannedStep {
                    round,
                    slot: slot as u32,
                    side: side.to_string(),
                    r#box: String::new(),
                })
        })
        .collect()
}

on_both_backends! {
    records_round_trip(t) {
        let mut s = t.open();
        let a = sample_record("base", &[("pipe", 1000.0), ("syscall", 2000.0)]);
        let b = sample_record("patched", &[("pipe", 1100.0)]);
        let ids = s.insert_all(&[a.clone(), b.clone()]).unwrap();
        assert_eq!(ids.len(), 2);
        let back = s.get(ids[0]).unwrap().unwrap();
        assert_eq!(back.metrics, a.metrics);
        assert!(back.uuid.is_some());
        assert_eq!(s.ids_with_label("patched").unwrap(), vec![ids[1]]);
        assert_eq!(s.labels().unwrap(), vec!["base", "patched"]);
        let list = s.list(None).unwrap();
        assert_eq!(
            list.iter().map(|r| (r.metrics, r.tests, r.incomplete)).collect::<Vec<_>>(),
            vec![(2, 2, false), (1, 1, false)]
        );
        assert_eq!(s.list(Some("base")).unwrap().len(), 1);
        // A run is stored once per UUID.
        let mut again = back.clone();
        again.label = Some("again".into());
        let e = s.insert(&again).unwrap_err().to_string();
        assert!(e.contains("already has this run"), "{e}");
        // Update (what the run sink does after each unit), then delete.
        let mut grown = b.clone();
        grown.metrics = sample_record("x", &[("pipe", 1.0), ("spawn", 2.0), ("pipe", 3.0)]).metrics;
        grown.incomplete = true;
        s.update(ids[1], &grown).unwrap();
        let l = s.list(Some("patched")).unwrap();
        assert_eq!((l[0].metrics, l[0].incomplete), (3, true), "a key twice counts as metrics");
        let stored = s.get(ids[1]).unwrap().unwrap();
        assert_eq!(stored.metrics.len(), 3);
        assert!(s.exists(ids[1]).unwrap());
        assert!(s.delete(ids[1]).unwrap());
        assert!(!s.delete(ids[1]).unwrap());
        assert!(!s.exists(ids[1]).unwrap());
        assert!(s.get(ids[1]).unwrap().is_none());
    }

    schema_rules_are_the_domain_rules(t) {
        let mut s = t.open();
        let empty = RunRecord::new(Kind::Debug, Default::default(), &());
        let mut names: Vec<&str> = POSITIVE_METRICS.to_vec();
        names.extend([JTI_METRIC, "aim7.cpu"]);
        let values = [
            f64::NEG_INFINITY, -101.0, -100.0, -1.0, 0.0, 1e-300, 1.0, 100.0, 101.0,
            f64::MAX, f64::INFINITY, f64::NAN,
        ];
        let counts = [
            vec![],
            vec![("tasks", "1")],
            vec![("tasks", "0")],
            vec![("tasks", "1.5")],
            vec![("copies", "4194304")],
            vec![("copies", "4194305")],
            vec![("load", "123456789012345678901234567890")],
            vec![("load", "")],
        ];
        let samples = [vec![], vec![0.0, 2.5], vec![f64::INFINITY]];
        let mut checked = 0;
        for name in &names {
            for value in values {
                for p in &counts {
                    for smp in &samples {
                        let params: Vec<(&str, String)> =
                            p.iter().map(|(k, v)| (*k, v.to_string())).collect();
                        let m = Metric::new(*name, &params, "", "", Direction::HigherIsBetter, value, smp.clone());
                        let rust = m.validate().is_ok();
                        let record = RunRecord { metrics: vec![m.clone()], uuid: None, ..empty.clone() };
                        let sql = s.insert_unchecked(&record).is_ok();
                        assert_eq!(rust, sql, "{m:?}: domain {rust}, schema {sql}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 500);
    }

    campaign_steps_claim_lease_finish(t) {
        let mut s = t.open();
        let id = s.create_campaign(&spec("c1"), 2, &planned(1..=2)).unwrap();
        let dup = s.create_campaign(&spec("c1"), 2, &planned(1..=2)).unwrap_err();
        assert!(dup.to_string().contains("already exists"), "{dup}");
        assert_eq!(s.campaign("c1").unwrap().unwrap().id, id);
        assert_eq!(s.campaigns().unwrap().len(), 1);
        assert_eq!(s.steps(id).unwrap().len(), 4);

        let first = s.claim_step(id, "agent-a", 60.0, None).unwrap().unwrap();
        assert_eq!((first.round, first.slot, first.state), (1, 0, StepState::Running));
        assert_eq!(first.attempts, 1);
        let lease = first.lease_until.unwrap();
        let now = patchbench::store::campaign::epoch_now();
        assert!(lease > now + 30.0 && lease < now + 90.0, "lease {lease} vs now {now}");
        assert!(s.renew_lease(first.id, "agent-a", 120.0).unwrap());
        assert!(!s.renew_lease(first.id, "agent-b", 120.0).unwrap());

        // Only the owner finishes; the run and the step's done are one transaction.
        let run = sample_record("c1/base", &[("pipe", 10.0)]);
        assert_eq!(s.finish_step(first.id, "agent-b", &run).unwrap(), None);
        let run_id = s.finish_step(first.id, "agent-a", &run).unwrap().unwrap();
        assert_eq!(s.finish_step(first.id, "agent-a", &run).unwrap(), None, "twice");
        let done = s.step(first.id).unwrap().unwrap();
        assert_eq!(done.state, StepState::Done);
        assert_eq!(done.run_uuid, s.get(run_id).unwrap().unwrap().uuid);
        assert_eq!(s.campaign_runs(id).unwrap().len(), 1);

        // A failure is retried once, then failed for good.
        let second = s.claim_step(id, "agent-a", 60.0, None).unwrap().unwrap();
        assert_eq!(s.fail_step(second.id, "agent-b", "x", "").unwrap(), AfterFailure::NotOwned);
        assert_eq!(s.fail_step(second.id, "agent-a", "boom", "tail").unwrap(), AfterFailure::Retry);
        let again = s.claim_step(id, "agent-a", 60.0, None).unwrap().unwrap();
        assert_eq!((again.id, again.attempts), (second.id, 2));
        assert_eq!(s.fail_step(again.id, "agent-a", "boom", "tail").unwrap(), AfterFailure::Failed);

        // A released step is planned again without counting the attempt.
        let third = s.claim_step(id, "agent-a", 60.0, None).unwrap().unwrap();
        assert!(s.release_step(third.id, "agent-a").unwrap());
        assert!(!s.release_step(third.id, "agent-a").unwrap());
        let step = s.step(third.id).unwrap().unwrap();
        assert_eq!((step.state, step.attempts), (StepState::Planned, 0));

        // An expired lease is taken back; a live one is not.
        let short = s.claim_step(id, "agent-c", 0.05, None).unwrap().unwrap();
        let long = s.claim_step(id, "agent-d", 600.0, None).unwrap().unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let back = s.reclaim_steps(id, &|_| false, true).unwrap();
        assert_eq!(back.iter().map(|b| b.id).collect::<Vec<_>>(), vec![short.id]);
        assert_eq!(s.step(short.id).unwrap().unwrap().state, StepState::Planned);
        assert_eq!(s.step(long.id).unwrap().unwrap().state, StepState::Running);
        let dead = s.reclaim_steps(id, &|owner| owner == "agent-d", false).unwrap();
        assert_eq!(dead.len(), 1);

        // The pilot grown once (a second grower finds it grown), then rounds added once, by
        // the first decider; a decided campaign's pilot grows no more.
        s.grow_pilot(id, 3, &planned(3..=3)).unwrap();
        s.grow_pilot(id, 3, &planned(3..=3)).unwrap();
        assert_eq!(s.campaign("c1").unwrap().unwrap().planned_rounds, 3);
        assert_eq!(s.steps(id).unwrap().len(), 6);
        let decision = Decision {
            primary: "unixbench.score[copies=1,test=pipe]".into(),
            pilot_rounds: 3,
            pilot_pairs: 2,
            pilot_sd: 0.01,
            rounds_needed: 4,
            rounds: 4,
            bound: None,
            half_width_pct: 1.0,
        };
        s.extend_campaign(id, 4, &decision, &planned(4..=4)).unwrap();
        s.extend_campaign(id, 5, &decision, &planned(5..=5)).unwrap();
        s.grow_pilot(id, 5, &planned(5..=5)).unwrap();
        let c = s.campaign("c1").unwrap().unwrap();
        assert_eq!((c.planned_rounds, c.decision), (4, Some(decision)));
        assert_eq!(s.steps(id).unwrap().len(), 8);
        s.set_campaign_state(id, CampaignState::Stopping, Some("asked")).unwrap();
        assert_eq!(s.campaign("c1").unwrap().unwrap().state, CampaignState::Stopping);
        assert!(s.claim_step(id, "agent-a", 60.0, None).unwrap().is_none(), "not running");
    }

    concurrent_claimers_take_each_step_once(t) {
        let mut s = t.open();
        let id = s.create_campaign(&spec("race"), 15, &planned(1..=15)).unwrap();
        let location = t.location.clone();
        let workers: Vec<_> = (0..8)
            .map(|w| {
                let location = location.clone();
                std::thread::spawn(move || {
                    let mut s = Store::open(&location, Access::Write, None).unwrap();
                    let owner = format!("agent-{w}");
                    let mut mine = Vec::new();
                    while let Some(step) = s.claim_step(id, &owner, 60.0, None).unwrap() {
                        let run = sample_record("race", &[("pipe", 1.0 + step.id as f64)]);
                        assert!(s.finish_step(step.id, &owner, &run).unwrap().is_some());
                        mine.push(step.id);
                    }
                    mine
                })
            })
            .collect();
        let mut all: Vec<i64> = workers.into_iter().flat_map(|w| w.join().unwrap()).collect();
        all.sort_unstable();
        let before = all.len();
        all.dedup();
        assert_eq!((before, all.len()), (30, 30), "every step claimed exactly once");
        assert!(s.steps(id).unwrap().iter().all(|st| st.state == StepState::Done));
        assert_eq!(s.campaign_runs(id).unwrap().len(), 30);
    }

    store_commands(t) {
        t.ok(&["import", "--label", "base", &fixture("ub60-base-1.txt"), &fixture("ub60-base-2.txt")]);
        t.ok(&["import", "--label", "patched", &fixture("ub60-base-2.txt")]);
        let runs = t.ok(&["runs"]);
        assert_eq!(runs.lines().filter(|l| l.contains("base")).count(), 2, "{runs}");
        assert!(t.ok(&["show", "1"]).contains("unixbench.score"));
        let doc = t.ok(&["export", "1"]);
        assert!(RunRecord::from_json(&doc).is_ok());
        assert!(t.ok(&["compare", "base", "patched", "--format", "lkp"]).contains("n=2+1"));
        t.ok(&["rm", "3"]);
        t.cli().args(["show", "3"]).assert().code(2).stderr(predicates::str::contains("no run 3"));
        t.cli()
            .args(["compare", "base", "nosuch"])
            .assert()
            .code(2)
            .stderr(predicates::str::contains("labels there: base"));
    }
}

/// The store commands print the same thing whichever backend holds the same runs.
#[test]
fn both_backends_give_the_same_results() {
    let stores = [TestStore::sqlite(), TestStore::postgres()];
    let mut outputs: Vec<Vec<String>> = Vec::new();
    for t in &stores {
        t.ok(&[
            "import",
            "--label",
            "base",
            &fixture("ub60-base-1.txt"),
            &fixture("ub60-base-2.txt"),
        ]);
        t.ok(&["import", "--label", "patched", &fixture("ub60-base-2.txt")]);
        t.ok(&[
            "import",
            "--label",
            "aim",
            &fixture("aim7-base/creat-clo.txt"),
        ]);
        t.ok(&["import", &fixture("brk2.csv")]);
        let mut out = Vec::new();
        for args in [
            &["runs"][..],
            &["runs", "--label", "base"],
            &["show", "1"],
            &["show", "2", "--format", "json"],
            &["show", "1", "--report"],
            &["export", "1"],
            &["export", "3", "--format", "csv"],
            &["compare", "base", "patched"],
            &["compare", "1", "3", "--format", "json"],
            &[
                "compare",
                "base",
                "patched",
                "--format",
                "markdown",
                "--no-profile",
            ],
        ] {
            out.push(t.ok(args));
        }
        let json = t.ok(&["runs", "--format", "json"]);
        let mut doc: serde_json::Value = serde_json::from_str(&json).unwrap();
        doc["store"] = serde_json::Value::Null;
        out.push(doc.to_string());
        t.ok(&["rm", "2"]);
        out.push(t.ok(&["runs"]));
        outputs.push(out);
    }
    // Imports are stamped with the time they were made, and every run has its own UUID.
    let stamp =
        regex::Regex::new(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?").unwrap();
    let uuid =
        regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}").unwrap();
    let clock = regex::Regex::new(r"\b\d\d:\d\d:\d\d\b").unwrap();
    let same = |s: &str| {
        let s = stamp.replace_all(s, "TIME");
        let s = clock.replace_all(&s, "TIME");
        uuid.replace_all(&s, "UUID").into_owned()
    };
    for (i, (a, b)) in outputs[0].iter().zip(&outputs[1]).enumerate() {
        assert_eq!(
            same(a),
            same(b),
            "output {i} differs between SQLite and PostgreSQL"
        );
    }
}

/// A side with one run borrows its spread from the store's other runs of the same settings,
/// pooled in the database: the same profile as pooling the records in Rust, on both backends.
#[test]
fn the_noise_profile_is_pooled_in_the_database() {
    for t in [TestStore::sqlite(), TestStore::postgres()] {
        let mut s = t.open();
        let mut records = Vec::new();
        for (label, values) in [
            ("a", [100.0, 103.0, 98.0, 101.0]),
            ("b", [200.0, 190.0, 205.0, 201.0]),
            ("c", [50.0, 50.0, 50.0, 50.0]),
        ] {
            for v in values {
                records.push(sample_record(label, &[("pipe", v), ("syscall", v * 2.0)]));
            }
        }
        let ids = s.insert_all(&records).unwrap();
        let first = &records[0];
        let settings = patchbench::store::profile::Settings {
            kind: first.kind.as_str(),
            host: &first.system.hostname,
            kernel_release: &first.system.kernel_release,
            kernel_version: &first.system.kernel_version,
            config: &first.config,
        };
        let data = s.profile_data(&settings, &[ids[11]]).unwrap();
        assert_eq!(data.runs, 11);
        assert_eq!(data.labels, vec!["a", "b", "c"]);
        let from_db = patchbench::compare::model::NoiseProfile::from_group_variances(
            "x".into(),
            data.groups.into_iter().map(|(_, k, n, v)| (k, n, v)),
        )
        .unwrap();
        let groups: Vec<Vec<&RunRecord>> = vec![
            records[0..4].iter().collect(),
            records[4..8].iter().collect(),
            records[8..11].iter().collect(),
        ];
        let in_rust =
            patchbench::compare::model::NoiseProfile::from_groups("x".into(), &groups).unwrap();
        assert_eq!(from_db.metrics.len(), in_rust.metrics.len());
        for (key, e) in &in_rust.metrics {
            let d = from_db.metrics[key];
            assert!((d.sd - e.sd).abs() < 1e-12, "{key}: {} vs {}", d.sd, e.sd);
            assert_eq!((d.df, d.runs), (e.df, e.runs), "{key}");
        }
    }
}

/// Both databases end with the same tables and columns (SQLite through its history of
/// migrations, PostgreSQL from its baseline).
#[test]
fn both_schemas_have_the_same_tables_and_columns() {
    let sqlite = TestStore::sqlite();
    drop(sqlite.open());
    let Location::File(path) = &sqlite.location else {
        unreachable!()
    };
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
             WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY 1, 2",
        )
        .unwrap();
    let lite: Vec<(String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let server = PgServer::shared();
    let db = server.database();
    let url = server.socket_url(ADMIN, &db);
    drop(
        Store::open(
            &Location::parse(url.as_ref()).unwrap(),
            Access::Create,
            None,
        )
        .unwrap(),
    );
    let pg: Vec<(String, String)> = server
        .admin(&db)
        .query(
            "SELECT table_name::text, column_name::text FROM information_schema.columns
             WHERE table_schema = 'public' AND table_name <> 'patchbench_schema'",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let mut pg = pg;
    pg.sort();
    let mut lite = lite;
    lite.sort();
    assert_eq!(lite, pg);
    assert!(lite.contains(&("run_parts".into(), "body".into())));
}

/// The records of a store written by the schema before packed parts (version 7, by the
/// build before it: `tests/fixtures/store-v7.db.gz`, four real runs of `run syscall pipe`
/// with their monitors), as that build stored them.
fn version_7_fixture() -> (tempfile::TempDir, std::path::PathBuf, Vec<(i64, RunRecord)>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v7.db");
    std::fs::write(&path, common::gunzipped("store-v7.db.gz")).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 7);
    let mut q = conn
        .prepare("SELECT run_id, record_json FROM run_records ORDER BY run_id")
        .unwrap();
    let records: Vec<(i64, RunRecord)> = q
        .query_map([], |r| Ok((r.get(0)?, r.get::<_, String>(1)?)))
        .unwrap()
        .map(|r| {
            let (id, json) = r.unwrap();
            (id, RunRecord::from_json(&json).unwrap())
        })
        .collect();
    assert_eq!(records.len(), 4);
    assert!(records
        .iter()
        .all(|(_, r)| r.metrics.len() > 300 && !r.monitors.is_empty()));
    (dir, path, records)
}

/// What `compare base patched --format json` says, without the store's name.
fn compare_json(store: &std::ffi::OsStr) -> serde_json::Value {
    let out = common::patchbench()
        .env("PATCHBENCH_STORE", store)
        .args(["compare", "base", "patched", "--format", "json"])
        .assert()
        .success()
        .get_output()
        .clone();
    let mut doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    strip_store(&mut doc);
    doc
}

fn strip_store(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.remove("store");
            m.values_mut().for_each(strip_store);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip_store),
        _ => {}
    }
}

/// A store the landed schema (version 7) wrote, with monitors, opens once migrated, keeps
/// every value of every run, and compares as before; on PostgreSQL too (its version-7 tables
/// made by this build's own history, filled with the same rows).
#[test]
fn a_version_7_store_migrates_once_and_keeps_every_value() {
    let (_dir, path, records) = version_7_fixture();
    // The comparison as the version-7 build printed it, from the records themselves.
    let before = {
        let fresh = TestStore::sqlite();
        let mut s = fresh.open();
        for (_, r) in &records {
            s.insert(r).unwrap();
        }
        compare_json(&fresh.arg)
    };
    // SQLite: the file itself.
    let location = Location::File(path.clone());
    let store = Store::open(&location, Access::Write, None).unwrap();
    for (id, r) in &records {
        assert_eq!(&store.get(*id).unwrap().unwrap(), r, "run {id}");
    }
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let (version, tables): (i64, i64) = (
        conn.query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap(),
        conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'run_records'",
            [],
            |r| r.get(0),
        )
        .unwrap(),
    );
    assert_eq!((version, tables), (8, 0));
    let monitor_rows: i64 = conn
        .query_row(
            "SELECT count(*) FROM metrics WHERE name LIKE 'proc-vmstat.%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(monitor_rows, 0, "monitor rows live in the parts only");
    assert_eq!(compare_json(path.as_os_str()), before);

    // PostgreSQL: version-7 tables, the fixture's rows copied in, then opened by this build.
    let pg = TestStore::postgres();
    Store::create_at_version(&pg.location, 7).unwrap();
    let server = PgServer::shared();
    let Location::Postgres(target) = &pg.location else {
        unreachable!()
    };
    let mut admin = server.admin(&target.dbname);
    for (id, r) in &records {
        let json = serde_json::to_string(r).unwrap();
        admin
            .execute(
                "INSERT INTO runs (id, label, kind, source, started_at, finished_at, host, kernel,
                                   incomplete, uuid, kernel_version, config_key, metric_count,
                                   test_count)
                 VALUES ($1, $2, 'unixbench', $3, $4, $5, $6, $7, false, $8, $9, '', $10, 2)",
                &[
                    id,
                    &r.label,
                    &r.source,
                    &r.started_at,
                    &r.finished_at,
                    &r.system.hostname,
                    &r.system.kernel_release,
                    &r.uuid,
                    &r.system.kernel_version,
                    &(r.metrics.len() as i64),
                ],
            )
            .unwrap();
        admin
            .execute(
                "INSERT INTO run_records (run_id, record_json) VALUES ($1, $2)",
                &[id, &json],
            )
            .unwrap();
        for m in &r.metrics {
            admin
                .execute(
                    "INSERT INTO metrics (run_id, key, name, params_json, title, unit, direction,
                                          value, samples_json)
                     VALUES ($1, $2, $3, CAST($4 AS TEXT)::jsonb, $5, $6, $7, $8, $9)",
                    &[
                        id,
                        &m.key(),
                        &m.name.as_str(),
                        &serde_json::to_string(&m.params).unwrap(),
                        &m.title.as_str(),
                        &m.unit.as_str(),
                        &serde_json::to_value(m.direction).unwrap().as_str().unwrap(),
                        &m.value,
                        &serde_json::to_string(&m.samples).unwrap(),
                    ],
                )
                .unwrap();
        }
    }
    let store = pg.open();
    for (id, r) in &records {
        assert_eq!(
            &store.get(*id).unwrap().unwrap(),
            r,
            "run {id} on PostgreSQL"
        );
    }
    drop(store);
    let monitor_rows: i64 = admin
        .query_one(
            "SELECT count(*) FROM metrics WHERE name LIKE 'proc-vmstat.%'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(monitor_rows, 0);
    assert_eq!(compare_json(&pg.arg), before);
}
