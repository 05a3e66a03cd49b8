//! The store at a lab's size, on both backends: fills a SQLite store with 100,000 runs
//! (`PATCHBENCH_BENCH_RUNS` for another count) of one host, kernel and settings (the worst
//! case for the noise profile, which pools every such run), copies them into a PostgreSQL
//! database (a real server, `tests/common/pg_server.rs`) with `push`, then times the
//! commands as a user runs them (the release binary, wall time and peak RSS of the process):
//! `runs`, `runs --label`, `compare` of two labels of 2 runs each (the profile is used),
//! of two labels of 100 runs, and of two run ids (the profile again); and `push` of 10,000
//! runs into a fresh database; and `campaign status` and `campaign report` of a lab campaign of
//! 2 boxes x 20 rounds stored beside the 100,000 runs. `cargo bench --bench store`
//! (`PATCHBENCH_BENCH_DIR=DIR` keeps the filled SQLite store there for the next bench).
//!
//! The store holds 1,000 labels of 100 runs (`lab-0000`...) and labels `A` and `B` of 2
//! runs each; every run is as wide as a real full-index run with its monitors: the recorded
//! `run --quick --copies 1` of `tests/fixtures/run-quick-1copy.json.gz` (12 tests, 4,057
//! metrics), its scores moved a little per run. The size of each store on disk is printed.

#[path = "../tests/common/pg_server.rs"]
#[allow(dead_code)]
mod pg_server;

use patchbench::record::RunRecord;
use patchbench::store::db::Store;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// A deterministic spread around 1 (a small LCG; no randomness needed beyond variety).
fn jitter(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    1.0 + ((*seed >> 33) as f64 / (1u64 << 31) as f64 - 0.5) * 0.04
}

/// The real run every stored run is made from: `run --quick --copies 1` with the default
/// monitors on this project's VM (4,057 metrics, 3,408 of them zero; 1.47 MB of JSON).
fn recorded_run() -> RunRecord {
    use std::io::Read;
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/run-quick-1copy.json.gz"
    );
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("the recorded run"))
        .read_to_string(&mut text)
        .expect("gzip JSON");
    RunRecord::from_json(&text).expect("a run record")
}

/// A run as wide as the recorded one, its scores and index moved a little (so labels
/// differ), labelled `label`, with a UUID of its own.
fn record(base: &RunRecord, label: &str, seed: &mut u64) -> RunRecord {
    let mut r = base.clone();
    r.label = Some(label.to_string());
    r.uuid = None;
    r.source = None;
    for m in r.metrics.iter_mut() {
        if m.name.starts_with("unixbench.") {
            let f = jitter(seed);
            m.value *= f;
            for s in m.samples.iter_mut() {
                *s *= f;
            }
        }
    }
    r
}

/// Fills a new SQLite store at `path` with `n` runs, in a process of its own: the peak RSS
/// the kernel reports for a child counts its parent's at the fork, so this process stays
/// small.
fn fill(path: &Path, n: usize) {
    let status = Command::new(std::env::current_exe().expect("this program"))
        .env("PATCHBENCH_BENCH_FILL", format!("{n}\t{}", path.display()))
        .status()
        .expect("start the filler");
    assert!(status.success(), "filling {} failed", path.display());
}

/// The lab campaign every store of the bench holds: 2 boxes x 20 rounds x 2 sides, each step
/// claimed and finished as an agent does, its run a UnixBench record with the step's details.
fn add_campaign(store: &mut Store, base: &RunRecord, seed: &mut u64) {
    use patchbench::record::campaign::{plan, spec::CampaignSpec, StepInfo};
    let spec: CampaignSpec = serde_json::from_value(serde_json::json!({
        "name": "lab-campaign", "sides": [{"name": "base"}, {"name": "patched"}],
        "workload": ["run", "--quick"], "schedule": {"rounds": {"rounds": 20}},
        "order": "random", "seed": 7, "executor": "local", "step_timeout_s": 60.0,
        "confidence": 0.95, "program": "/bin/true", "started_on": "labbox",
        "lab": {"boxes": 2, "tags": []}
    }))
    .expect("a campaign spec");
    let boxes = ["box-a".to_string(), "box-b".to_string()];
    let steps = plan::for_boxes(&plan::steps(spec.order, spec.seed, 1, 20), &boxes);
    let id = store
        .create_campaign(&spec, 20, &steps)
        .expect("create the campaign");
    for b in &boxes {
        while let Some(step) = store.claim_step(id, "bench", 60.0, Some(b)).expect("claim") {
            let mut r = record(base, &format!("lab-campaign/{}", step.side), seed);
            r.campaign = Some(StepInfo {
                campaign: "lab-campaign".into(),
                round: step.round,
                side: step.side.clone(),
                slot: step.slot,
                r#box: step.r#box.clone(),
                executor: "local".into(),
                attempt: 1,
                ..Default::default()
            });
            store.finish_step(step.id, "bench", &r).expect("finish");
        }
    }
}

