//! The driver and the flow, tested with the scripted executor on a SQLite store in a temp
//! dir: the planned order (balanced pairs of rounds), the retry rule, resume after a crash,
//! an interruption or a failure at every point of a campaign, `--until`'s decision and its
//! bounds, `campaign stop`, and a lab box released mid-round. No QEMU, no server, no
//! workload: each test takes well under a second of steps.

use super::driver::{Driver, End};
use super::scripted::{Act, Log, Scripted};
use super::{flow, Resumed};
use crate::proc::signals::Signals;
use crate::progress::Progress;
use crate::record::campaign::plan;
use crate::record::campaign::spec::{CampaignSpec, Order};
use crate::record::campaign::state::{CampaignState, Owner, StepState};
use crate::store::db::Store;
use crate::store::{Access, Location};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn spec(name: &str, schedule: serde_json::Value) -> CampaignSpec {
    serde_json::from_value(serde_json::json!({
        "name": name, "sides": [{"name": "base"}, {"name": "patched"}],
        "workload": ["run", "syscall"], "schedule": schedule, "order": "random", "seed": 11,
        "executor": "local", "step_timeout_s": 60.0, "confidence": 0.95,
        "program": "patchbench", "started_on": crate::sysinfo::hostname()
    }))
    .unwrap()
}

fn rounds(n: u32) -> serde_json::Value {
    serde_json::json!({"rounds": {"rounds": n}})
}

fn location(dir: &Path) -> Location {
    Location::File(dir.join("s.db"))
}

fn open(dir: &Path) -> Store {
    Store::open(&location(dir), Access::Create, None).unwrap()
}

/// A temp dir with a store holding a campaign of `spec`.
fn stored(spec: &CampaignSpec) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let mut store = open(d.path());
    flow::create(&mut store, spec).unwrap();
    let p = d.path().to_path_buf();
    (d, p)
}

/// An owner that is dead on this host (an earlier boot of it): what a killed process leaves.
fn dead_owner() -> String {
    Owner {
        boot_id: "an-earlier-boot".into(),
        ..Owner::me()
    }
    .to_string()
}

/// Drives campaign `name` with `executor` as `owner` (a crash is caught: the step it was
/// running stays claimed by `owner`); the drive's end, or None after a crash.
fn drive_as(
    dir: &Path,
    name: &str,
    executor: &mut Scripted,
    owner: &str,
    r#box: Option<&str>,
) -> Option<anyhow::Result<End>> {
    drive_leased(dir, name, executor, owner, r#box, 0.0)
}

/// [`drive_as`] with a lease of `lease_s` seconds (renewed while a step runs).
fn drive_leased(
    dir: &Path,
    name: &str,
    executor: &mut Scripted,
    owner: &str,
    r#box: Option<&str>,
    lease_s: f64,
) -> Option<anyhow::Result<End>> {
    let mut store = open(dir);
    let signals = Signals::install().unwrap();
    let mut progress = Progress::hidden();
    let mut driver = Driver {
        store: &mut store,
        executor,
        signals: &signals,
        progress: &mut progress,
        owner: owner.to_string(),
        lease_s,
        r#box: r#box.map(str::to_string),
        spool: None,
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| driver.drive(name))).ok()
}

fn resume(dir: &Path, name: &str, executor: &mut Scripted) -> Resumed {
    // `flow::resume` makes the campaign's own executor (local): drive the scripted one after
    // the same checks and take-backs, as `resume` does.
    let mut store = open(dir);
    let signals = Signals::install().unwrap();
    let mut progress = Progress::hidden();
    let c = flow::find(&store, name).unwrap();
    if !c.state.is_open() {
        return Resumed::AlreadyOver(c.state);
    }
    flow::take_back_dead(&mut store, &c, &mut progress).unwrap();
    Resumed::Ran(flow::run(&mut store, name, executor, &signals, &mut progress).unwrap())
}

