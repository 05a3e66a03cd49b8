//! The catalogue of UnixBench tests patchbench runs: ids, report names, units, baselines,
//! default durations and pass schemes (unixbench.md §3.2, §3.6 and §4), and the aliases that
//! select groups of them. Adding a test is its workload file plus one entry here: the entry
//! names the workload's `prepare`, its constants and what it installs.

use super::workloads::file_copy::Geometry;
use super::workloads::{self, shell_scripts, Install, Params, Prepare};

/// Which clock a test's rate is divided by (unixbench.md §4, "time divisor"), as UnixBench
/// divides that test; `patchbench list` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeSource {
    /// Wall time of the copy. UnixBench: Run's `elapsed`, from just before it forks the copy
    /// to EOF of the program's output (exec, start-up, exit and lingering children included).
    /// patchbench: from the copy's release at the start barrier (its start-up excluded) to the
    /// end of its work with its children reaped.
    Wall,
    /// The time the program measured for its own timed section (its `TIME` line): fstime's
    /// copy phase, Whetstone's summed section times.
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

/// UnixBench's pass scheme: "long" tests run 10 passes, "short" tests 3 (unixbench.md §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    Long,
    Short,
}

/// Index category of a test. Only `System Benchmarks` exists among the tests patchbench runs.
pub const SYSTEM_CATEGORY: &str = "System Benchmarks";

/// One test of the catalogue: its UnixBench constants and how it runs.
#[derive(Debug, Clone, Copy)]
pub struct TestSpec {
    /// Short id used on the command line (`pipe`).
    pub id: &'static str,
    /// Name printed in the report, exactly as UnixBench prints it.
    pub name: &'static str,
    /// Unit label (`lps`, `lpm`, `KBps`, `MWIPS`).
    pub unit: &'static str,
    /// 0: the count is already a rate; 1: per second; 60: per minute.
    pub timebase: u32,
    /// Index baseline (SPARCstation 20-61 "George"), if the test is indexed.
    pub baseline: Option<f64>,
    /// UnixBench's default run length in seconds.
    pub duration: f64,
    pub repeat: Repeat,
    pub time_source: TimeSource,
    /// How many processes one copy uses at most (for the process-limit check).
    pub procs_per_copy: u32,
    /// The workload's untimed setup, which returns its timed part.
    pub prepare: Prepare,
    /// The per-test constants it runs with.
    pub params: Params,
    /// What the run's private directory needs before any copy starts.
    pub install: Option<Install>,
    /// One line for `patchbench list`.
    pub description: &'static str,
}

