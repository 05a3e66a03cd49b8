//! The bisection's flow, tested with kernels that "build" instantly (or fail to), the scripted
//! campaign executor (`crate::campaign::scripted`) measuring each kernel's level, a real git
//! tree of a few commits and a SQLite store in a temp dir: the answer and its confirmations,
//! skips for a commit that does not build or boot, no change at the endpoints, a good endpoint
//! that does not build, an unsure candidate skipped at the round bound, `--max-steps`, `stop`,
//! and a bisection interrupted in a build and in a campaign, then resumed without running a
//! judged step again.

use super::flow::{self, Bisector, Built, Ended, Executors, Kernels};
use super::search::{Answer, Mark};
use super::state::{BisectSpec, Conclusion, PathState, Role};
use crate::campaign::executor::Executor;
use crate::campaign::scripted::{Act, Scripted};
use crate::error::Interrupted;
use crate::proc::signals::Signals;
use crate::progress::Progress;
use crate::record::campaign::spec::{CampaignSpec, KernelSpec, Schedule};
use crate::store::db::Store;
use crate::store::{Access, Location};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Kernels that build at once: the image's path names the commit (and `+revert`).
#[derive(Default)]
struct FakeKernels {
    broken: BTreeSet<String>,
    built: Vec<String>,
    /// Interrupt the n-th build (counting from 1).
    interrupt_at: Option<usize>,
}

impl Kernels for FakeKernels {
    fn build(
        &mut self,
        _: &BisectSpec,
        commit: &str,
        patches: &[PathBuf],
        _: &Progress,
    ) -> anyhow::Result<Result<Built, String>> {
        if self.interrupt_at == Some(self.built.len() + 1) {
            self.interrupt_at = None;
            return Err(crate::proc::signals::interrupted(libc::SIGINT).into());
        }
        let revert = !patches.is_empty();
        if revert {
            let diff = std::fs::read_to_string(&patches[0])?;
            assert!(diff.contains("diff --git"), "{diff}");
        }
        let id = format!("{}{}", &commit[..12], if revert { "+revert" } else { "" });
        self.built.push(id.clone());
        if self.broken.contains(commit) && !revert {
            return Ok(Err("make: *** [Makefile:1] Error 2".into()));
        }
        Ok(Ok(Built {
            id: id.clone(),
            kernel: KernelSpec {
                image: PathBuf::from(format!("/fake/{id}")),
                sha256: "0".repeat(64),
                release: crate::campaign::executor::this_kernel().release,
                initrd: None,
                modules: None,
            },
            side: None,
            campaign: None,
        }))
    }
}

/// What each kernel measures: its level by commit, the culprit's slowdown from it on.
#[derive(Clone)]
struct Levels {
    /// Commit short hash → value.
    value: BTreeMap<String, f64>,
    /// Kernels whose steps fail (do not boot).
    failing: BTreeSet<String>,
    /// Interrupt the n-th step run (counting from 1).
    interrupt_at: Option<usize>,
    ran: usize,
}

struct ScriptedExecutors(Arc<Mutex<Levels>>);