/// Every (round, side) of the campaign is done once, with one stored run each.
fn each_step_stored_once(dir: &Path, name: &str) {
    let store = open(dir);
    let c = flow::find(&store, name).unwrap();
    let steps = store.steps(c.id).unwrap();
    assert!(
        steps.iter().all(|s| s.state == StepState::Done),
        "{steps:?}"
    );
    let runs = store.campaign_runs(c.id).unwrap();
    assert_eq!(runs.len(), steps.len(), "one run per step");
    assert_eq!(store.list(None).unwrap().len(), steps.len(), "no other run");
    let mut seen = std::collections::BTreeSet::new();
    for (_, r) in &runs {
        let s = r.campaign.as_ref().unwrap();
        assert!(seen.insert((s.round, s.side.clone())), "twice: {s:?}");
    }
}

fn sides_by_round(log: &Log) -> BTreeMap<u32, Vec<String>> {
    let mut out: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for r in log.lock().unwrap().iter() {
        out.entry(r.round).or_default().push(r.side.clone());
    }
    out
}

#[test]
fn steps_run_in_the_planned_order_and_every_pair_of_rounds_is_balanced() {
    for order in [Order::Random, Order::Abba] {
        let mut s = spec("order", rounds(6));
        s.order = order;
        for seed in [1, 2, 3, 99] {
            s.seed = seed;
            let (_d, dir) = stored(&s);
            let mut ex = Scripted::measuring(100.0);
            let end = drive_as(&dir, "order", &mut ex, &Owner::me().to_string(), None);
            assert_eq!(end.unwrap().unwrap(), End::Finished);
            let by_round = sides_by_round(&ex.log());
            for round in 1..=6 {
                let want: Vec<String> = plan::round_order(order, seed, round)
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                assert_eq!(
                    by_round[&round], want,
                    "{order:?} seed {seed} round {round}"
                );
            }
            for pair in [1, 3, 5] {
                assert_ne!(
                    by_round[&pair][0],
                    by_round[&(pair + 1)][0],
                    "rounds {pair} and {} begin with the same side",
                    pair + 1
                );
            }
            each_step_stored_once(&dir, "order");
            let store = open(&dir);
            let c = flow::find(&store, "order").unwrap();
            assert_eq!(c.state, CampaignState::Finished);
        }
    }
}

#[test]
fn a_failing_step_is_retried_once_then_recorded_and_the_campaign_goes_on() {
    let (_d, dir) = stored(&spec("retry", rounds(3)));
    // Round 2 patched always fails; round 3 base fails once, then works.
    let mut failed_once = false;
    let mut ex = Scripted::new(move |req| match (req.step.round, req.step.side.as_str()) {
        (2, "patched") => Act::fail("always"),
        (3, "base") if !failed_once => {
            failed_once = true;
            Act::fail("once")
        }
        _ => Act::measure(100.0),
    });
    let end = drive_as(&dir, "retry", &mut ex, &Owner::me().to_string(), None);
    assert_eq!(end.unwrap().unwrap(), End::Finished);
    let log = ex.log();
    let attempts = |round, side: &str| -> Vec<u32> {
        log.lock()
            .unwrap()
            .iter()
            .filter(|r| r.round == round && r.side == side)
            .map(|r| r.attempt)
            .collect()
    };
    assert_eq!(attempts(2, "patched"), [1, 2], "retried once, not more");
    assert_eq!(attempts(3, "base"), [1, 2]);
    assert_eq!(attempts(1, "base"), [1]);
    let store = open(&dir);
    let c = flow::find(&store, "retry").unwrap();
    let steps = store.steps(c.id).unwrap();
    let failed: Vec<_> = steps
        .iter()
        .filter(|s| s.state == StepState::Failed)
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!((failed[0].round, failed[0].side.as_str()), (2, "patched"));
    assert_eq!(failed[0].error.as_deref(), Some("always"));
    assert_eq!(
        failed[0].console_tail.as_deref(),
        Some("the scripted console")
    );
    let retried = steps
        .iter()
        .find(|s| s.round == 3 && s.side == "base")
        .unwrap();
    assert_eq!((retried.state, retried.attempts), (StepState::Done, 2));
    assert_eq!(
        retried.error.as_deref(),
        Some("once"),
        "the failure is kept"
    );
    assert_eq!(c.state, CampaignState::Finished);
    assert_eq!(c.state_reason.as_deref(), Some("1 of 6 steps failed"));
    assert_eq!(store.campaign_runs(c.id).unwrap().len(), 5);
}