/// Every test patchbench can run, in UnixBench's `index` execution order, then the extras.
pub const TESTS: &[TestSpec] = &[
    TestSpec {
        id: "dhry2reg",
        name: "Dhrystone 2 using register variables",
        unit: "lps",
        timebase: 1,
        baseline: Some(116700.0),
        duration: 10.0,
        repeat: Repeat::Long,
        time_source: TimeSource::Wall,
        procs_per_copy: 1,
        prepare: workloads::dhrystone,
        params: Params::None,
        install: None,
        description: "Dhrystone 2.1 integer and string loop, loops per second",
    },
    TestSpec {
        id: "whetstone-double",
        name: "Double-Precision Whetstone",
        unit: "MWIPS",
        timebase: 0,
        baseline: Some(55.0),
        duration: 10.0,
        repeat: Repeat::Long,
        time_source: TimeSource::SelfReported,
        procs_per_copy: 1,
        prepare: workloads::whetstone,
        params: Params::None,
        install: None,
        description: "Longbottom's double-precision Whetstone, calibrated to the duration",
    },
    TestSpec {
        id: "execl",
        name: "Execl Throughput",
        unit: "lps",
        timebase: 1,
        baseline: Some(43.0),
        duration: 30.0,
        repeat: Repeat::Short,
        time_source: TimeSource::Wall,
        procs_per_copy: 1,
        prepare: workloads::execl,
        params: Params::None,
        install: None,
        description: "a small program that execs itself, execs per second",
    },
    TestSpec {
        id: "fstime",
        name: "File Copy 1024 bufsize 2000 maxblocks",
        unit: "KBps",
        timebase: 0,
        baseline: Some(3960.0),
        duration: 30.0,
        repeat: Repeat::Short,
        time_source: TimeSource::SelfReported,
        procs_per_copy: 1,
        prepare: workloads::file_copy,
        params: Params::FileCopy(Geometry {
            bufsize: 1024,
            maxblocks: 2000,
        }),
        install: None,
        description: "read/write copy of a 2,048,000-byte file with 1024-byte buffers, KiB/s",
    },
    TestSpec {
        id: "fsbuffer",
        name: "File Copy 256 bufsize 500 maxblocks",
        unit: "KBps",
        timebase: 0,
        baseline: Some(1655.0),
        duration: 30.0,
        repeat: Repeat::Short,
        time_source: TimeSource::SelfReported,
        procs_per_copy: 1,
        prepare: workloads::file_copy,
        params: Params::FileCopy(Geometry {
            bufsize: 256,
            maxblocks: 500,
        }),
        install: None,
        description: "read/write copy of a 512,000-byte file with 256-byte buffers, KiB/s",
    },
    TestSpec {
        id: "fsdisk",
        name: "File Copy 4096 bufsize 8000 maxblocks",
        unit: "KBps",
        timebase: 0,
        baseline: Some(5800.0),
        duration: 30.0,
        repeat: Repeat::Short,
        time_source: TimeSource::SelfReported,
        procs_per_copy: 1,
        prepare: workloads::file_copy,
        params: Params::FileCopy(Geometry {
            bufsize: 4096,
            maxblocks: 8000,
        }),
        install: None,
        description: "read/write copy of an 8,192,000-byte file with 4096-byte buffers, KiB/s",
    },
    TestSpec {
        id: "pipe",
        name: "Pipe Throughput",
        unit: "lps",
        timebase: 1,
        baseline: Some(12440.0),
        duration: 10.0,
        repeat: Repeat::Long,
        time_source: TimeSource::Wall,
        procs_per_copy: 1,
        prepare: workloads::pipe,
        params: Params::None,
        install: None,
        description: "512-byte write then read on one pipe in one process, pairs per second",
    },
    TestSpec {
        id: "context1",
        name: "Pipe-based Context Switching",
        unit: "lps",
        timebase: 1,
        baseline: Some(4000.0),
        duration: 10.0,
        repeat: Repeat::Long,
        time_source: TimeSource::Wall,
        procs_per_copy: 2,
        prepare: workloads::context1,
        params: Params::None,
        install: None,
        description: "parent and child echo a counter over two pipes, round trips per second",
    },
    TestSpec {
        id: "spawn",
        name: "Process Creation",
        unit: "lps",
        timebase: 1,
        baseline: Some(126.0),
        duration: 30.0,
        repeat: Repeat::Short,
        time_source: TimeSource::Wall,
        procs_per_copy: 2,
        prepare: workloads::spawn,
        params: Params::None,
        install: None,
        description: "fork, child exits at once, parent waits; cycles per second",
    },
    TestSpec {
        id: "syscall",
        name: "System Call Overhead",
        unit: "lps",
        timebase: 1,
        baseline: Some(15000.0),
        duration: 10.0,
        repeat: Repeat::Long,
        time_source: TimeSource::Wall,
        procs_per_copy: 1,
        prepare: workloads::syscall,
        params: Params::None,
        install: None,
        description: "close(dup()), getpid, getuid, umask: loops of five system calls per second",
    },
    TestSpec {
        id: "shell1",
        name: "Shell Scripts (1 concurrent)",
        unit: "lpm",
        timebase: 60,
        baseline: Some(42.4),
        duration: 60.0,
        repeat: Repeat::Short,
        time_source: TimeSource::Wall,
        procs_per_copy: 8,
        prepare: workloads::shell,
        params: Params::Shell { concurrency: 1 },
        install: Some(shell_scripts::install),
        description: "one sort/od/grep/tee/wc pipeline script under /bin/sh, loops per minute",
    },
    TestSpec {
        id: "shell8",
        name: "Shell Scripts (8 concurrent)",
        unit: "lpm",
        timebase: 60,
        baseline: Some(6.0),
        duration: 60.0,
        repeat: Repeat::Short,
        time_source: TimeSource::Wall,
        procs_per_copy: 8 * 6 + 2,
        prepare: workloads::shell,
        params: Params::Shell { concurrency: 8 },
        install: Some(shell_scripts::install),
        description: "eight concurrent pipeline scripts under /bin/sh, loops per minute",
    },
    TestSpec {
        id: "shell16",
        name: "Shell Scripts (16 concurrent)",
        unit: "lpm",
        timebase: 60,
        baseline: None,
        duration: 60.0,
        repeat: Repeat::Short,
        time_source: TimeSource::Wall,
        procs_per_copy: 16 * 6 + 2,
        prepare: workloads::shell,
        params: Params::Shell { concurrency: 16 },
        install: Some(shell_scripts::install),
        description: "sixteen concurrent pipeline scripts (not indexed)",
    },
];

