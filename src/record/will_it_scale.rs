//! The typed results of a will-it-scale run (and of the models, which run on the same
//! harness): one point per testcase, task count and mode, with every sample.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// will-it-scale's part of a record.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ScaleDetails {
    pub points: Vec<ScalePoint>,
}

/// One testcase at one task count in one mode.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ScalePoint {
    pub test: String,
    /// The testcase's description (will-it-scale's `testcase_description`).
    #[serde(default)]
    pub description: String,
    /// `processes` or `threads`.
    pub mode: String,
    pub tasks: usize,
    /// Mean over the measured samples of the ops/s summed over tasks.
    pub ops_per_sec: f64,
    pub ops_per_sec_per_task: f64,
    /// Idle and iowait share of all CPUs over the whole run of the point (set-up, warm-up,
    /// measurement and clean-up), as will-it-scale's runtest.py reports it. (Records from
    /// earlier builds hold the measured window's share here.)
    #[serde(default)]
    pub idle_percent: Option<f64>,
    /// The same over the measured window only.
    #[serde(default)]
    pub measured_idle_percent: Option<f64>,
    pub measured_seconds: f64,
    /// ops/s summed over tasks, per measured sample.
    pub samples: Vec<f64>,
    #[serde(default)]
    pub warmup_samples: Vec<f64>,
    /// Each task's operations in the measured window.
    pub per_task_ops: Vec<u64>,
    /// Performance counter events per operation, with `--counters`.
    #[serde(default)]
    pub counters_per_op: Option<BTreeMap<String, f64>>,
}