impl Executors for ScriptedExecutors {
    fn executor(&mut self, _: &CampaignSpec) -> anyhow::Result<Box<dyn Executor>> {
        let levels = self.0.clone();
        Ok(Box::new(Scripted::new(move |req| {
            let mut l = levels.lock().unwrap();
            l.ran += 1;
            if l.interrupt_at == Some(l.ran) {
                l.interrupt_at = None;
                return Act::Interrupt { secs: 0.0 };
            }
            let image = req
                .side
                .kernel
                .as_ref()
                .unwrap()
                .image
                .display()
                .to_string();
            let id = image.trim_start_matches("/fake/").to_string();
            if l.failing.contains(&id) {
                return Act::fail("Kernel panic - not syncing: before the workload");
            }
            let v = l.value.get(&id).copied().unwrap_or(1000.0);
            // A small spread, the same for the same step: -0.5 % to +0.5 %.
            let k = (req.step.id.wrapping_mul(7919) % 5) as f64;
            let wobble = 1.0 + 0.0025 * (k - 2.0);
            Act::measure(v * wobble)
        })))
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    store_at: PathBuf,
    shas: Vec<String>,
    spec: BisectSpec,
    kernels: FakeKernels,
    levels: Arc<Mutex<Levels>>,
}

fn template() -> CampaignSpec {
    serde_json::from_value(serde_json::json!({
        "name": "t", "sides": [{"name": "base"}, {"name": "patched"}],
        "workload": ["run", "syscall"], "schedule": {"rounds": {"rounds": 5}},
        "order": "random", "seed": 11, "executor": "local", "step_timeout_s": 60.0,
        "confidence": 0.95, "program": "patchbench", "started_on": crate::sysinfo::hostname()
    }))
    .unwrap()
}

/// A tree of 1 + `n` commits (good first), the culprit at candidate `culprit` (10 % slower from
/// it on; None: no change), a store with the bisection created.
fn fixture(n: usize, culprit: Option<usize>) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    let shas = super::git::tests::line_of_commits(&tree, n + 1);
    let (good, bad, candidates) = flow::read_history(&tree, &shas[0], "main").unwrap();
    assert_eq!(candidates.len(), n);
    let mut value = BTreeMap::new();
    for (i, c) in candidates.iter().enumerate() {
        if culprit.is_some_and(|k| i >= k) {
            value.insert(c.sha[..12].to_string(), 900.0);
        }
    }
    let spec = BisectSpec {
        name: "b".into(),
        tree,
        good_ref: shas[0].clone(),
        bad_ref: "main".into(),
        good,
        bad,
        candidates,
        template: template(),
        endpoint_schedule: Schedule::Rounds { rounds: 5 },
        settings: super::rule::Settings::default(),
        max_steps: None,
        build: serde_json::Value::Null,
    };
    let store_at = dir.path().join("s.db");
    let mut store = open(&store_at);
    flow::create(&mut store, &spec).unwrap();
    Fixture {
        _dir: dir,
        store_at,
        shas,
        spec,
        kernels: FakeKernels::default(),
        levels: Arc::new(Mutex::new(Levels {
            value,
            failing: BTreeSet::new(),
            interrupt_at: None,
            ran: 0,
        })),
    }
}

fn open(p: &Path) -> Store {
    Store::open(&Location::File(p.to_path_buf()), Access::Create, None).unwrap()
}

impl Fixture {
    fn run(&mut self) -> anyhow::Result<Ended> {
        let mut store = open(&self.store_at);
        let signals = Signals::install().unwrap();
        let mut progress = Progress::hidden();
        let mut executors = ScriptedExecutors(self.levels.clone());
        Bisector {
            store: &mut store,
            kernels: &mut self.kernels,
            executors: &mut executors,
            signals: &signals,
            progress: &mut progress,
        }
        .run("b")
    }

    fn path(&self) -> Vec<super::state::PathStep> {
        let store = open(&self.store_at);
        let (row, _) = flow::find(&store, "b").unwrap();
        flow::path(&store, row.id).unwrap()
    }

    fn short(&self, i: usize) -> String {
        self.spec.candidates[i].sha[..12].to_string()
    }

    fn steps_run(&self) -> usize {
        self.levels.lock().unwrap().ran
    }
}

