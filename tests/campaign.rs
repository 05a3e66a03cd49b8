//! `patchbench campaign` with the local executor, for real: an A/A campaign of 3 rounds, the
//! step records, status and report; SIGINT and SIGKILL mid-step, then `resume` (nothing lost
//! or duplicated, no workload left behind); a side whose setup fails (retried once, recorded
//! as failed with its console, the campaign goes on); `--until` deciding once after the pilot;
//! `stop`; and bad input refused before anything is stored.

mod common;

use common::{patchbench_with_store, processes_mentioning, wait_until, wait_with_timeout};
use patchbench::record::campaign::state::StepState;
use patchbench::store::db::Store;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

/// A one-test workload of about half a second, marked with `dir` so its processes can be found.
fn workload(dir: &Path, secs: &str) -> Vec<String> {
    [
        "run",
        "syscall",
        "--duration",
        secs,
        "--passes",
        "1",
        "--no-settle",
        "--copies",
        "1",
        "--dir",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([dir.display().to_string()])
    .collect()
}

fn start(store: &Path, name: &str, opts: &[&str], work: &[String]) -> std::process::Command {
    let mut c = patchbench_with_store(store);
    c.args(["campaign", "start", name])
        .args(opts)
        .arg("--")
        .args(work);
    c
}

/// Every run of the campaign is stored once per (round, side), with its step's record.
fn check_runs(store: &Path, name: &str, rounds: u32) {
    let s = common::open_store(store);
    let c = s.campaign(name).unwrap().unwrap();
    let runs = s.campaign_runs(c.id).unwrap();
    assert_eq!(runs.len() as u32, 2 * rounds, "one run per step");
    let mut seen = BTreeSet::new();
    let mut uuids = BTreeSet::new();
    for (_, r) in &runs {
        let step = r
            .campaign
            .as_ref()
            .expect("a campaign run records its step");
        assert_eq!(step.campaign, name);
        assert_eq!(
            r.label.as_deref(),
            Some(format!("{name}/{}", step.side).as_str())
        );
        assert_eq!(step.executor, "local");
        assert!(!step.kernel.release.is_empty() && !step.kernel.cmdline.is_empty());
        assert!(step.boot.as_ref().is_some_and(|b| !b.boot_id.is_empty()));
        assert!(
            seen.insert((step.round, step.side.clone())),
            "duplicate {step:?}"
        );
        assert!(uuids.insert(r.uuid.clone().unwrap()));
        assert!(!r.incomplete);
    }
    let all = s.list(None).unwrap();
    assert_eq!(all.len() as u32, 2 * rounds, "no other run stored");
    for round in 1..=rounds {
        let slots: Vec<u32> = runs
            .iter()
            .filter_map(|(_, r)| r.campaign.as_ref())
            .filter(|s| s.round == round)
            .map(|s| s.slot)
            .collect();
        assert_eq!(slots.len(), 2);
        assert_ne!(slots[0], slots[1]);
    }
}

/// `campaign resume NAME`, which must succeed; its stderr.
fn resume_ok(store: &Path, name: &str) -> String {
    let out = patchbench_with_store(store)
        .args(["campaign", "resume", name])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    err
}

/// The steps of campaign `name` now (none while the store cannot be read).
fn steps_now(store: &Path, name: &str) -> Vec<patchbench::record::campaign::state::Step> {
    Store::open(&common::file(store), patchbench::store::Access::Read, None)
        .ok()
        .and_then(|s| {
            let c = s.campaign(name).ok()??;
            s.steps(c.id).ok()
        })
        .unwrap_or_default()
}

#[test]
fn an_aa_campaign_of_three_rounds_stores_six_runs_and_reports_them() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    let out = start(
        &store,
        "aa",
        &["--rounds", "3", "--seed", "7"],
        &workload(d.path(), "0.3"),
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("campaign aa finished: 6 steps done, 0 failed"),
        "{err}"
    );
    check_runs(&store, "aa", 3);

    let status = patchbench_with_store(&store)
        .args(["campaign", "status", "aa"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success(), "{text}");
    assert!(text.contains("campaign aa: finished"), "{text}");
    assert!(text.contains("3 of 3 planned rounds complete"), "{text}");
    assert!(
        text.contains("unixbench.index[copies=1]") && text.contains("3 rounds paired"),
        "{text}"
    );

    let json = patchbench_with_store(&store)
        .args(["campaign", "status", "--format", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["campaigns"][0]["steps_done"], 6);
    assert_eq!(doc["campaigns"][0]["campaign"]["spec"]["seed"], 7);

    let report = patchbench_with_store(&store)
        .args(["campaign", "report", "aa"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    assert!(
        text.contains("System Call Overhead")
            && text.contains("3 pairs")
            && text.contains("paired 95%"),
        "{text}"
    );
    // The sides are stored under their labels, for `compare`, which gives the campaign's own
    // interval (its 95 % level, q < 0.025) and says why; --confidence chooses another.
    let cmp = patchbench_with_store(&store)
        .args(["compare", "aa/base", "aa/patched"])
        .output()
        .unwrap();
    assert!(cmp.status.success());
    let cmp_text = String::from_utf8_lossy(&cmp.stdout);
    assert!(cmp_text.contains("paired 95%"), "{cmp_text}");
    assert!(
        cmp_text.contains("95 % intervals, q < 0.025: campaign aa's own level"),
        "{cmp_text}"
    );
    let interval = |t: &str| {
        t.lines()
            .find(|l| l.starts_with("System Call Overhead"))
            .and_then(|l| l.split('|').nth(8).map(|c| c.trim().to_string()))
    };
    assert_eq!(interval(&text), interval(&cmp_text), "the same interval");
    let at90 = patchbench_with_store(&store)
        .args(["compare", "aa/base", "aa/patched", "--confidence", "0.90"])
        .output()
        .unwrap();
    let at90 = String::from_utf8_lossy(&at90.stdout);
    assert!(
        at90.contains("paired 90%") && !at90.contains("own level"),
        "{at90}"
    );
    // The same seed gives the same order.
    let again = d.path().join("again.db");
    start(
        &again,
        "aa",
        &["--rounds", "3", "--seed", "7"],
        &workload(d.path(), "0.2"),
    )
    .output()
    .unwrap();
    let order = |p: &Path| -> Vec<(u32, u32, String)> {
        let s = common::open_store(p);
        let c = s.campaign("aa").unwrap().unwrap();
        s.steps(c.id)
            .unwrap()
            .into_iter()
            .map(|st| (st.round, st.slot, st.side))
            .collect()
    };
    assert_eq!(order(&store), order(&again));
}

/// Stops a campaign with `sig` while its second step runs; returns the exit status.
fn interrupt_mid_step(
    store: &Path,
    name: &str,
    marker: &Path,
    sig: i32,
) -> std::process::ExitStatus {
    interrupt_mid_step_of(store, name, marker, sig).0
}

/// [`interrupt_mid_step`], and the campaign process's pid.
fn interrupt_mid_step_of(
    store: &Path,
    name: &str,
    marker: &Path,
    sig: i32,
) -> (std::process::ExitStatus, u32) {
    let mut child = start(store, name, &["--rounds", "2"], &workload(marker, "3"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mark = marker.display().to_string();
    // The first step is done and the second has started.
    wait_until(Duration::from_secs(120), "the second step", || {
        let done = Store::open(&common::file(store), patchbench::store::Access::Read, None)
            .ok()
            .and_then(|s| {
                let c = s.campaign(name).ok()??;
                Some(
                    s.steps(c.id)
                        .ok()?
                        .iter()
                        .filter(|st| st.state == StepState::Done)
                        .count(),
                )
            })
            .unwrap_or(0);
        // The workload has made its private directory in --dir (it does so after its noise
        // check: on a loaded machine later than the process's start).
        let working = common::entries(marker)
            .iter()
            .any(|n| n.starts_with("patchbench-"));
        done == 1 && processes_mentioning(&mark).len() >= 2 && working
    });
    std::thread::sleep(Duration::from_millis(300));
    common::signal(&child, sig);
    let status = wait_with_timeout(&mut child, Duration::from_secs(60));
    // No workload is left behind.
    wait_until(Duration::from_secs(20), "the workload to go", || {
        processes_mentioning(&mark).is_empty()
    });
    (status, pid)
}

#[test]
fn sigint_mid_step_hands_the_step_back_and_resume_completes() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    let status = interrupt_mid_step(&store, "int", d.path(), libc::SIGINT);
    assert_eq!(status.code(), Some(130));
    {
        let s = common::open_store(&store);
        let c = s.campaign("int").unwrap().unwrap();
        let steps = s.steps(c.id).unwrap();
        assert_eq!(
            steps.iter().filter(|s| s.state == StepState::Done).count(),
            1
        );
        assert_eq!(
            steps
                .iter()
                .filter(|s| s.state == StepState::Running)
                .count(),
            0
        );
        // The interrupted attempt is not counted.
        assert!(steps
            .iter()
            .all(|s| s.state != StepState::Planned || s.attempts == 0));
        assert_eq!(s.list(None).unwrap().len(), 1, "no half-stored run");
    }
    resume_ok(&store, "int");
    check_runs(&store, "int", 2);
}

#[test]
fn sigkill_mid_step_leaves_no_workload_and_resume_reruns_the_step() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    let (status, pid) = interrupt_mid_step_of(&store, "kill", d.path(), libc::SIGKILL);
    assert_eq!(status.code(), None);
    // What the killed process and its workload left: their private directories.
    let left_by = |dir: &Path, prefix: &str| -> Vec<String> {
        common::entries(dir)
            .into_iter()
            .filter(|n| n.starts_with(prefix))
            .collect()
    };
    let tmp = std::env::temp_dir();
    let ours = format!("patchbench-campaign-{pid}-");
    assert_eq!(
        left_by(&tmp, &ours).len(),
        1,
        "the campaign's private directory stays"
    );
    assert_eq!(
        left_by(d.path(), "patchbench-").len(),
        1,
        "the workload's private directory stays: {:?}",
        common::entries(d.path())
    );
    {
        let s = common::open_store(&store);
        let c = s.campaign("kill").unwrap().unwrap();
        let steps = s.steps(c.id).unwrap();
        // The killed process still owns its step; resume takes it back.
        assert_eq!(
            steps
                .iter()
                .filter(|s| s.state == StepState::Running)
                .count(),
            1
        );
        assert_eq!(s.list(None).unwrap().len(), 1, "no half-stored run");
    }
    let out = patchbench_with_store(&store)
        .args(["campaign", "resume", "kill"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("left unfinished; it runs again"), "{err}");
    assert!(
        err.contains("removed what killed patchbench processes left behind"),
        "{err}"
    );
    assert!(left_by(&tmp, &ours).is_empty(), "swept");
    assert!(
        left_by(d.path(), "patchbench-").is_empty(),
        "swept: {:?}",
        common::entries(d.path())
    );
    check_runs(&store, "kill", 2);
}

#[test]
fn a_campaign_whose_every_step_failed_exits_1_with_the_count() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    let out = start(
        &store,
        "allfail",
        &[
            "--rounds",
            "1",
            "--base-setup",
            "exit 3",
            "--patched-setup",
            "exit 3",
        ],
        &workload(d.path(), "0.2"),
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("0 steps done, 2 failed"), "{err}");
    assert!(
        err.contains("campaign allfail: every step failed (2); their errors"),
        "{err}"
    );
}

#[test]
fn a_failing_side_is_retried_once_then_recorded_and_the_campaign_goes_on() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    let out = start(
        &store,
        "fail",
        &[
            "--rounds",
            "2",
            "--patched-setup",
            "echo about to fail; echo \"console line $PATCHBENCH_SIDE\"; exit 3",
        ],
        &workload(d.path(), "0.2"),
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("2 steps done, 2 failed"), "{err}");
    assert!(
        err.contains("will be retried once") && err.contains("recorded as failed"),
        "{err}"
    );
    let s = common::open_store(&store);
    let c = s.campaign("fail").unwrap().unwrap();
    let failed: Vec<_> = s
        .steps(c.id)
        .unwrap()
        .into_iter()
        .filter(|s| s.state == StepState::Failed)
        .collect();
    assert_eq!(failed.len(), 2);
    for f in &failed {
        assert_eq!(f.side, "patched");
        assert_eq!(f.attempts, 2);
        assert!(f.error.as_deref().unwrap().contains("setup command failed"));
        assert!(f
            .console_tail
            .as_deref()
            .unwrap()
            .contains("console line patched"));
    }
    let status = patchbench_with_store(&store)
        .args(["campaign", "status", "fail"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains("2 of 4 steps failed") && text.contains("console line patched"),
        "{text}"
    );
    // The report says there is nothing to pair on the patched side.
    let report = patchbench_with_store(&store)
        .args(["campaign", "report", "fail"])
        .output()
        .unwrap();
    assert_eq!(report.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&report.stderr).contains("no stored run of the patched side"));
}

#[test]
fn until_decides_once_after_the_pilot_within_its_bounds() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    let out = start(
        &store,
        "until",
        &["--until", "0.1", "--max-rounds", "4"],
        &workload(d.path(), "0.2"),
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let s = common::open_store(&store);
    let c = s.campaign("until").unwrap().unwrap();
    let decision = c.decision.expect("decided after the pilot");
    // ±0.1 % is out of reach on this machine: the cap binds, and says so. Rounds this short
    // ask a pilot of 30 (as many as fit in 2 minutes), cut to the 4 allowed.
    assert_eq!(decision.rounds, 4);
    assert_eq!(decision.bound.as_deref(), Some("--max-rounds"));
    assert_eq!((decision.pilot_rounds, decision.pilot_pairs), (4, 4));
    assert!(decision.rounds_needed > 4);
    assert!(err.contains("a pilot of 4 rounds"), "{err}");
    assert!(err.contains("pilot 2/4: rounds for ±0.1 %: about"), "{err}");
    assert_eq!(c.planned_rounds, 4);
    check_runs(&store, "until", 4);
    assert!(err.contains("bound by --max-rounds"), "{err}");
}

#[test]
fn stop_ends_a_running_campaign_after_its_step() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    let mut child = start(&store, "stop", &["--rounds", "5"], &workload(d.path(), "1"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_until(Duration::from_secs(120), "a step to finish", || {
        Store::open(&common::file(&store), patchbench::store::Access::Read, None)
            .ok()
            .and_then(|s| Some(!s.list(None).ok()?.is_empty()))
            .unwrap_or(false)
    });
    // A second process may not run it at the same time.
    wait_until(Duration::from_secs(120), "a step to run", || {
        Store::open(&common::file(&store), patchbench::store::Access::Read, None)
            .ok()
            .and_then(|s| {
                let c = s.campaign("stop").ok()??;
                Some(
                    s.steps(c.id)
                        .ok()?
                        .iter()
                        .any(|st| st.state == StepState::Running),
                )
            })
            .unwrap_or(false)
    });
    let twice = patchbench_with_store(&store)
        .args(["campaign", "resume", "stop"])
        .output()
        .unwrap();
    assert_eq!(twice.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&twice.stderr).contains("is being run by process"));
    let out = patchbench_with_store(&store)
        .args(["campaign", "stop", "stop"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let status = wait_with_timeout(&mut child, Duration::from_secs(60));
    assert!(status.success());
    let s = common::open_store(&store);
    let c = s.campaign("stop").unwrap().unwrap();
    assert_eq!(c.state.as_str(), "stopped");
    let done = s.list(None).unwrap().len();
    assert!((1..10).contains(&done), "{done}");
    let resume = patchbench_with_store(&store)
        .args(["campaign", "resume", "stop"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&resume.stderr).contains("is stopped; nothing to resume"));
}

#[test]
fn scratch_gives_each_step_a_fresh_ext4_and_leaves_no_mount() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    let out = start(
        &store,
        "scratch",
        &["--rounds", "1", "--scratch", "ext4:32M"],
        &[
            "run",
            "fstime-w",
            "--duration",
            "0.3",
            "--passes",
            "1",
            "--no-settle",
            "--copies",
            "1",
        ]
        .map(String::from),
    )
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = common::open_store(&store);
    let c = s.campaign("scratch").unwrap().unwrap();
    for (_, r) in s.campaign_runs(c.id).unwrap() {
        assert_eq!(r.config["dir_fstype"], "ext4", "{:?}", r.config);
        let step = r.campaign.unwrap();
        assert_eq!(step.scratch.as_deref(), Some("ext4:32M on a loop device"));
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(
        !mounts.contains("patchbench-campaign-"),
        "a scratch mount was left"
    );
}

#[test]
fn bad_input_is_refused_before_anything_is_stored() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    let work = workload(d.path(), "0.2");
    let not_a_kernel = d.path().join("vmlinuz");
    std::fs::write(&not_a_kernel, "not a kernel").unwrap();
    let nk = format!("{}:pti=on", not_a_kernel.display());
    let cases: Vec<(Vec<&str>, Vec<String>, &str)> = vec![
        (vec![], vec!["list".into()], "measuring command"),
        (vec![], vec!["check".into()], "measuring command"),
        (
            vec![],
            [work.clone(), vec!["--json".into(), "x.json".into()]].concat(),
            "--json",
        ),
        (
            vec![],
            [work.clone(), vec!["--label".into(), "x".into()]].concat(),
            "--label",
        ),
        (vec!["--scratch", "ext4:64M"], work.clone(), "--scratch"),
        (vec!["--duet"], work.clone(), "--duet"),
        (vec!["--base-setup", " "], work.clone(), "empty"),
        (
            vec!["--base", "/nonexistent/vmlinuz"],
            work.clone(),
            "cannot read kernel image",
        ),
        (
            vec!["--base", &nk, "--executor", "vm"],
            work.clone(),
            "not a Linux kernel image",
        ),
        (
            vec!["--base", ":pti=on", "--executor", "local"],
            work.clone(),
            "local executor",
        ),
        (vec!["--rounds", "0"], work.clone(), "--rounds"),
        (
            vec!["--until", "1e-300"],
            work.clone(),
            "from 0.01 to 50 percent",
        ),
        (
            vec!["--until", "80"],
            work.clone(),
            "from 0.01 to 50 percent",
        ),
        (
            vec!["--no-such-option"],
            work.clone(),
            "unexpected argument",
        ),
        (vec!["--scratch", "xfs:1G"], work.clone(), "ext4"),
        (
            vec!["--base", ":pti=on", "--executor", "vm"],
            [
                work.clone(),
                vec!["--profile".into(), "--profile-data".into(), "pd".into()],
            ]
            .concat(),
            "inside each vm guest",
        ),
    ];
    for (opts, w, why) in cases {
        let out = start(&store, "bad", &opts, &w).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{opts:?} {w:?}: {err}");
        assert!(err.contains(why), "{opts:?}: {err}");
        // One line, clap's own refusals too.
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(!store.exists(), "{opts:?} created the store");
    }
    let bad_name = start(&store, "a b", &[], &work).output().unwrap();
    assert_eq!(bad_name.status.code(), Some(2));
    // A second campaign of the same name is refused, and the first is untouched.
    assert!(start(&store, "once", &["--rounds", "1"], &work)
        .status()
        .unwrap()
        .success());
    let out = start(&store, "once", &["--rounds", "1"], &work)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists"));
    assert_eq!(common::open_store(&store).list(None).unwrap().len(), 2);
}

/// A local campaign stored as `campaign start` stores it, without running it (so that a test
/// can start its processes itself).
fn planned(store: &Path, name: &str, rounds: u32, work: &[String], setup: Option<&str>) {
    let spec: patchbench::record::campaign::spec::CampaignSpec =
        serde_json::from_value(serde_json::json!({
            "name": name,
            "sides": [{"name": "base"}, {"name": "patched", "setup": setup}],
            "workload": work, "schedule": {"rounds": {"rounds": rounds}}, "order": "random",
            "seed": 5, "executor": "local", "step_timeout_s": 120.0, "confidence": 0.95,
            "program": env!("CARGO_BIN_EXE_patchbench"),
            "started_on": patchbench::sysinfo::hostname()
        }))
        .unwrap();
    let mut s = common::create_store(store);
    patchbench::campaign::create(&mut s, &spec).unwrap();
}

/// The (start, end) of every stored run of campaign `name`, by its record's times, sorted.
fn run_times(store: &Path, name: &str) -> Vec<(String, String)> {
    let s = common::open_store(store);
    let c = s.campaign(name).unwrap().unwrap();
    let mut t: Vec<(String, String)> = s
        .campaign_runs(c.id)
        .unwrap()
        .into_iter()
        .map(|(_, r)| (r.started_at, r.finished_at))
        .collect();
    t.sort();
    t
}

/// No two runs overlap in time.
fn one_at_a_time(times: &[(String, String)]) {
    for w in times.windows(2) {
        let gap = patchbench::clock::secs_between(&w[0].1, &w[1].0).unwrap();
        assert!(gap >= 0.0, "two runs at once: {w:?}");
    }
}

#[test]
fn two_resumes_started_together_never_run_at_once_and_the_loser_names_the_owner() {
    let d = tempfile::tempdir().unwrap();
    for i in 0..20 {
        let store = d.path().join(format!("s{i}.db"));
        planned(&store, "race", 1, &workload(d.path(), "0.2"), None);
        let spawn = || {
            patchbench_with_store(&store)
                .args(["campaign", "resume", "race"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (spawn(), spawn());
        let pids = [a.id(), b.id()];
        let outs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
        let text = |k: usize| String::from_utf8_lossy(&outs[k].stderr).into_owned();
        let won: Vec<usize> = (0..2).filter(|&k| outs[k].status.success()).collect();
        assert_eq!(
            won.len(),
            1,
            "try {i}: exactly one runs it:\n{}\n{}",
            text(0),
            text(1)
        );
        let (w, l) = (won[0], 1 - won[0]);
        assert!(
            text(w).contains("campaign race finished: 2 steps done"),
            "try {i}: {}",
            text(w)
        );
        let loser = text(l);
        assert_eq!(outs[l].status.code(), Some(2), "try {i}: {loser}");
        assert!(
            loser.contains(&format!("is being run by process {}", pids[w]))
                && loser.lines().count() == 1,
            "try {i}: the loser names the owner in one line: {loser}"
        );
        check_runs(&store, "race", 1);
        one_at_a_time(&run_times(&store, "race"));
    }
}

#[test]
fn a_setup_that_leaves_processes_behind_neither_holds_the_step_nor_outlives_it() {
    let d = tempfile::tempdir().unwrap();
    for (i, setup) in ["sleep 30.{m} &", "setsid sleep 30.{m} >/dev/null 2>&1 &"]
        .iter()
        .enumerate()
    {
        // A sleep of its own, told from every other by its argument.
        let mark = format!("{}{i}", std::process::id() % 10000);
        let setup = setup.replace("{m}", &mark);
        let store = d.path().join(format!("s{i}.db"));
        let started = std::time::Instant::now();
        let out = start(
            &store,
            "bg",
            &["--rounds", "1", "--patched-setup", &setup],
            &workload(d.path(), "0.2"),
        )
        .output()
        .unwrap();
        let took = started.elapsed();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{setup}: {err}");
        eprintln!("{setup:?}: the campaign of 2 steps took {took:.1?}");
        assert!(
            took < Duration::from_secs(20),
            "{setup:?}: the step waited for the background process: {took:?}"
        );
        let sleeping = format!("30.{mark}");
        assert!(
            processes_mentioning(&sleeping).is_empty(),
            "{setup:?}: the background process outlived its step"
        );
        // Named as `sleep`, or as `sh` when the background shell had not yet exec'd sleep
        // when the step ended (a loaded machine).
        let left = |text: &str| text.starts_with("sleep (pid") || text.starts_with("sh (pid");
        let line = "it ended what its setup or workload left running: ";
        assert!(err.split(line).nth(1).is_some_and(left), "{setup:?}: {err}");
        // The patched step's record names it.
        let s = common::open_store(&store);
        let c = s.campaign("bg").unwrap().unwrap();
        let runs = s.campaign_runs(c.id).unwrap();
        let patched = runs
            .iter()
            .find_map(|(_, r)| r.campaign.as_ref().filter(|i| i.side == "patched"))
            .unwrap();
        assert!(patched.leftovers.iter().any(|l| left(l)), "{patched:?}");
        let base = runs
            .iter()
            .find_map(|(_, r)| r.campaign.as_ref().filter(|i| i.side == "base"))
            .unwrap();
        assert!(base.leftovers.is_empty(), "{base:?}");
    }
}

#[test]
fn status_after_sigkill_names_the_dead_owner_and_how_to_resume() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    let mut child = start(&store, "dead", &["--rounds", "2"], &workload(d.path(), "3"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    wait_until(Duration::from_secs(120), "a step to run", || {
        steps_now(&store, "dead")
            .iter()
            .any(|st| st.state == StepState::Running)
    });
    common::signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    let out = patchbench_with_store(&store)
        .args(["campaign", "status", "dead"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains(&format!(
            "was being run by process {pid}, which is gone from this host (killed or crashed); \
             `patchbench campaign resume dead` runs it again"
        )),
        "{text}"
    );
    assert!(
        !text.contains("  running:"),
        "a dead owner is not running: {text}"
    );
    // resume runs it again, and status then says nothing stalled.
    resume_ok(&store, "dead");
    check_runs(&store, "dead", 2);
}

#[test]
fn runs_removed_with_rm_are_noticed_and_resume_runs_exactly_those_steps_again() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    let out = start(&store, "rm", &["--rounds", "2"], &workload(d.path(), "0.2"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Remove the patched side's runs.
    type Runs = Vec<(i64, String)>;
    let (gone, kept): (Runs, Runs) = {
        let s = common::open_store(&store);
        let c = s.campaign("rm").unwrap().unwrap();
        s.campaign_runs(c.id)
            .unwrap()
            .into_iter()
            .map(|(id, r)| (id, r.campaign.unwrap().side))
            .partition(|(_, side)| side == "patched")
    };
    assert_eq!((gone.len(), kept.len()), (2, 2));
    let out = patchbench_with_store(&store)
        .arg("rm")
        .args(gone.iter().map(|(id, _)| id.to_string()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status = patchbench_with_store(&store)
        .args(["campaign", "status", "rm"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains("lost:      2 done step(s) have no stored run any more")
            && text.contains("round 1 patched")
            && text.contains("round 2 patched")
            && text.contains("`patchbench campaign resume rm` runs them again"),
        "{text}"
    );
    let report = patchbench_with_store(&store)
        .args(["campaign", "report", "rm"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&report.stderr);
    assert_eq!(report.status.code(), Some(2));
    assert!(err.contains("2 done step(s) lost their runs"), "{err}");
    let out = patchbench_with_store(&store)
        .args(["campaign", "resume", "rm"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    for round in [1, 2] {
        assert!(
            err.contains(&format!(
                "campaign rm: round {round} patched: its run is gone from the store (removed?); \
                 it runs again"
            )),
            "{err}"
        );
    }
    // Exactly those two ran: two `starting` lines, both patched.
    let started: Vec<&str> = err.lines().filter(|l| l.contains(": starting")).collect();
    assert_eq!(started.len(), 2, "{err}");
    assert!(
        started.iter().all(|l| l.contains(" patched: starting")),
        "{err}"
    );
    check_runs(&store, "rm", 2);
    // The base runs kept their ids.
    let s = common::open_store(&store);
    let c = s.campaign("rm").unwrap().unwrap();
    let ids: Vec<i64> = s
        .campaign_runs(c.id)
        .unwrap()
        .iter()
        .map(|(id, _)| *id)
        .collect();
    for (id, _) in &kept {
        assert!(ids.contains(id), "{ids:?}");
    }
}

/// Clears the immutable attribute of a file when dropped (whatever the test did).
struct Mutable(std::path::PathBuf);

impl Drop for Mutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .status();
    }
}

#[test]
fn a_store_index_made_immutable_mid_campaign_ends_it_with_one_line() {
    // On the build's disk: a tmpfs has no immutable attribute.
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let store = d.path().join("s.db");
    let mut child = start(&store, "bus", &["--rounds", "3"], &workload(d.path(), "1"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(Duration::from_secs(120), "a stored step", || {
        steps_now(&store, "bus")
            .iter()
            .any(|st| st.state == StepState::Done)
    });
    let shm = d.path().join("s.db-shm");
    let _undo = Mutable(shm.clone());
    let set = std::process::Command::new("chattr")
        .arg("+i")
        .arg(&shm)
        .output()
        .expect("this test needs chattr (e2fsprogs)");
    assert!(
        set.status.success(),
        "this test needs root and a file system with the immutable attribute (ext4, xfs) \
         under {}: {}",
        env!("CARGO_TARGET_TMPDIR"),
        String::from_utf8_lossy(&set.stderr)
    );
    let status = wait_with_timeout(&mut child, Duration::from_secs(120));
    let mut err = String::new();
    use std::io::Read;
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(2), "{status}: {err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("patchbench: error: a memory-mapped file could not be accessed (SIGBUS)"),
        "{err}"
    );
    assert_eq!(
        err.lines().filter(|l| l.contains("error")).count(),
        1,
        "{err}"
    );
    drop(_undo);
    resume_ok(&store, "bus");
    check_runs(&store, "bus", 3);
}

#[test]
fn a_resume_on_a_full_disk_is_refused_before_any_step_runs() {
    let d = tempfile::tempdir().unwrap();
    let fs = common::Tmpfs::mount("size=4m");
    let store = fs.path.join("s.db");
    planned(&store, "full", 1, &workload(d.path(), "0.2"), None);
    fs.fill();
    let started = std::time::Instant::now();
    let out = patchbench_with_store(&store)
        .args(["campaign", "resume", "full"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("full"), "{err}");
    assert!(!err.contains("starting"), "a step ran: {err}");
    assert!(started.elapsed() < Duration::from_secs(10));
    std::fs::remove_file(fs.path.join("filler")).unwrap();
    let s = common::open_store(&store);
    let c = s.campaign("full").unwrap().unwrap();
    assert!(s
        .steps(c.id)
        .unwrap()
        .iter()
        .all(|st| st.state == StepState::Planned && st.attempts == 0));
    drop(s);
    resume_ok(&store, "full");
    check_runs(&store, "full", 1);
}

#[test]
fn a_kexec_campaign_refuses_a_server_store_up_front() {
    // The boot hook's command with a server store: refused before anything is reached.
    let out = common::std_patchbench()
        .args(["campaign", "resume", "--boot", "--store"])
        .arg("postgres://lab@db.invalid/results?sslmode=require")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("a kexec campaign keeps its state in a local SQLite store")
            && err.contains("give --store PATH"),
        "{err}"
    );
}
