//! A SQLite store's calls are bounded in time as a PostgreSQL store's are, through the knob a
//! user has (`PATCHBENCH_STORE_TIMEOUT`), for real: a write held up by a lock that another
//! process holds (`debug-hold-lock`) fails at the bound, not at the 15 s lock wait, in one
//! line naming the store, the statement, the holder and the bound, exit 2, nothing written,
//! the store read on afterwards; and an agent whose step's run cannot be stored within the
//! bound keeps it in its spool, tries again and stores it once. (A statement that runs past
//! the bound is interrupted and its transaction rolled back: `store::sqlite_deadline`'s test,
//! on a real store file.)

mod common;

use common::std_patchbench;
use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Starts `debug-hold-lock` on `store` for `ms` and returns once it holds the write lock.
fn hold_lock(store: &Path, ms: u64) -> Child {
    let mut holder = std_patchbench()
        .args(["debug-hold-lock", "--ms", &ms.to_string(), "--store"])
        .arg(store)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(holder.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "locked");
    holder
}

/// `patchbench runs --store STORE`: exit status and stdout.
fn runs(store: &Path) -> (Option<i32>, String) {
    let out = std_patchbench()
        .args(["runs", "--store"])
        .arg(store)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// A one-pass `run syscall` of `secs` seconds labelled `label`, stored in `store`.
fn run_cmd(store: &Path, dir: &Path, label: &str, secs: &str) -> std::process::Command {
    let mut c = std_patchbench();
    c.args(["run", "syscall", "--copies", "1"])
        .args(["--passes", "1", "--no-settle"])
        .args(["--duration", secs, "--label", label, "--dir"])
        .arg(dir)
        .arg("--store")
        .arg(store);
    c
}

#[test]
fn a_write_held_up_by_a_lock_fails_at_the_bound_in_one_line_and_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    common::succeed(&mut run_cmd(&store, d.path(), "first", "0.3"));

    // Held for 20 s: longer than the lock wait (15 s) a write would otherwise wait.
    let mut holder = hold_lock(&store, 20_000);
    let started = Instant::now();
    let out = run_cmd(&store, d.path(), "second", "0.3")
        .env("PATCHBENCH_STORE_TIMEOUT", "1")
        .output()
        .unwrap();
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(took < Duration::from_secs(12), "took {took:?}: {err}");
    let line: Vec<&str> = err.lines().filter(|l| l.contains("error:")).collect();
    assert_eq!(line.len(), 1, "{err}");
    assert!(
        line[0].contains(&format!("store {}: `BEGIN IMMEDIATE`", store.display()))
            && line[0].contains(&format!("waited for the lock held by pid {}", holder.id()))
            && line[0].contains("debug-hold-lock")
            && line[0].contains("until the 1.0 s bound of a store call (PATCHBENCH_STORE_TIMEOUT)")
            && line[0].contains("nothing was written"),
        "{err}"
    );
    // Reading is not held up by the writer's lock (WAL): the store opens and holds the first
    // run only.
    let (code, listed) = runs(&store);
    assert_eq!(code, Some(0));
    assert!(
        listed.contains("first") && !listed.contains("second"),
        "{listed}"
    );
    let _ = holder.kill();
    let _ = holder.wait();
    let (code, listed) = runs(&store);
    assert_eq!(code, Some(0));
    assert_eq!(
        listed.lines().count(),
        2,
        "a header and the first run: {listed}"
    );
    assert!(!listed.contains("second"), "{listed}");
}

#[test]
fn an_agent_whose_run_cannot_be_stored_in_time_spools_it_and_stores_it_once() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("lab.db");
    let spool = d.path().join("spool.db");
    common::succeed(
        std_patchbench()
            .args([
                "campaign", "start", "bounded", "--boxes", "1", "--tag", "lab",
            ])
            .args(["--rounds", "1", "--store"])
            .arg(&store)
            .args(["--", "run", "syscall", "--duration", "2", "--passes", "1"])
            .args(["--no-settle", "--copies", "1"]),
    );

    let mut agent = std_patchbench()
        .args([
            "agent", "--box", "alpha", "--tag", "lab", "--once", "--poll", "1",
        ])
        .arg("--spool")
        .arg(&spool)
        .arg("--store")
        .arg(&store)
        .env("PATCHBENCH_STORE_TIMEOUT", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(agent.stderr.take().unwrap()).lines();
    let mut said = Vec::new();
    // The first step has been claimed and measures for 2 s: its run is stored after that,
    // while another process holds the store's write lock for 5 s.
    for l in lines.by_ref() {
        let l = l.unwrap();
        let starting = l.contains(": starting");
        said.push(l);
        if starting {
            break;
        }
    }
    let mut holder = hold_lock(&store, 5_000);
    said.extend(lines.map_while(Result::ok));
    let status = common::wait_with_timeout(&mut agent, Duration::from_secs(120));
    let _ = holder.wait();
    let all = said.join("\n");
    assert!(status.success(), "{all}");
    assert!(all.contains("the run waits in spool"), "{all}");
    assert!(
        all.contains("until the 1.0 s bound of a store call (PATCHBENCH_STORE_TIMEOUT)"),
        "{all}"
    );
    assert!(all.contains("the store is back"), "{all}");
    assert!(all.contains("the spooled run of step"), "{all}");
    // Both steps done, each with its one run, and nothing left in the spool.
    let s = common::open_store(&store);
    let c = s.campaign("bounded").unwrap().unwrap();
    let steps = s.steps(c.id).unwrap();
    assert_eq!(steps.len(), 2);
    assert!(
        steps.iter().all(
            |st| st.state == patchbench::record::campaign::state::StepState::Done
                && st.run_uuid.is_some()
        ),
        "{steps:?}"
    );
    let (code, listed) = runs(&store);
    assert_eq!(code, Some(0));
    assert_eq!(listed.lines().count() - 1, 2, "{listed}");
    let mut spooled = patchbench::store::spool::Spool::open(&spool).unwrap();
    assert_eq!(spooled.count(&s.location().shown()).unwrap(), 0);
}