#[test]
fn the_culprit_is_found_within_a_plain_bisections_steps_and_confirmed() {
    let mut f = fixture(12, Some(5));
    let end = f.run().unwrap();
    assert_eq!(end, Ended::Finished(Conclusion::Found(Answer::FirstBad(5))));
    let path = f.path();
    let steps = path.iter().filter(|p| p.role == Role::Step).count();
    assert!(steps <= super::search::Search::plain_steps(12), "{path:#?}");
    assert_eq!(path[0].role, Role::Endpoints);
    let e = path[0].endpoints.unwrap();
    assert!(e.found() && (e.mean - 0.9f64.ln()).abs() < 0.01, "{e:?}");
    let parent = path.iter().find(|p| p.role == Role::Parent).unwrap();
    assert!(
        parent.reason.as_deref().unwrap().starts_with("confirmed"),
        "{parent:?}"
    );
    assert_eq!(parent.base, f.spec.candidates[4].sha);
    let revert = path.iter().find(|p| p.role == Role::Revert).unwrap();
    assert!(
        revert.reason.as_deref().unwrap().starts_with("confirmed"),
        "{revert:?}"
    );
    assert!(f.kernels.built.iter().any(|b| b.ends_with("+revert")));
    // Every step names its campaign, which the store holds.
    let store = open(&f.store_at);
    for p in &path {
        let name = p.campaign.as_deref().unwrap();
        assert!(name.starts_with("b.0"), "{name}");
        assert!(store.campaign(name).unwrap().is_some());
    }
    let (row, _) = flow::find(&store, "b").unwrap();
    assert_eq!(row.state, "finished");
    assert_eq!(row.owner, None);
    let _ = &f.shas;
}

#[test]
fn a_commit_that_does_not_build_or_boot_is_skipped_and_the_answer_still_found() {
    let mut f = fixture(12, Some(5));
    // The culprit's child does not build; the first candidate tested (the middle, 5)...
    let child = f.spec.candidates[6].sha.clone();
    f.kernels.broken.insert(child.clone());
    // ... and another does not boot.
    let boots_not = f.short(2);
    f.levels.lock().unwrap().failing.insert(boots_not.clone());
    let end = f.run().unwrap();
    assert_eq!(end, Ended::Finished(Conclusion::Found(Answer::FirstBad(5))));
    let path = f.path();
    let skipped: Vec<_> = path
        .iter()
        .filter(|p| p.state == PathState::Skipped)
        .collect();
    for p in &skipped {
        assert!(matches!(p.mark, Some(Mark::Skipped(_))), "{p:?}");
    }
    if let Some(p) = path.iter().find(|p| p.commit == child) {
        assert!(
            p.reason.as_deref().unwrap().contains("does not build"),
            "{p:?}"
        );
        assert!(p.campaign.is_none());
    }
    if let Some(p) = path.iter().find(|p| p.index == Some(2)) {
        let why = p.reason.as_deref().unwrap();
        assert!(
            why.contains("no round") && why.contains("Kernel panic"),
            "{why}"
        );
    }
    assert!(!skipped.is_empty(), "{path:#?}");
}

#[test]
fn no_change_at_the_endpoints_ends_the_bisection_there() {
    let mut f = fixture(8, None);
    let end = f.run().unwrap();
    assert_eq!(end, Ended::Finished(Conclusion::NoChange));
    let path = f.path();
    assert_eq!(path.len(), 1);
    let store = open(&f.store_at);
    let (row, _) = flow::find(&store, "b").unwrap();
    assert!(row
        .state_reason
        .unwrap()
        .starts_with("no change between the endpoints"));
}

#[test]
fn a_good_endpoint_that_does_not_build_is_one_line_and_nothing_runs() {
    let mut f = fixture(8, Some(3));
    f.kernels.broken.insert(f.spec.good.sha.clone());
    let e = f.run().unwrap_err();
    assert!(e.is::<crate::error::Usage>(), "{e}");
    assert!(
        e.to_string().contains("the good endpoint does not build"),
        "{e}"
    );
    assert_eq!(f.steps_run(), 0);
    let store = open(&f.store_at);
    assert_eq!(flow::find(&store, "b").unwrap().0.state, "failed");
}