/// What goes wrong at the chosen step of a first drive.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// The process dies (SIGKILL, power loss) while the step runs.
    Crash,
    /// Ctrl-C: the step is handed back.
    Interrupt,
    /// The step fails once, then the process dies during its retry.
    FailThenCrash,
}

#[test]
fn resume_after_a_fault_at_every_step_runs_each_step_exactly_once() {
    const ROUNDS: u32 = 3;
    let steps = 2 * ROUNDS as usize;
    for fault in [Fault::Crash, Fault::Interrupt, Fault::FailThenCrash] {
        for at in 0..steps {
            let (_d, dir) = stored(&spec("r", rounds(ROUNDS)));
            let mut calls = 0;
            let mut first = Scripted::new(move |_| {
                calls += 1;
                match (fault, calls - 1) {
                    (Fault::Crash, n) if n == at => Act::Crash,
                    (Fault::Interrupt, n) if n == at => Act::Interrupt { secs: 0.0 },
                    (Fault::FailThenCrash, n) if n == at => Act::fail("first attempt"),
                    (Fault::FailThenCrash, n) if n == at + 1 => Act::Crash,
                    _ => Act::measure(100.0),
                }
            });
            let owner = dead_owner();
            let end = drive_as(&dir, "r", &mut first, &owner, None);
            match fault {
                Fault::Crash | Fault::FailThenCrash => assert!(end.is_none(), "it crashed"),
                Fault::Interrupt => {
                    let e = end.unwrap().unwrap_err();
                    assert!(e.downcast_ref::<crate::error::Interrupted>().is_some());
                }
            }
            let done_before: Vec<(u32, String)> = {
                let store = open(&dir);
                let c = flow::find(&store, "r").unwrap();
                store
                    .steps(c.id)
                    .unwrap()
                    .into_iter()
                    .filter(|s| s.state == StepState::Done)
                    .map(|s| (s.round, s.side))
                    .collect()
            };
            assert_eq!(done_before.len(), at, "{fault:?} at {at}");
            let mut second = Scripted::measuring(100.0);
            let resumed = resume(&dir, "r", &mut second);
            assert!(
                matches!(&resumed, Resumed::Ran(s) if s.end == End::Finished && s.done == steps),
                "{fault:?} at {at}: {resumed:?}"
            );
            // The resumed drive ran exactly the steps not done before, the faulty one first.
            let ran: Vec<(u32, String)> = second
                .log()
                .lock()
                .unwrap()
                .iter()
                .map(|r| (r.round, r.side.clone()))
                .collect();
            assert_eq!(ran.len(), steps - at, "{fault:?} at {at}: {ran:?}");
            assert!(ran.iter().all(|s| !done_before.contains(s)));
            let attempt = second.log().lock().unwrap()[0].attempt;
            let want = match fault {
                // The killed attempt is not counted against the step.
                Fault::Crash | Fault::Interrupt => 1,
                // The failed attempt is; the killed retry is not.
                Fault::FailThenCrash => 2,
            };
            assert_eq!(attempt, want, "{fault:?} at {at}");
            each_step_stored_once(&dir, "r");
        }
    }
}

#[test]
fn a_finished_or_stopped_campaign_has_nothing_to_resume() {
    let (_d, dir) = stored(&spec("over", rounds(1)));
    let mut ex = Scripted::measuring(100.0);
    drive_as(&dir, "over", &mut ex, &Owner::me().to_string(), None);
    let mut again = Scripted::measuring(100.0);
    assert_eq!(
        resume(&dir, "over", &mut again),
        Resumed::AlreadyOver(CampaignState::Finished)
    );
    assert!(again.log().lock().unwrap().is_empty());
}

