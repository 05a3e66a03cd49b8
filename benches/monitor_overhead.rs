//! What the monitors cost every kind of workload: adjacent triples of one run with
//! `--no-monitors`, one with the defaults and one with `--perf-stat` (the in-window counters),
//! and the median over the triples of each workload's score ratios (defaults / none and
//! perf-stat / none) with their range.
//!
//! The triples cycle through the six orders of the three settings (`ORDERS`): over every six
//! triples each setting runs once in each place, so neither a drift of the host nor an effect
//! of the place in a triple (the first run after a pause, the run between two others) leans
//! one ratio. (Until 2026-12-07 `--no-monitors` always ran in the middle; AIM7 creat-clo at
//! load 2 then read 0.931 and 0.956 on both ratios, and getppid1 1.026 and 1.042: both ratios
//! leaning one way is what a place effect looks like.)
//!
//! The workloads: every UnixBench index test at 1 copy and at the online CPUs (`run TEST -c N
//! -i 1`), AIM7 creat-clo at a small and a large load (`aim7 creat-clo --load 2`, AIM's 100
//! jobs a task; `--load 20 -j 20`), and
//! will-it-scale context_switch1, page_fault1 and getppid1 (1 task, processes) and
//! page_fault1 as threads at the online CPUs (`scale`). The default monitors read their files
//! outside the timed windows: the target for defaults / none is 0.99-1.01. `--perf-stat`'s
//! figures are what `src/monitor/in_window_cost.rs` prints for a run that used it; the lines
//! `COST` below are in its format.
//!
//! Run: `cargo bench --bench monitor_overhead`. Environment:
//! - `MONITOR_PAIRS`: triples per workload (default 12: every order twice);
//! - `MONITOR_SECS`: seconds per pass (default 2; one pass a run);
//! - `MONITOR_ONLY`: comma-separated workload names to run (e.g. `context1-1,spawn-2`);
//! - `MONITOR_CSV`: a file to which every run's score is written;
//! - `MONITOR_AA=1`: a second `--no-monitors` run in every tuple (in each place in turn), and
//!   its ratio to the first: what the median of these ratios reads when nothing differs, the
//!   floor below which a workload's defaults / none cannot be told from 1.
//!
//! About 20 minutes on a 2-CPU machine at the defaults.

use std::io::Write;
use std::process::Command;

/// One workload: its name (`context1-1`), the patchbench arguments, the score's metric and
/// params to read from the `--json` document, and its size and mode for the cost table.
struct Workload {
    name: String,
    args: Vec<String>,
    metric: &'static str,
    test: String,
    size: u32,
    mode: &'static str,
}

/// The UnixBench index tests (`patchbench list`).
const INDEX: &[&str] = &[
    "dhry2reg",
    "whetstone-double",
    "execl",
    "fstime",
    "fsbuffer",
    "fsdisk",
    "pipe",
    "context1",
    "spawn",
    "shell1",
    "shell8",
    "syscall",
];

fn workloads(cpus: u32, secs: &str) -> Vec<Workload> {
    let mut out = Vec::new();
    let mut copies = vec![1];
    if cpus > 1 {
        copies.push(cpus);
    }
    for c in &copies {
        for t in INDEX {
            out.push(Workload {
                name: format!("{t}-{c}"),
                args: [
                    "run",
                    t,
                    "-c",
                    &c.to_string(),
                    "-i",
                    "1",
                    "--no-settle",
                    "-d",
                    secs,
                ]
                .map(String::from)
                .to_vec(),
                metric: "unixbench.score",
                test: t.to_string(),
                size: *c,
                mode: "",
            });
        }
    }
    // AIM's 100 jobs a task at the small load; 20 at the large one, so a run takes seconds.
    for (load, jobs) in [(2, 100), (20, 20)] {
        out.push(Workload {
            name: format!("creat-clo-{load}"),
            args: [
                "aim7",
                "creat-clo",
                "--load",
                &load.to_string(),
                "-j",
                &jobs.to_string(),
                "--no-start-delay",
            ]
            .map(String::from)
            .to_vec(),
            metric: "aim7.jobs-per-min",
            test: "creat-clo".into(),
            size: load,
            mode: "",
        });
    }
    let scale = |test: &str, tasks: u32, mode: &'static str| Workload {
        name: format!("{test}-{tasks}-{mode}"),
        args: [
            "scale",
            test,
            "-t",
            &tasks.to_string(),
            "-m",
            if mode == "threads" {
                "thread"
            } else {
                "process"
            },
            "-d",
            secs,
        ]
        .map(String::from)
        .to_vec(),
        metric: if mode == "threads" {
            "will-it-scale.per_thread_ops"
        } else {
            "will-it-scale.per_process_ops"
        },
        test: test.into(),
        size: tasks,
        mode,
    };
    for t in ["context_switch1", "page_fault1", "getppid1"] {
        out.push(scale(t, 1, "processes"));
    }
    out.push(scale("page_fault1", cpus, "threads"));
    out
}

/// The settings of a triple: `--no-monitors`, the defaults, `--perf-stat`.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Setting {
    None,
    Defaults,
    PerfStat,
    /// A second `--no-monitors` run (`MONITOR_AA=1`).
    NoneAgain,
}

