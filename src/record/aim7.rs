//! The typed results of an AIM7 run: per load point (test or workfile mix, load) its runs,
//! each with AIM's figures, every task's completion time, the op counters (summed and per
//! test), AIM's log lines and memory, and the filesystems of the `--dir`s.

use crate::fsinfo::FsInfo;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// AIM7's part of a record.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Aim7Details {
    pub points: Vec<Aim7Point>,
    #[serde(default)]
    pub filesystems: Vec<FsInfo>,
}

/// One test, or one workfile mix, at one load.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Aim7Point {
    /// The test, or the mix's name.
    pub test: String,
    pub load: u32,
    /// J: the jobs each task runs (a mix's per-test counts summed).
    pub jobs_per_task: u32,
    pub disk_blocks: usize,
    /// The point's tests: one, or the workfile's lines in order (empty in older records).
    #[serde(default)]
    pub tests: Vec<String>,
    /// AIM's factor of a one-test point: operations one job counts for, in `units`.
    #[serde(default)]
    pub factor: Option<u64>,
    #[serde(default)]
    pub units: Option<String>,
    /// The factor is the disk file's blocks (the disk tests), so it changes with the load.
    #[serde(default)]
    pub factor_is_disk_blocks: bool,
    /// `--until-crossover` stopped the series after this point (jobs/min/task at most 1.0).
    #[serde(default)]
    pub crossover: bool,
    pub runs: Vec<Aim7Run>,
}

/// One run of a load point.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Aim7Run {
    /// 1-based.
    pub run: usize,
    pub figures: Figures,
    /// First fork to the last task parked.
    pub park_seconds: f64,
    /// The op counters summed over tasks (and over a mix's tests), by name.
    pub counters: BTreeMap<String, u64>,
    /// Per test of the point: the jobs of it that ran and its counters, summed over tasks.
    #[serde(default)]
    pub jobs: Vec<Aim7TestCounts>,
    /// Lines the run added to AIM's log (one per job and one per task).
    #[serde(default)]
    pub log_lines: u64,
    /// Files the tasks left in the private directories.
    pub leftover_files: u64,
    pub task_max_rss_kib: u64,
    pub task0_private_kib: u64,
    pub task0_pss_kib: u64,
    pub driver_max_rss_kib: u64,
    /// Seconds from the start mark to each task's end, by task.
    pub completion_seconds: Vec<f64>,
    /// What else used the CPUs during the run of the point (hypervisor steal, other
    /// processes above a share of a CPU; `crate::noise::activity`). None in imported results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<crate::noise::activity::Activity>,
}

/// One test's work in one run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Aim7TestCounts {
    pub test: String,
    /// Jobs of this test that ran, over all tasks.
    pub runs: u64,
    pub counters: BTreeMap<String, u64>,
}

/// The five numbers AIM reports for one load point (computed by `crate::aim7::metrics`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    pub tasks: u32,
    pub jobs_per_min: f64,
    pub jti: i64,
    pub jobs_per_min_per_task: f64,
    pub real: f64,
    pub cpu: f64,
}
