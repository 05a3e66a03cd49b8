//! The typed results of a UnixBench run: per test and copy count its passes and copies, the
//! index scores, and the start and end of each copy count's block of tests.

use serde::{Deserialize, Serialize};

/// The result of one UnixBench test at one copy count.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TestResult {
    /// Test id (`pipe`, `dhry2reg`, …).
    pub test: String,
    /// UnixBench report name (`Pipe Throughput`).
    pub name: String,
    /// Unit label (`lps`, `lpm`, `KBps`, `MWIPS`).
    pub unit: String,
    /// 0: counts are already rates; 1: per second; 60: per minute.
    pub timebase: u32,
    pub copies: u32,
    /// Index baseline (George, SPARCstation 20-61), if the test has one.
    pub baseline: Option<f64>,
    /// Seconds each copy was asked to run.
    pub duration: f64,
    /// Every pass, kept or dropped.
    pub passes: Vec<PassResult>,
    /// Geometric mean of the kept passes' rates.
    pub score: f64,
    /// Arithmetic mean of the kept passes' times.
    pub time: f64,
    /// Number of kept passes.
    pub samples: usize,
    /// 10 × score / baseline.
    pub index: Option<f64>,
    /// With `run --precision`: the 95% CI half-width of the mean pass rate reached, in %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_pct: Option<f64>,
}

/// One pass of one test: all copies started together from one barrier.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PassResult {
    pub pass: u32,
    /// Sum of the copies' counts (the value passes are ranked by).
    pub count: f64,
    /// Mean of the copies' times (self-reported where the test reports one, else wall time).
    pub time: f64,
    /// The pass's rate: `count / (time / timebase)`, or `count` when timebase is 0.
    pub rate: f64,
    /// False when the pass was among the lowest third dropped by UnixBench's rule.
    pub kept: bool,
    pub copies: Vec<CopySample>,
}

/// What one copy (one worker process) reported for one pass.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CopySample {
    pub copy: u32,
    /// Raw count (loops, or a rate for timebase-0 tests).
    pub count: f64,
    /// The time UnixBench would divide by: the test's own TIME, else the copy's wall time.
    pub seconds: f64,
    /// Wall time of the copy from barrier release to the end of its work.
    pub wall_seconds: f64,
    /// This copy's own rate, for per-copy spread.
    pub rate: f64,
}

/// An index score of one category at one copy count.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct IndexScore {
    pub copies: u32,
    /// Category name (`System Benchmarks`).
    pub category: String,
    /// 10 × geometric mean of the ratios.
    pub score: f64,
    /// True when every baseline test of the category has a result.
    pub full: bool,
    /// Number of tests that entered the index.
    pub tests: usize,
}

/// The start and end of the block of tests run at one copy count (the report's
/// `Benchmark Run: START - END` line).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Block {
    pub copies: u32,
    pub started_at: String,
    /// None while the block runs.
    #[serde(default)]
    pub finished_at: Option<String>,
}
