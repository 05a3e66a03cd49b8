//! The typed results of a `model` run: one point per variant, mode and task count.

use serde::{Deserialize, Serialize};

/// The model's part of a record.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ModelDetails {
    /// `model-setbit` or `model-isize`.
    pub model: String,
    pub points: Vec<ModelPoint>,
}

/// One variant at one task count in one mode.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ModelPoint {
    pub variant: String,
    /// `processes` or `threads`.
    pub mode: String,
    /// Tasks (model-setbit) or reader tasks besides the one writer (model-isize).
    pub tasks: usize,
    /// model-setbit: operations per second per task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_sec_per_task: Option<f64>,
    /// model-isize: reads per second over all readers, and the writer's blocks per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads_per_sec: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writes_per_sec: Option<f64>,
    /// model-isize: reads made, and those that saw a size whose data was not there yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub violations: Option<u64>,
}
