//! The store at a lab's size, on both backends: fills a SQLite store with 100,000 runs
//! (`PATCHBENCH_BENCH_RUNS` for another count) of one host, kernel and settings (the worst
//! case for the noise profile, which pools every such run), copies them into a PostgreSQL
//! database (a real server, `tests/common/pg_server.rs`) with `push`, then times the
//! commands as a user runs them (the release binary, wall time and peak RSS of the process):
//! `runs`, `runs --label`, `compare` of two labels of 2 runs each (the profile is used),
//! of two labels of 100 runs, and of two run ids (the profile again); and `push` of 10,000
//! runs into a fresh database; and `campaign status` and `campaign report` of a lab campaign of
//! 2 boxes x 20 rounds stored beside the 100,000 runs. `cargo bench --bench store`.
//!
//! The store holds 1,000 labels of 100 runs (`lab-0000`...) and labels `A` and `B` of 2
//! runs each; every run has 12 UnixBench scores and an index, with 3 samples each.

#[path = "../tests/common/pg_server.rs"]
#[allow(dead_code)]
mod pg_server;

use patchbench::record::{Direction, Kind, Metric, RunRecord};
use patchbench::store::db::Store;
use patchbench::sysinfo::SystemInfo;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

const TESTS: [&str; 12] = [
    "dhry2reg",
    "whetstone-double",
    "execl",
    "fstime",
    "fsbuffer",
    "fsdisk",
    "pipe",
    "context1",
    "spawn",
    "syscall",
    "shell1",
    "shell8",
];

/// A deterministic spread around 1 (a small LCG; no randomness needed beyond variety).
fn jitter(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    1.0 + ((*seed >> 33) as f64 / (1u64 << 31) as f64 - 0.5) * 0.04
}

fn record(label: &str, seed: &mut u64) -> RunRecord {
    let system = SystemInfo {
        hostname: "labbox".into(),
        kernel_release: "6.1.0-27-amd64".into(),
        kernel_version: "#1 SMP PREEMPT_DYNAMIC Debian 6.1.115-1".into(),
        machine: "x86_64".into(),
        cpu_model: "AMD EPYC 7B13".into(),
        cpus: 2,
        ..SystemInfo::default()
    };
    let mut metrics: Vec<Metric> = TESTS
        .iter()
        .enumerate()
        .map(|(i, test)| {
            let v = 1000.0 * (i + 1) as f64 * jitter(seed);
            Metric::new(
                "unixbench.score",
                &[("test", test.to_string()), ("copies", "1".into())],
                *test,
                "lps",
                Direction::HigherIsBetter,
                v,
                vec![v * jitter(seed), v, v * jitter(seed)],
            )
        })
        .collect();
    metrics.push(Metric::new(
        "unixbench.index",
        &[("copies", "1".into())],
        "System Benchmarks Index Score",
        "",
        Direction::HigherIsBetter,
        1500.0 * jitter(seed),
        Vec::new(),
    ));
    RunRecord {
        label: Some(label.to_string()),
        started_at: "2026-01-01T00:00:00Z".into(),
        finished_at: "2026-01-01T00:10:00Z".into(),
        metrics,
        ..RunRecord::new(Kind::Unixbench, system, &())
    }
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
fn add_campaign(store: &mut Store, seed: &mut u64) {
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
            let mut r = record(&format!("lab-campaign/{}", step.side), seed);
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
    let mut batch = Vec::with_capacity(1000);
    for label in ["A", "A", "B", "B"] {
        batch.push(record(label, &mut seed));
    }
    for i in 0..n.saturating_sub(4) {
        batch.push(record(&format!("lab-{:04}", i / 100), &mut seed));
        if batch.len() == 1000 {
            store.insert_all(&batch).expect("insert");
            batch.clear();
        }
    }
    store.insert_all(&batch).expect("insert");
    add_campaign(&mut store, &mut seed);
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
    let sqlite = dir.path().join("lab.db");
    let t = Instant::now();
    fill(&sqlite, n);
    println!(
        "filled a SQLite store with {n} runs in {:.1} s ({:.0} MB)",
        t.elapsed().as_secs_f64(),
        std::fs::metadata(&sqlite).map(|m| m.len()).unwrap_or(0) as f64 / 1e6
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
        add_campaign(&mut pg, &mut 7);
    }
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