#[test]
fn a_candidate_at_the_midpoint_gets_more_rounds_then_is_skipped() {
    let mut f = fixture(8, Some(5));
    // Candidate 3 measures half the change: never clearly on either side.
    let mid = f.short(3);
    f.levels.lock().unwrap().value.insert(mid, 948.7);
    let end = f.run().unwrap();
    let p = f.path().into_iter().find(|p| p.index == Some(3)).unwrap();
    assert_eq!(p.state, PathState::Skipped, "{p:?}");
    assert!(
        p.reason
            .as_deref()
            .unwrap()
            .contains("still unsure at 16 rounds"),
        "{p:?}"
    );
    assert_eq!(p.planned_rounds, 16);
    assert_eq!(end, Ended::Finished(Conclusion::Found(Answer::FirstBad(5))));
}

#[test]
fn max_steps_stops_with_the_bracket_left() {
    let mut f = fixture(12, Some(9));
    {
        let mut store = open(&f.store_at);
        let (row, mut spec) = flow::find(&store, "b").unwrap();
        spec.max_steps = Some(1);
        // The spec is fixed at start; a test sets --max-steps by recreating the bisection.
        store
            .set_bisect_state(row.id, "failed", None, None)
            .unwrap();
        spec.name = "b2".into();
        flow::create(&mut store, &spec).unwrap();
    }
    let mut store = open(&f.store_at);
    let signals = Signals::install().unwrap();
    let mut executors = ScriptedExecutors(f.levels.clone());
    let end = Bisector {
        store: &mut store,
        kernels: &mut f.kernels,
        executors: &mut executors,
        signals: &signals,
        progress: &mut Progress::hidden(),
    }
    .run("b2")
    .unwrap();
    assert_eq!(end, Ended::Stopped);
    let (row, _) = flow::find(&store, "b2").unwrap();
    assert_eq!(
        flow::conclusion(&row),
        Some(Conclusion::Unfinished { first: 6, last: 11 })
    );
    assert_eq!(row.state_reason.as_deref(), Some("--max-steps 1 reached"));
}

#[test]
fn stop_ends_a_bisection_that_nobody_runs_at_once() {
    let mut f = fixture(8, Some(2));
    {
        let mut store = open(&f.store_at);
        assert_eq!(
            flow::stop(&mut store, "b").unwrap(),
            flow::StopSaid::AfterCurrent
        );
        // The owner stored at create is this (live) process: it stops when its run comes.
    }
    assert_eq!(f.run().unwrap(), Ended::Stopped);
    assert_eq!(f.steps_run(), 0);
}

#[test]
fn interrupted_in_a_build_and_in_a_campaign_it_resumes_without_running_a_judged_step_again() {
    let mut reference = fixture(12, Some(7));
    reference.run().unwrap();
    let clean_runs = reference.steps_run();

    let mut f = fixture(12, Some(7));
    f.kernels.interrupt_at = Some(3);
    let e = f.run().unwrap_err();
    assert!(e.is::<Interrupted>(), "{e}");
    let path = f.path();
    assert_eq!(path.last().unwrap().state, PathState::Building, "{path:#?}");
    // Interrupted, it says so until it is resumed (not "running", which nobody then is).
    let (row, _) = flow::find(&open(&f.store_at), "b").unwrap();
    assert_eq!(
        flow::shown_state(&row.state, row.state_reason.as_deref()),
        flow::INTERRUPTED
    );
    assert!(row.state_reason.unwrap().contains("bisect resume b"));
    // In the middle of a campaign's steps this time.
    f.levels.lock().unwrap().interrupt_at = Some(f.steps_run() + 3);
    let e = f.run().unwrap_err();
    assert!(e.is::<Interrupted>(), "{e}");
    assert_eq!(f.path().last().unwrap().state, PathState::Running);
    let end = f.run().unwrap();
    assert_eq!(end, Ended::Finished(Conclusion::Found(Answer::FirstBad(7))));
    // The interrupted step ran once more; nothing else ran twice.
    assert_eq!(f.steps_run(), clean_runs + 1);
    let walk = |f: &Fixture| {
        f.path()
            .iter()
            .map(|p| (p.role, p.index, p.state))
            .collect::<Vec<_>>()
    };
    assert_eq!(walk(&f), walk(&reference));
}
