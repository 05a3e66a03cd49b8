//! The typed results of an AIM7 run: per load point (test, load) its runs, each with AIM's
//! figures, every task's completion time, the op counters and memory, and the filesystems of
//! the `--dir`s.

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

/// One test at one load.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Aim7Point {
    pub test: String,
    pub load: u32,
    pub jobs_per_task: u32,
    pub disk_blocks: usize,
    /// AIM's factor: operations one job counts for, in `units`.
    pub factor: u64,
    pub units: String,
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
    /// The job's op counters summed over tasks, by name.
    pub counters: BTreeMap<String, u64>,
    /// Files the tasks left in the private directories.
    pub leftover_files: u64,
    pub task_max_rss_kib: u64,
    pub task0_private_kib: u64,
    pub task0_pss_kib: u64,
    pub driver_max_rss_kib: u64,
    /// Seconds from the start mark to each task's end, by task.
    pub completion_seconds: Vec<f64>,
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