#[test]
fn stop_ends_the_campaign_after_the_step_that_runs() {
    let (_d, dir) = stored(&spec("stop", rounds(4)));
    let at = dir.clone();
    let mut calls = 0;
    let mut ex = Scripted::new(move |_| {
        calls += 1;
        if calls == 3 {
            // `campaign stop` from another process, while this step runs.
            let mut other = open(&at);
            // (What it removed depends on what killed processes left on this machine.)
            assert!(matches!(
                flow::stop(&mut other, "stop").unwrap(),
                flow::Stopped::Now(CampaignState::Stopping, _)
            ));
        }
        Act::measure(100.0)
    });
    let end = drive_as(&dir, "stop", &mut ex, &Owner::me().to_string(), None);
    assert_eq!(end.unwrap().unwrap(), End::Stopped);
    assert_eq!(
        ex.log().lock().unwrap().len(),
        3,
        "the running step ended it"
    );
    let mut store = open(&dir);
    let c = flow::find(&store, "stop").unwrap();
    assert_eq!(c.state, CampaignState::Stopped);
    assert_eq!(
        flow::stop(&mut store, "stop").unwrap(),
        flow::Stopped::AlreadyOver(CampaignState::Stopped)
    );
}

/// Values whose per-round ratio patched/base spreads by about `sd` (deterministic).
fn spread(sd: f64) -> impl FnMut(&super::executor::StepRequest) -> Act + Send {
    move |req| {
        let wiggle = [0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5][req.step.round as usize % 7];
        let v = if req.step.side == "patched" {
            100.0 * (1.0 + sd * wiggle)
        } else {
            100.0
        };
        Act::Measure {
            value: v,
            secs: 0.0,
        }
    }
}

#[test]
fn until_decides_once_after_the_pilot_within_max_rounds() {
    let s = spec(
        "until",
        serde_json::json!({"until": {"pct": 0.5, "max_rounds": 9}}),
    );
    let (_d, dir) = stored(&s);
    let pilot = s.schedule.initial_rounds();
    let mut ex = Scripted::new(spread(0.05));
    let end = drive_as(&dir, "until", &mut ex, &Owner::me().to_string(), None);
    assert_eq!(end.unwrap().unwrap(), End::Finished);
    let store = open(&dir);
    let c = flow::find(&store, "until").unwrap();
    let d = c.decision.clone().expect("decided after the pilot");
    assert!(d.rounds_needed > 9, "a 5 % spread needs many rounds: {d:?}");
    assert_eq!(d.rounds, 9);
    assert_eq!(d.bound.as_deref(), Some("--max-rounds"));
    // Steps that take no time: the pilot is as many rounds as --max-rounds allows (it grew
    // from the 3 first planned once round 1's time was known).
    assert_eq!(pilot, 3);
    assert_eq!((d.pilot_rounds, d.pilot_pairs), (9, 9));
    assert_eq!(c.planned_rounds, 9);
    each_step_stored_once(&dir, "until");
    assert_eq!(ex.log().lock().unwrap().len(), 18);
    // The decision is made once: another drive changes nothing.
    let mut again = Scripted::new(spread(0.5));
    drive_as(&dir, "until", &mut again, &Owner::me().to_string(), None);
    let c2 = flow::find(&open(&dir), "until").unwrap();
    assert_eq!(c2.decision, Some(d));
    assert!(again.log().lock().unwrap().is_empty());
}

/// A `--until 5` campaign of `max_rounds` whose rounds barely differ, driven to its end.
fn calm_until(name: &str, max_rounds: u32) -> (tempfile::TempDir, PathBuf) {
    let s = spec(
        name,
        serde_json::json!({"until": {"pct": 5.0, "max_rounds": max_rounds}}),
    );
    let (d, dir) = stored(&s);
    let mut ex = Scripted::new(spread(0.001));
    drive_as(&dir, name, &mut ex, &Owner::me().to_string(), None);
    (d, dir)
}

#[test]
fn a_cap_below_the_paired_floor_is_no_bound_when_steins_rule_needs_fewer() {
    // --max-rounds 6 at 95 %: the floor (7 pairs for a paired verdict) is above the cap, but
    // Stein's rule needs fewer than 6 for a spread this small, so no bound cut it short.
    let (_d, dir) = calm_until("floor", 6);
    let d = flow::find(&open(&dir), "floor").unwrap().decision.unwrap();
    assert!(d.rounds_needed <= 6, "{d:?}");
    assert_eq!(d.rounds, 6, "{d:?}");
    assert_eq!(d.bound, None, "{d:?}");
}

