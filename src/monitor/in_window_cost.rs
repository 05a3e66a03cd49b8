//! What the monitors that run inside the timed window cost each workload, as measured: the
//! bench `monitor_overhead` (benches/monitor_overhead.rs) runs every workload in adjacent
//! triples (`--no-monitors`, the defaults, `--perf-stat`; every order in turn) and prints
//! the median score ratio over the triples with its range. Its figures for `--perf-stat` are
//! kept here, so a run that used the counters can say what they cost that workload
//! (`crate::report::in_window`), and in docs/benchmarks.md with the machine they came from.
//!
//! A ratio below 1 is a slower score with the counters: the kernel does their work at every
//! fork, exit and context switch of the workload. Where the workload was measured at another
//! size (copies, load, tasks) the nearest one measured is said, with its size.

use std::collections::BTreeMap;

/// Where the figures were measured.
pub const MEASURED_ON: &str = "this project's 2-CPU VM (kernel 6.18), 2 s passes, 8-12 triples in \
                               every order, 2026-12-07; benches/monitor_overhead.rs";

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

/// `--perf-stat`'s cost, per workload: the bench's outputs of 2026-12-07 (docs/benchmarks.md),
/// every row measured with every order of the triple: most in the afternoon (AMD EPYC host),
/// the file tests fsdisk at 1 and fstime, fsbuffer, fsdisk at 2 in the evening, and
/// whetstone-double-1, fsbuffer-1, context1-1, syscall at 1 and 2, execl-2 and page_fault1 at
/// 2 threads at night (Intel Xeon host; the first run's fixed order had read context1-1 0.750).
const PERF_STAT: &[Cost] = &[
    Cost {
        test: "dhry2reg",
        size: 1,
        mode: "",
        median: 0.997,
        min: 0.951,
        max: 1.030,
        pairs: 8,
    },
    Cost {
        test: "whetstone-double",
        size: 1,
        mode: "",
        median: 1.003,
        min: 0.980,
        max: 1.033,
        pairs: 12,
    },
    Cost {
        test: "execl",
        size: 1,
        mode: "",
        median: 0.996,
        min: 0.991,
        max: 0.999,
        pairs: 8,
    },
    Cost {
        test: "fstime",
        size: 1,
        mode: "",
        median: 0.994,
        min: 0.952,
        max: 1.026,
        pairs: 8,
    },
    Cost {
        test: "fsbuffer",
        size: 1,
        mode: "",
        median: 1.003,
        min: 0.984,
        max: 1.034,
        pairs: 12,
    },
    Cost {
        test: "pipe",
        size: 1,
        mode: "",
        median: 0.994,
        min: 0.982,
        max: 1.007,
        pairs: 8,
    },
    Cost {
        test: "context1",
        size: 1,
        mode: "",
        median: 0.888,
        min: 0.861,
        max: 0.905,
        pairs: 12,
    },
    Cost {
        test: "spawn",
        size: 1,
        mode: "",
        median: 0.937,
        min: 0.912,
        max: 0.953,
        pairs: 8,
    },
    Cost {
        test: "shell1",
        size: 1,
        mode: "",
        median: 0.977,
        min: 0.957,
        max: 0.986,
        pairs: 8,
    },
    Cost {
        test: "shell8",
        size: 1,
        mode: "",
        median: 0.975,
        min: 0.945,
        max: 0.991,
        pairs: 8,
    },
    Cost {
        test: "syscall",
        size: 1,
        mode: "",
        median: 0.999,
        min: 0.984,
        max: 1.038,
        pairs: 12,
    },
    Cost {
        test: "execl",
        size: 2,
        mode: "",
        median: 0.993,
        min: 0.984,
        max: 1.000,
        pairs: 12,
    },
    Cost {
        test: "pipe",
        size: 2,
        mode: "",
        median: 1.002,
        min: 0.984,
        max: 1.062,
        pairs: 8,
    },
    Cost {
        test: "context1",
        size: 2,
        mode: "",
        median: 0.899,
        min: 0.889,
        max: 0.905,
        pairs: 8,
    },
    Cost {
        test: "spawn",
        size: 2,
        mode: "",
        median: 0.930,
        min: 0.893,
        max: 0.977,
        pairs: 8,
    },
    Cost {
        test: "syscall",
        size: 2,
        mode: "",
        median: 1.001,
        min: 0.700,
        max: 1.048,
        pairs: 12,
    },
    Cost {
        test: "creat-clo",
        size: 2,
        mode: "",
        median: 1.000,
        min: 0.833,
        max: 1.250,
        pairs: 12,
    },
    Cost {
        test: "creat-clo",
        size: 20,
        mode: "",
        median: 0.985,
        min: 0.964,
        max: 1.037,
        pairs: 8,
    },
    Cost {
        test: "context_switch1",
        size: 1,
        mode: "processes",
        median: 0.900,
        min: 0.887,
        max: 0.911,
        pairs: 8,
    },
    Cost {
        test: "page_fault1",
        size: 1,
        mode: "processes",
        median: 0.980,
        min: 0.861,
        max: 1.002,
        pairs: 8,
    },
    Cost {
        test: "getppid1",
        size: 1,
        mode: "processes",
        median: 1.000,
        min: 0.983,
        max: 1.003,
        pairs: 12,
    },
    Cost {
        test: "page_fault1",
        size: 2,
        mode: "threads",
        median: 0.987,
        min: 0.900,
        max: 1.094,
        pairs: 12,
    },
    Cost {
        test: "dhry2reg",
        size: 2,
        mode: "",
        median: 1.003,
        min: 0.989,
        max: 1.007,
        pairs: 8,
    },
    Cost {
        test: "whetstone-double",
        size: 2,
        mode: "",
        median: 1.000,
        min: 0.996,
        max: 1.005,
        pairs: 8,
    },
    Cost {
        test: "shell1",
        size: 2,
        mode: "",
        median: 0.982,
        min: 0.966,
        max: 1.002,
        pairs: 8,
    },
    Cost {
        test: "shell8",
        size: 2,
        mode: "",
        median: 0.964,
        min: 0.822,
        max: 1.019,
        pairs: 8,
    },
    Cost {
        test: "fsdisk",
        size: 1,
        mode: "",
        median: 1.005,
        min: 0.958,
        max: 1.085,
        pairs: 8,
    },
    Cost {
        test: "fstime",
        size: 2,
        mode: "",
        median: 1.001,
        min: 0.983,
        max: 1.033,
        pairs: 8,
    },
    Cost {
        test: "fsbuffer",
        size: 2,
        mode: "",
        median: 1.001,
        min: 0.976,
        max: 1.017,
        pairs: 8,
    },
    Cost {
        test: "fsdisk",
        size: 2,
        mode: "",
        median: 1.003,
        min: 0.978,
        max: 1.031,
        pairs: 8,
    },
];

/// A unit's size: which param holds it (`copies`, `load` or `tasks`) and its value.
pub fn size_of(params: &BTreeMap<String, String>) -> Option<(&'static str, u32)> {
    ["copies", "load", "tasks"]
        .into_iter()
        .find_map(|k| Some((k, params.get(k)?.parse().ok()?)))
}

/// The measured cost of `--perf-stat` for a unit with these params (`test`, its size, and
/// `mode`), at its size or the nearest size measured.
pub fn perf_stat(params: &BTreeMap<String, String>) -> Option<Cost> {
    let test = params.get("test")?;
    let size = size_of(params).map_or(1, |(_, n)| n);
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