/// One run's score (the first metric named `w.metric`).
fn score(dir: &std::path::Path, w: &Workload, s: Setting, i: usize) -> f64 {
    let json = dir.join(format!("{}-{i}-{s:?}.json", w.name));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_patchbench"));
    cmd.args(&w.args)
        .arg("--no-store")
        .arg("--dir")
        .arg(dir)
        .arg("--json")
        .arg(&json);
    match s {
        Setting::None => {
            cmd.arg("--no-monitors");
        }
        Setting::PerfStat => {
            cmd.arg("--perf-stat");
        }
        Setting::NoneAgain => {
            cmd.arg("--no-monitors");
        }
        Setting::Defaults => {}
    }
    let out = cmd.output().expect("start patchbench");
    assert!(
        out.status.success(),
        "{} {:?}: {}",
        w.name,
        s,
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("parse");
    let _ = std::fs::remove_file(&json);
    doc["metrics"]
        .as_array()
        .and_then(|m| m.iter().find(|x| x["name"] == w.metric))
        .and_then(|m| m["value"].as_f64())
        .unwrap_or_else(|| panic!("{}: no {} in the run", w.name, w.metric))
}

/// Median, min and max.
fn summary(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (median, v[0], v[n - 1])
}

/// Every order of the three settings: each in each place twice.
const ORDERS: [[Setting; 3]; 6] = [
    [Setting::Defaults, Setting::None, Setting::PerfStat],
    [Setting::PerfStat, Setting::Defaults, Setting::None],
    [Setting::None, Setting::PerfStat, Setting::Defaults],
    [Setting::PerfStat, Setting::None, Setting::Defaults],
    [Setting::Defaults, Setting::PerfStat, Setting::None],
    [Setting::None, Setting::Defaults, Setting::PerfStat],
];

fn main() {
    let pairs: usize = std::env::var("MONITOR_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let secs = std::env::var("MONITOR_SECS").unwrap_or_else(|_| "2".into());
    let only: Option<Vec<String>> = std::env::var("MONITOR_ONLY")
        .ok()
        .map(|v| v.split(',').map(String::from).collect());
    let aa = std::env::var("MONITOR_AA").is_ok_and(|v| v == "1");
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let mut csv = std::env::var("MONITOR_CSV")
        .ok()
        .map(|p| std::fs::File::create(p).expect("MONITOR_CSV"));
    let dir = tempfile::tempdir().expect("temp dir");
    let mut table = Vec::new();
    for w in workloads(cpus, &secs) {
        if only.as_ref().is_some_and(|o| !o.contains(&w.name)) {
            continue;
        }
        let (mut defaults, mut perf, mut again) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..pairs {
            let mut order = ORDERS[i % ORDERS.len()].to_vec();
            if aa {
                // Each place in turn: over 12 tuples, three times in each.
                order.insert(i % 4, Setting::NoneAgain);
            }
            let scores: Vec<(Setting, f64)> = order
                .iter()
                .map(|s| (*s, score(dir.path(), &w, *s, i)))
                .collect();
            let get = |s| scores.iter().find(|x| x.0 == s).map_or(f64::NAN, |x| x.1);
            let none = get(Setting::None);
            defaults.push(get(Setting::Defaults) / none);
            perf.push(get(Setting::PerfStat) / none);
            if aa {
                again.push(get(Setting::NoneAgain) / none);
            }
            if let Some(f) = csv.as_mut() {
                for (s, v) in &scores {
                    writeln!(f, "{},{i},{s:?},{v}", w.name).expect("MONITOR_CSV");
                }
            }
            println!(
                "{} triple {i}: none {none:.1}, defaults ×{:.4}, perf-stat ×{:.4}{}",
                w.name,
                defaults[i],
                perf[i],
                again
                    .get(i)
                    .map_or(String::new(), |a| format!(", none again ×{a:.4}"))
            );
        }
        let (d, p) = (summary(defaults), summary(perf));
        println!(
            "{}: defaults / none {:.4} ({:.4}-{:.4}); perf-stat / none {:.4} ({:.4}-{:.4}); {pairs} triples",
            w.name, d.0, d.1, d.2, p.0, p.1, p.2
        );
        if aa {
            let a = summary(again);
            println!(
                "{}: none again / none {:.4} ({:.4}-{:.4}) (A/A: nothing differs)",
                w.name, a.0, a.1, a.2
            );
        }
        table.push((w, d, p));
    }
    println!("\n| workload | defaults / --no-monitors | --perf-stat / --no-monitors |");
    println!("|---|---|---|");
    for (w, d, p) in &table {
        println!(
            "| {} | {:.3} ({:.3}-{:.3}) | {:.3} ({:.3}-{:.3}) |",
            w.name, d.0, d.1, d.2, p.0, p.1, p.2
        );
    }
    println!("\n(every ratio: the median of {pairs} adjacent triples, with its range)");
    for (w, _, p) in &table {
        println!(
            "COST Cost {{ test: {:?}, size: {}, mode: {:?}, median: {:.3}, min: {:.3}, max: {:.3}, pairs: {pairs} }},",
            w.test, w.size, w.mode, p.0, p.1, p.2
        );
    }
}