#[test]
fn until_needs_few_rounds_for_a_small_spread_and_never_fewer_than_the_pilot() {
    let (_d, dir) = calm_until("calm", 50);
    let c = flow::find(&open(&dir), "calm").unwrap();
    let d = c.decision.unwrap();
    assert_eq!(d.bound, None, "{d:?}");
    assert!(d.rounds >= d.pilot_pairs as u32 && d.rounds < 50, "{d:?}");
    assert_eq!(c.planned_rounds, d.rounds);
    each_step_stored_once(&dir, "calm");
}

#[test]
fn until_is_bound_by_max_time_and_finishes_when_it_is_reached() {
    // Steps of 40 ms, a round of about 80 ms; 1.2 s leaves room for about a dozen rounds.
    let s = spec(
        "timed",
        serde_json::json!({"until": {"pct": 0.1, "max_rounds": 1000, "max_time_s": 1.2}}),
    );
    let (_d, dir) = stored(&s);
    let mut inner = spread(0.05);
    let mut ex = Scripted::new(move |req| match inner(req) {
        Act::Measure { value, .. } => Act::Measure { value, secs: 0.04 },
        other => other,
    });
    let started = std::time::Instant::now();
    let end = drive_as(&dir, "timed", &mut ex, &Owner::me().to_string(), None);
    assert_eq!(end.unwrap().unwrap(), End::Finished);
    assert!(started.elapsed().as_secs_f64() < 5.0);
    let c = flow::find(&open(&dir), "timed").unwrap();
    let d = c.decision.unwrap();
    assert_eq!(d.bound.as_deref(), Some("--max-time"), "{d:?}");
    assert!(d.rounds >= d.pilot_pairs as u32 && d.rounds < 100, "{d:?}");
    assert_eq!(c.state, CampaignState::Finished);
}

