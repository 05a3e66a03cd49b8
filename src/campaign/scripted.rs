//! An executor whose steps do what a test says (hyperfine's mock executor, for campaigns):
//! for each step a function of the request gives an [`Act`]: measure a value of the primary
//! metric after some time, fail with a reason, be interrupted, or crash (the process as if
//! killed: nothing after it runs). Every step it runs is logged with its start and end, so a
//! test can check the order, the overlaps and what ran twice. It runs nothing else: the
//! driver, the flow and the store are what is tested, in a fraction of a second per step,
//! without QEMU or a server.

use super::executor::{this_boot, this_kernel, Executor, Measured, StepOutcome, StepRequest};
use crate::error::Interrupted;
use crate::proc::signals::Signals;
use crate::record::campaign::spec::ExecutorKind;
use crate::record::{Direction, Kind, Metric, RunRecord};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The metric a scripted step measures (higher is better): what a campaign follows by default.
pub const METRIC: &str = "unixbench.index";

/// What one scripted step does.
#[derive(Debug, Clone, PartialEq)]
pub enum Act {
    /// Measures `value` of [`METRIC`] (copies=1) after `secs` seconds.
    Measure { value: f64, secs: f64 },
    /// Fails with `reason` after `secs` seconds.
    Fail { reason: String, secs: f64 },
    /// Stopped by SIGINT after `secs` seconds (as Ctrl-C stops a step).
    Interrupt { secs: f64 },
    /// The process ends here as if killed (a panic the test catches): no outcome is handed
    /// back, so the step stays claimed by its owner.
    Crash,
}

impl Act {
    pub fn measure(value: f64) -> Act {
        Act::Measure { value, secs: 0.0 }
    }

    pub fn fail(reason: &str) -> Act {
        Act::Fail {
            reason: reason.to_string(),
            secs: 0.0,
        }
    }
}

/// One step a scripted executor ran.
#[derive(Debug, Clone)]
pub struct Ran {
    pub step_id: i64,
    pub round: u32,
    pub side: String,
    pub r#box: String,
    pub attempt: u32,
    pub started: Instant,
    pub ended: Instant,
    pub act: Act,
}

/// The log of what ran, shared with the test (and between executors of one test).
pub type Log = Arc<Mutex<Vec<Ran>>>;

/// The scripted executor.
pub struct Scripted {
    script: Box<dyn FnMut(&StepRequest) -> Act + Send>,
    log: Log,
    kind: ExecutorKind,
}

impl Scripted {
    /// Runs each step as `script` says.
    pub fn new(script: impl FnMut(&StepRequest) -> Act + Send + 'static) -> Scripted {
        Scripted {
            script: Box::new(script),
            log: Log::default(),
            kind: ExecutorKind::Local,
        }
    }

    /// Every step measures `value`.
    pub fn measuring(value: f64) -> Scripted {
        Scripted::new(move |_| Act::measure(value))
    }

    /// Logs into `log` (shared with other executors).
    pub fn with_log(mut self, log: Log) -> Scripted {
        self.log = log;
        self
    }

    /// What ran so far.
    pub fn log(&self) -> Log {
        self.log.clone()
    }

    /// Waits `secs`, calling `on_tick` about every 10 ms; the signal's interruption if one
    /// comes.
    fn pass_time(secs: f64, signals: &Signals, on_tick: &mut dyn FnMut()) -> Option<Interrupted> {
        let end = Instant::now() + Duration::from_secs_f64(secs.max(0.0));
        loop {
            on_tick();
            if let Some(i) = signals.pending() {
                return Some(i);
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            std::thread::sleep(left.min(Duration::from_millis(10)));
        }
    }
}

/// A run of [`METRIC`] = `value`, as a step's workload would hand back.
pub fn record(value: f64) -> RunRecord {
    let mut r = RunRecord::new(
        Kind::Unixbench,
        crate::sysinfo::SystemInfo::default(),
        &std::collections::BTreeMap::<String, String>::new(),
    );
    r.metrics.push(Metric::new(
        METRIC,
        &[("copies", "1".to_string())],
        "System Benchmarks Index Score",
        "",
        Direction::HigherIsBetter,
        value,
        vec![value],
    ));
    r.finished_at = crate::clock::now_rfc3339();
    r
}

impl Executor for Scripted {
    fn kind(&self) -> ExecutorKind {
        self.kind
    }

    fn run_step(
        &mut self,
        req: &StepRequest,
        signals: &Signals,
        _on_line: &mut dyn FnMut(&str),
        on_tick: &mut dyn FnMut(),
    ) -> StepOutcome {
        let act = (self.script)(req);
        let started = Instant::now();
        let log = |ended: Instant| Ran {
            step_id: req.step.id,
            round: req.step.round,
            side: req.step.side.clone(),
            r#box: req.step.r#box.clone(),
            attempt: req.step.attempts,
            started,
            ended,
            act: act.clone(),
        };
        let secs = match &act {
            Act::Measure { secs, .. } | Act::Fail { secs, .. } | Act::Interrupt { secs } => *secs,
            Act::Crash => 0.0,
        };
        let interrupted = Self::pass_time(secs, signals, on_tick);
        if let Ok(mut l) = self.log.lock() {
            l.push(log(Instant::now()));
        }
        if let Some(i) = interrupted {
            return StepOutcome::Interrupted(i);
        }
        match act {
            Act::Measure { value, .. } => StepOutcome::Measured(Box::new(Measured {
                record: record(value),
                kernel: this_kernel(),
                guest: None,
                boot: Some(this_boot("scripted")),
                scratch: None,
                leftovers: Vec::new(),
            })),
            Act::Fail { reason, .. } => StepOutcome::failed(reason, "the scripted console"),
            Act::Interrupt { .. } => {
                StepOutcome::Interrupted(crate::proc::signals::interrupted(libc::SIGINT))
            }
            Act::Crash => panic!("scripted crash of step {}", req.step.id),
        }
    }
}