/// Fills a new SQLite store at `path` with `n` runs in labels of 100, plus A and B.
fn fill_here(path: &Path, n: usize) {
    let mut store = Store::open(
        &patchbench::store::Location::File(path.to_path_buf()),
        patchbench::store::Access::Create,
        None,
    )
    .expect("create the bench store");
    let mut seed = 42;
    let base = recorded_run();
    let mut batch = Vec::with_capacity(100);
    for label in ["A", "A", "B", "B"] {
        batch.push(record(&base, label, &mut seed));
    }
    let t = Instant::now();
    for i in 0..n.saturating_sub(4) {
        batch.push(record(&base, &format!("lab-{:04}", i / 100), &mut seed));
        if batch.len() == 100 {
            store.insert_all(&batch).expect("insert");
            batch.clear();
        }
        if (i + 1) % 10_000 == 0 {
            eprintln!("  {} runs in {:.0} s", i + 1, t.elapsed().as_secs_f64());
        }
    }
    store.insert_all(&batch).expect("insert");
    add_campaign(&mut store, &base, &mut seed);
}

/// The patchbench program measured: this build's, or `PATCHBENCH_BENCH_BIN` (a release build
/// measured by a bench built for debugging).
fn program() -> std::path::PathBuf {
    std::env::var_os("PATCHBENCH_BENCH_BIN")
        .map(Into::into)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_patchbench").into())
}

/// Runs the patchbench binary with `args`; returns (wall seconds, peak RSS in MB), failing on
/// a non-zero exit. The child is reaped by `wait4`, which also gives its peak RSS.
#[allow(clippy::zombie_processes)]
fn measure(args: &[&str]) -> (f64, f64) {
    let errors = tempfile::NamedTempFile::new().expect("temp file");
    let start = Instant::now();
    let child = Command::new(program())
        .args(args)
        .env_remove("PATCHBENCH_STORE")
        .stdout(Stdio::null())
        .stderr(errors.reopen().expect("reopen"))
        .spawn()
        .expect("start patchbench");
    let pid = child.id() as i32;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child, with valid pointers.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = start.elapsed().as_secs_f64();
    assert_eq!(r, pid, "wait4");
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    if !ok {
        let err = std::fs::read_to_string(errors.path()).unwrap_or_default();
        panic!("patchbench {args:?} failed ({status}): {err}");
    }
    (wall, usage.ru_maxrss as f64 / 1024.0)
}

fn report(backend: &str, what: &str, (wall, rss): (f64, f64)) {
    println!("{backend:<10} {what:<40} {wall:>8.2} s {rss:>8.1} MB");
}