#[test]
fn a_box_released_mid_round_gives_its_rounds_to_another_box() {
    let mut s = spec("lab", rounds(3));
    s.lab = Some(crate::record::campaign::spec::LabSpec {
        boxes: 2,
        tags: Vec::new(),
    });
    let (_d, dir) = stored(&s);
    let log = Log::default();
    let c = flow::find(&open(&dir), "lab").unwrap();
    // Box a takes a place and runs round 1 and the first side of round 2, then is lost.
    assert!(open(&dir).take_place(c.id, "a").unwrap());
    {
        let mut store = open(&dir);
        let signals = Signals::install().unwrap();
        let mut progress = Progress::hidden();
        let mut ex = Scripted::measuring(100.0).with_log(log.clone());
        let mut driver = Driver {
            store: &mut store,
            executor: &mut ex,
            signals: &signals,
            progress: &mut progress,
            owner: "agent-a".into(),
            lease_s: 60.0,
            r#box: Some("a".into()),
            spool: None,
        };
        for _ in 0..3 {
            assert_eq!(driver.next_step("lab").unwrap(), None, "a step ran");
        }
    }
    // Box b runs its place to the end.
    assert!(open(&dir).take_place(c.id, "b").unwrap());
    let mut b = Scripted::measuring(100.0).with_log(log.clone());
    assert_eq!(
        drive_as(&dir, "lab", &mut b, "agent-b", Some("b"))
            .unwrap()
            .unwrap(),
        End::Idle,
        "box a's steps are still planned"
    );
    let released = open(&dir).release_place(c.id, "a").unwrap();
    assert_eq!((released.rounds_moved, released.steps_failed), (1, 1));
    // A new box takes the freed place and runs round 3 there.
    assert!(open(&dir).take_place(c.id, "c").unwrap());
    let mut cbox = Scripted::measuring(100.0).with_log(log.clone());
    assert_eq!(
        drive_as(&dir, "lab", &mut cbox, "agent-c", Some("c"))
            .unwrap()
            .unwrap(),
        End::Finished
    );
    let ran: Vec<(String, u32)> = cbox
        .log()
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.r#box == "c")
        .map(|r| (r.r#box.clone(), r.round))
        .collect();
    assert_eq!(ran, [("c".into(), 3), ("c".into(), 3)]);
    let store = open(&dir);
    let steps = store.steps(c.id).unwrap();
    let failed: Vec<_> = steps
        .iter()
        .filter(|s| s.state == StepState::Failed)
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!((failed[0].r#box.as_str(), failed[0].round), ("a", 2));
    // Each block (box, round) ran both sides on one box, or none.
    let mut blocks: BTreeMap<(String, u32), usize> = BTreeMap::new();
    for r in log.lock().unwrap().iter() {
        *blocks.entry((r.r#box.clone(), r.round)).or_default() += 1;
    }
    assert_eq!(blocks.remove(&("a".to_string(), 2)), Some(1));
    assert!(blocks.values().all(|n| *n == 2), "{blocks:?}");
    assert_eq!(
        flow::find(&store, "lab").unwrap().state,
        CampaignState::Finished
    );
}

#[test]
fn two_drivers_at_once_never_run_steps_together_and_the_second_is_told_who_runs_it() {
    for i in 0..20 {
        let (_d, dir) = stored(&spec("race", rounds(2)));
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
        let log = Log::default();
        let racers: Vec<_> = ["driver-a", "driver-b"]
            .into_iter()
            .map(|owner| {
                let (dir, barrier, log) = (dir.clone(), barrier.clone(), log.clone());
                std::thread::spawn(move || {
                    let mut ex = Scripted::new(|_| Act::Measure {
                        value: 100.0,
                        secs: 0.02,
                    })
                    .with_log(log);
                    barrier.wait();
                    let end = drive_leased(&dir, "race", &mut ex, owner, None, 30.0);
                    (owner, end.unwrap().unwrap())
                })
            })
            .collect();
        let ends: Vec<(&str, End)> = racers.into_iter().map(|t| t.join().unwrap()).collect();
        let winners: Vec<&str> = ends
            .iter()
            .filter(|(_, e)| *e == End::Finished)
            .map(|(o, _)| *o)
            .collect();
        assert_eq!(winners.len(), 1, "try {i}: {ends:?}");
        let held = ends
            .iter()
            .find_map(|(_, e)| match e {
                End::Held(h) => Some(h.clone()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("try {i}: the second was not told: {ends:?}"));
        assert_eq!(held.owner, winners[0]);
        assert!(held.what.contains("of campaign race"), "{held:?}");
        let mut ran = log.lock().unwrap().clone();
        assert_eq!(ran.len(), 4, "try {i}: each step once");
        ran.sort_by_key(|r| r.started);
        for w in ran.windows(2) {
            assert!(w[1].started >= w[0].ended, "try {i}: two steps at once");
        }
        each_step_stored_once(&dir, "race");
    }
}

#[test]
fn each_executor_says_what_it_supports() {
    use crate::campaign::{supports, Asks};
    use crate::record::campaign::spec::ExecutorKind::{Kexec, Local, Vm};
    let plain = Asks::default();
    for kind in [Local, Vm, Kexec] {
        assert!(supports(kind, &plain).is_ok(), "{kind:?}");
    }
    let tree = Asks {
        built_kernels: true,
        ..Asks::default()
    };
    assert!(supports(Local, &tree).unwrap_err().contains("--tree"));
    assert!(supports(Vm, &tree).is_ok() && supports(Kexec, &tree).is_ok());
    let side = Asks {
        side_kernel: Some("patched"),
        ..Asks::default()
    };
    assert!(supports(Local, &side)
        .unwrap_err()
        .contains("--patched-setup"));
    let duet = Asks {
        duet: true,
        ..Asks::default()
    };
    assert!(supports(Vm, &duet).is_ok());
    assert!(supports(Local, &duet).is_err() && supports(Kexec, &duet).is_err());
    let agents = Asks {
        agents: true,
        ..Asks::default()
    };
    assert!(supports(Kexec, &agents)
        .unwrap_err()
        .contains("an agent runs local or vm"));
    assert!(supports(Vm, &agents).is_ok() && supports(Local, &agents).is_ok());
    let perf = Asks {
        perf_data_files: true,
        ..Asks::default()
    };
    assert!(supports(Vm, &perf).unwrap_err().contains("--profile-data"));
    assert!(supports(Kexec, &perf).is_ok() && supports(Local, &perf).is_ok());
}
