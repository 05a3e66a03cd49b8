//! The typed results of an `exec` run: the tool that ran (its name, version and full command
//! line, as given, placeholders unexpanded) and every invocation of it, warm-ups included,
//! with how it ended and what was read from it. The comparable values are the run's metrics;
//! this is the within-run detail behind them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `exec` part of a record.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ExecDetails {
    /// The program's name as given (`stress-ng`, `./bench.sh`).
    pub tool: String,
    /// What identifies its build: the version from `--version` for the tools we know, else
    /// `sha256:` and the start of the program file's digest.
    pub version: String,
    /// The program and its arguments as given (`{dir}` unexpanded).
    pub argv: Vec<String>,
    pub invocations: Vec<Invocation>,
}

/// One invocation of the program.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Invocation {
    /// 1-based, warm-ups first.
    pub n: u32,
    /// An unmeasured warm-up invocation.
    #[serde(default)]
    pub warmup: bool,
    /// Seconds from the spawn to the reaping, on the monotonic clock.
    pub wall_seconds: f64,
    /// `exited with status 0`, `was killed by SIGSEGV`, `timed out after 600 s`.
    pub status: String,
    /// What the reader took from it, by metric name (empty for a failed invocation).
    #[serde(default)]
    pub values: BTreeMap<String, f64>,
}

impl ExecDetails {
    /// Checks that every number is finite.
    pub fn validate(&self) -> Result<(), String> {
        for i in &self.invocations {
            let finite = i.wall_seconds.is_finite() && i.values.values().all(|v| v.is_finite());
            if !finite {
                return Err(format!("invocation {}: a number is not finite", i.n));
            }
        }
        Ok(())
    }
}
