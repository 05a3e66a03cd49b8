//! The typed results of a UnixBench run: per test and copy count its passes and copies, the
//! index scores, and the start and end of each copy count's block of tests.

use serde::{Deserialize, Serialize};

/// Which clock a test's count is divided by (unixbench.md §4, "time divisor"), as UnixBench
/// divides that test. In JSON: `"wall"` or `"own-time"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimeSource {
    /// Wall time of the copy. UnixBench: Run's `elapsed`, from just before it forks the copy
    /// to EOF of the program's output (exec, start-up, exit and lingering children included).
    /// patchbench: from the copy's release at the start gate (its start-up excluded) to the
    /// end of its work with its children reaped.
    Wall,
    /// The time the program measured for its own timed section (its `TIME` line): the scored
    /// phase of fstime, Whetstone's summed section times.
    #[serde(rename = "own-time")]
    SelfReported,
}

impl TimeSource {
    /// The short name `patchbench list` prints.
    pub fn label(self) -> &'static str {
        match self {
            TimeSource::Wall => "wall",
            TimeSource::SelfReported => "own time",
        }
    }
}

/// How the copies' timed windows lay against each other, over a test's passes.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Overlap {
    /// The longest span of a pass, from the first copy's window start to the last one's end.
    pub span_seconds: f64,
    /// The lowest overlap of a pass: the time every copy was inside its window over the span.
    pub overlap: f64,
}

/// The copies' throughput over the window in which all of them ran: every copy's count read
/// at one common stop (before the earliest moment any copy's window can end), summed,
/// over the time since their release. Unlike UnixBench's sum of each copy's count over the
/// mean of their windows, it is a throughput even when the windows do not overlap (more
/// copies than CPUs). Only tests whose loop keeps a live count have it, at 2 copies or more.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct SharedWindow {
    /// From the release to the common stop, in seconds.
    pub seconds: f64,
    /// The copies' counts at the common stop, summed.
    pub count: f64,
    /// `count` over `seconds`, in the test's unit.
    pub rate: f64,
}

/// What a test's copies wrote on stderr (UnixBench's Run aborts the run on such output; here
/// the score is kept and the output recorded).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StderrSample {
    /// Bytes written, over every copy and pass.
    pub bytes: u64,
    /// How many copies (over all passes) wrote anything.
    pub copies: u32,
    /// The beginning of the first such copy's output.
    pub text: String,
}

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
    /// With `run --precision`: the half-width reached, in %, of the 95% two-stage interval of
    /// the passes' geometric mean (within-run spread only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_pct: Option<f64>,
    /// With `run --precision`: true when the time cap stopped the test before the passes the
    /// precision asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_capped: Option<bool>,
    /// Which clock the passes' times (the divisor) came from; None in imported results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub divisor: Option<TimeSource>,
    /// The copies' windows: the longest span and the lowest overlap over the passes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlap: Option<Overlap>,
    /// Geometric mean of the kept passes' shared-window rates (see [`SharedWindow`]), when
    /// every kept pass has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_rate: Option<f64>,
    /// What the copies wrote on stderr, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<StderrSample>,
    /// Warnings about how far this result can be trusted (e.g. copies that barely overlapped).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
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
    /// From the first copy's window start to the last copy's window end, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_seconds: Option<f64>,
    /// The time every copy was inside its window, over the span (1 when they coincide).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlap: Option<f64>,
    /// The copies' throughput over the window in which all of them ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_window: Option<SharedWindow>,
    /// What else used the CPUs during the pass (hypervisor steal, other processes above a
    /// share of a CPU; `crate::noise::activity`). None in imported results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<crate::noise::activity::Activity>,
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
    /// Its timed window (the span its count was made in: release to end of work, or the
    /// program's own timed section), in seconds after the pass's release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<[f64; 2]>,
    /// Bytes it wrote on stderr.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stderr_bytes: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
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