fn main() {
    if let Ok(job) = std::env::var("PATCHBENCH_BENCH_FILL") {
        let (n, path) = job.split_once('\t').expect("N<TAB>PATH");
        fill_here(Path::new(path), n.parse().expect("a count"));
        return;
    }
    println!("measuring {}", program().display());
    let n: usize = std::env::var("PATCHBENCH_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().expect("temp dir");
    // `PATCHBENCH_BENCH_DIR`: the SQLite store is kept there and a later bench with the same
    // count uses it again (filling 100,000 full-width runs takes about 12 minutes).
    let kept = std::env::var_os("PATCHBENCH_BENCH_DIR").map(std::path::PathBuf::from);
    let sqlite = match &kept {
        Some(d) => {
            std::fs::create_dir_all(d).expect("the bench's directory");
            d.join(format!("lab-{n}.db"))
        }
        None => dir.path().join("lab.db"),
    };
    let t = Instant::now();
    if sqlite.exists() {
        println!("using the store filled before: {}", sqlite.display());
    } else {
        let part = sqlite.with_extension("filling");
        let _ = std::fs::remove_file(&part);
        fill(&part, n);
        std::fs::rename(&part, &sqlite).expect("keep the filled store");
    }
    let bytes = std::fs::metadata(&sqlite).map(|m| m.len()).unwrap_or(0) as f64;
    println!(
        "filled a SQLite store with {n} runs in {:.1} s: {:.0} MB on disk, {:.1} KB a run",
        t.elapsed().as_secs_f64(),
        bytes / 1e6,
        bytes / n as f64 / 1e3
    );
    let server = pg_server::PgServer::start(pg_server::Setup::default());
    let db = server.database();
    let url = server.socket_url(pg_server::ADMIN, &db);
    let sqlite_arg = sqlite.to_str().expect("UTF-8 temp path").to_string();
    report(
        "postgres",
        &format!("push {n} runs (fills the server)"),
        measure(&["push", "--to", &url, "--store", &sqlite_arg]),
    );
    {
        let location = patchbench::store::Location::parse(url.as_ref()).expect("the URL");
        let mut pg = Store::open(&location, patchbench::store::Access::Create, None)
            .expect("open the server's store");
        add_campaign(&mut pg, &recorded_run(), &mut 7);
    }
    let bytes: i64 = server
        .admin(&db)
        .query_one("SELECT pg_database_size(current_database())", &[])
        .expect("the database's size")
        .get(0);
    println!(
        "postgres   store on disk: {:.0} MB, {:.1} KB a run",
        bytes as f64 / 1e6,
        bytes as f64 / n as f64 / 1e3
    );
    let (a_id, b_id) = ("5", "6");
    for (backend, store) in [("sqlite", sqlite_arg.as_str()), ("postgres", url.as_str())] {
        let with = |args: &[&str]| {
            let mut v: Vec<&str> = args.to_vec();
            v.extend(["--store", store]);
            measure(&v)
        };
        report(backend, &format!("runs ({n} lines)"), with(&["runs"]));
        report(
            backend,
            "runs --label lab-0001 (100 runs)",
            with(&["runs", "--label", "lab-0001"]),
        );
        report(
            backend,
            "compare A B (2+2 runs, profile)",
            with(&["compare", "A", "B"]),
        );
        report(
            backend,
            "compare lab-0001 lab-0002 (100+100)",
            with(&["compare", "lab-0001", "lab-0002"]),
        );
        report(
            backend,
            "compare 5 6 (ids, profile)",
            with(&["compare", a_id, b_id]),
        );
        report(
            backend,
            "compare 5 6 --no-profile",
            with(&["compare", a_id, b_id, "--no-profile"]),
        );
        report(
            backend,
            "campaign status (2 boxes x 20 rounds)",
            with(&["campaign", "status", "lab-campaign"]),
        );
        report(
            backend,
            "campaign report (the same)",
            with(&["campaign", "report", "lab-campaign"]),
        );
    }
    // Push of 10,000 runs into a fresh database and into a fresh file.
    let small = dir.path().join("box.db");
    fill(&small, 10_000);
    let small_arg = small.to_str().expect("UTF-8").to_string();
    let fresh = server.database();
    let fresh_url = server.socket_url(pg_server::ADMIN, &fresh);
    let (wall, rss) = measure(&["push", "--to", &fresh_url, "--store", &small_arg]);
    report("postgres", "push 10000 runs", (wall, rss));
    println!(
        "{:<10} {:<40} {:>8.0} runs/s",
        "postgres",
        "push rate",
        10_000.0 / wall
    );
    let (wall, rss) = measure(&["push", "--to", &fresh_url, "--store", &small_arg]);
    report("postgres", "push 10000 runs again (all there)", (wall, rss));
    let target = dir.path().join("shared.db");
    let target_arg = target.to_str().expect("UTF-8").to_string();
    let (wall, rss) = measure(&["push", "--to", &target_arg, "--store", &small_arg]);
    report("sqlite", "push 10000 runs", (wall, rss));
    println!(
        "{:<10} {:<40} {:>8.0} runs/s",
        "sqlite",
        "push rate",
        10_000.0 / wall
    );
}
