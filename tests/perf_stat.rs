//! `--perf-stat` for real, as the two users the kernel treats apart under
//! `kernel.perf_event_paranoid` 2: a user without `CAP_PERFMON` (uid 61005, no capabilities)
//! counts user space only, and its run records the rows that mean something there
//! (`perf-stat.task-clock`, `perf-stat.page-faults:u`), says so once, and keeps that line in
//! `missing`; root counts in full. `compare` between the two keeps the rows apart and warns.
//! Needs root (to run the other user); a machine whose paranoid level is not 2 is set to 2
//! for the test and set back after it (`Paranoid2`).

mod common;

use common::{metric, read_json, std_patchbench};
use std::path::Path;

/// A `run syscall --perf-stat` of one 1 s pass writing `json` (no store); its stderr.
fn perf_stat_run(dir: &Path, json: &Path, unprivileged: bool) -> String {
    let mut cmd = std_patchbench();
    cmd.args(["run", "syscall", "--copies", "1", "--passes", "1"])
        .args([
            "--duration",
            "1",
            "--no-settle",
            "--no-store",
            "--perf-stat",
        ])
        .arg("--dir")
        .arg(dir)
        .arg("--json")
        .arg(json);
    if unprivileged {
        common::as_unprivileged(&mut cmd, common::unprivileged::PERF_STAT, &[dir]);
    }
    let out = common::succeed(&mut cmd);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    err
}

/// kernel.perf_event_paranoid at 2 (Debian's default, what a user without CAP_PERFMON meets)
/// while it lives; the level it found is written back when it is dropped.
struct Paranoid2 {
    was: String,
}

const PARANOID: &str = "/proc/sys/kernel/perf_event_paranoid";

impl Paranoid2 {
    fn set() -> Paranoid2 {
        let was = std::fs::read_to_string(PARANOID)
            .unwrap()
            .trim()
            .to_string();
        if was != "2" {
            std::fs::write(PARANOID, "2").unwrap();
        }
        Paranoid2 { was }
    }
}

impl Drop for Paranoid2 {
    fn drop(&mut self) {
        if self.was != "2" {
            let _ = std::fs::write(PARANOID, &self.was);
        }
    }
}

/// The names of the run's perf-stat metrics.
fn perf_stat_rows(doc: &serde_json::Value) -> Vec<String> {
    doc["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["name"].as_str())
        .filter(|n| n.starts_with("perf-stat."))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_user_counts_user_space_only_root_in_full_and_compare_keeps_them_apart() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "needs root, to run the other user and set kernel.perf_event_paranoid (scripts/test.sh runs as root)"
    );
    let _level = Paranoid2::set();
    let d = tempfile::tempdir().unwrap();
    let (user_dir, root_dir) = (d.path().join("user"), d.path().join("root"));
    std::fs::create_dir(&user_dir).unwrap();
    std::fs::create_dir(&root_dir).unwrap();
    let (user_json, root_json) = (user_dir.join("u.json"), root_dir.join("r.json"));

    let err = perf_stat_run(&user_dir, &user_json, true);
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("counting user space only"))
        .collect();
    assert_eq!(said.len(), 1, "said once, in one line: {err}");
    assert!(
        said[0].contains("kernel.perf_event_paranoid is 2")
            && said[0].contains("page-faults:u")
            && said[0].contains("context-switches, cpu-migrations left out"),
        "{err}"
    );
    let user = read_json(&user_json);
    let rows = perf_stat_rows(&user);
    let syscall = [("test", "syscall")];
    // The task clock counts the same user-space only: its row, about the pass's second.
    let clock = metric(&user, "perf-stat.task-clock", &syscall)["value"]
        .as_f64()
        .unwrap();
    assert!(clock > 300.0, "task-clock {clock} ms: {rows:?}");
    // The user-mode faults, under their own name.
    let faults = metric(&user, "perf-stat.page-faults:u", &syscall)["value"]
        .as_f64()
        .unwrap();
    assert!(faults > 0.0, "{rows:?}");
    // No row that would read 0 or mean a full count.
    for gone in [
        "perf-stat.context-switches",
        "perf-stat.cpu-migrations",
        "perf-stat.page-faults",
    ] {
        assert!(!rows.iter().any(|r| r == gone), "{gone} in {rows:?}");
    }
    let missing = user["monitors"][0]["sample"]["missing"].to_string();
    assert!(missing.contains("counting user space only"), "{missing}");

    let err = perf_stat_run(&root_dir, &root_json, false);
    assert!(!err.contains("counting user space only"), "{err}");
    let root = read_json(&root_json);
    let rows = perf_stat_rows(&root);
    for full in [
        "perf-stat.task-clock",
        "perf-stat.page-faults",
        "perf-stat.context-switches",
        "perf-stat.cpu-migrations",
    ] {
        assert!(rows.iter().any(|r| r == full), "{full} not in {rows:?}");
    }
    assert!(!rows.iter().any(|r| r.ends_with(":u")), "{rows:?}");

    // compare: warned about, and no row judges a full count against a user-space one.
    let out = common::succeed(
        std_patchbench()
            .args(["compare", "--format", "json", "--why", "all"])
            .arg(&root_json)
            .arg(&user_json),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let warnings = doc["warnings"].to_string();
    assert!(
        warnings.contains("perf-stat counted differently") && warnings.contains("(:u)"),
        "{warnings}"
    );
    let why: Vec<&str> = doc["why"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    // The task clock is the same count either way: compared.
    assert!(why.contains(&"perf-stat.task-clock"), "{why:?}");
    assert!(
        !why.iter()
            .any(|n| n.starts_with("perf-stat.page-faults") || n.contains("context-switches")),
        "{why:?}"
    );
}