/// The twelve index tests, in UnixBench's execution order.
pub const INDEX: &[&str] = &[
    "dhry2reg",
    "whetstone-double",
    "execl",
    "fstime",
    "fsbuffer",
    "fsdisk",
    "pipe",
    "context1",
    "spawn",
    "syscall",
    "shell1",
    "shell8",
];

/// Aliases of unixbench.md §3.2, restricted to the tests patchbench implements.
const ALIASES: &[(&str, &[&str])] = &[
    ("index", INDEX),
    (
        "system",
        &[
            "execl", "fstime", "fsbuffer", "fsdisk", "pipe", "context1", "spawn", "syscall",
            "shell1", "shell8", "shell16",
        ],
    ),
    (
        "oldsystem",
        &[
            "execl", "fstime", "fsbuffer", "fsdisk", "pipe", "context1", "spawn", "syscall",
        ],
    ),
    ("fs", &["fstime", "fsbuffer", "fsdisk"]),
    ("shell", &["shell1", "shell8", "shell16"]),
    ("load", &["shell1", "shell8", "shell16"]),
    ("dhry", &["dhry2reg"]),
    ("dhrystone", &["dhry2reg"]),
    ("whets", &["whetstone-double"]),
    ("whetstone", &["whetstone-double"]),
    ("arithmetic", &["whetstone-double"]),
];

/// Looks a test up by id.
pub fn find(id: &str) -> Option<&'static TestSpec> {
    TESTS.iter().find(|t| t.id == id)
}

/// Expands a comma-separated selection of ids and aliases into tests, without duplicates,
/// keeping the order of first appearance.
pub fn select(selection: &str) -> Result<Vec<&'static TestSpec>, String> {
    let mut out: Vec<&'static TestSpec> = Vec::new();
    for word in selection
        .split(',')
        .map(str::trim)
        .filter(|w| !w.is_empty())
    {
        let ids: Vec<&str> = if word == "all" {
            TESTS.iter().map(|t| t.id).collect()
        } else if let Some((_, ids)) = ALIASES.iter().find(|(a, _)| *a == word) {
            ids.to_vec()
        } else if find(word).is_some() {
            vec![word]
        } else {
            return Err(format!(
                "unknown test {word:?}; `patchbench list` shows the tests and aliases"
            ));
        };
        for id in ids {
            if let Some(t) = find(id) {
                if !out.iter().any(|o| o.id == t.id) {
                    out.push(t);
                }
            }
        }
    }
    if out.is_empty() {
        return Err("no test selected; give test ids or aliases, e.g. --tests index".into());
    }
    Ok(out)
}

/// Alias names and what they expand to, for `patchbench list`.
pub fn aliases() -> impl Iterator<Item = (&'static str, &'static [&'static str])> {
    ALIASES.iter().copied()
}

/// Passes UnixBench runs for a test given `-i n` (None = defaults 10 long / 3 short).
pub fn passes_for(repeat: Repeat, iterations: Option<u32>) -> u32 {
    let long = iterations.unwrap_or(10);
    match repeat {
        Repeat::Long => long,
        Repeat::Short => match iterations {
            None => 3,
            Some(n) => ((n + 1) / 3).max(1),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_alias_is_the_twelve_tests_in_order() {
        let ids: Vec<&str> = select("index").unwrap().iter().map(|t| t.id).collect();
        assert_eq!(ids, INDEX);
        assert!(INDEX.iter().all(|id| find(id).unwrap().baseline.is_some()));
    }

    #[test]
    fn selection_merges_and_rejects() {
        let ids: Vec<&str> = select("pipe,syscall,pipe")
            .unwrap()
            .iter()
            .map(|t| t.id)
            .collect();
        assert_eq!(ids, ["pipe", "syscall"]);
        assert!(select("nosuch")
            .unwrap_err()
            .contains("unknown test \"nosuch\""));
        assert!(select(" , ").is_err());
    }

    #[test]
    fn pass_counts_follow_unixbench() {
        assert_eq!(passes_for(Repeat::Long, None), 10);
        assert_eq!(passes_for(Repeat::Short, None), 3);
        assert_eq!(passes_for(Repeat::Short, Some(1)), 1);
        assert_eq!(passes_for(Repeat::Short, Some(3)), 1);
        assert_eq!(passes_for(Repeat::Short, Some(10)), 3);
        assert_eq!(passes_for(Repeat::Long, Some(3)), 3);
    }
}
