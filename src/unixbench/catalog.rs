//! The catalogue of UnixBench tests patchbench runs: ids, report names, units, baselines,
//! categories, default durations and pass schemes (unixbench.md §3.2, §3.6, §4 and §5), and
//! the aliases that select groups of them, as UnixBench's `Run` defines them (graphics tests
//! excepted). Adding a test is its workload file plus one entry here: the entry names the
//! workload's `prepare`, its constants, what it installs and which programs it needs.

use super::workloads::arithmetic::Datum;
use super::workloads::file_copy::{Geometry, Mode};
use super::workloads::whetstone::Variant;
use super::workloads::{self, c_compiler, dc, grep_file, shell_scripts, Install, Params, Prepare};
pub use crate::record::TimeSource;

/// UnixBench's pass scheme: "long" tests run 10 passes, "short" tests 3 (unixbench.md §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    Long,
    Short,
}

/// A test's category in UnixBench's `Run` (`$testCats`); each category with a baseline among
/// the results gets its own index section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// `system`: the index tests and their relatives.
    System,
    /// `misc`: the non-index tests; grep and sysexec have baselines "for convenience".
    Misc,
    /// patchbench's own variants, outside UnixBench: no baseline, in no alias, not in `all`.
    Extra,
}

impl Category {
    /// The name UnixBench prints in the index section's title.
    pub const fn name(self) -> &'static str {
        match self {
            Category::System => SYSTEM_CATEGORY,
            Category::Misc => "Non-Index Benchmarks",
            Category::Extra => "patchbench Extras",
        }
    }
}

/// The categories that have baselines, in the order their index sections are printed
/// (UnixBench's order is Perl's hash order, i.e. unspecified).
pub const INDEX_CATEGORIES: [Category; 2] = [Category::System, Category::Misc];

/// The System Benchmarks category's name.
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
    /// Index baseline (SPARCstation 20-61 "George"), if `index.base` has one.
    pub baseline: Option<f64>,
    /// UnixBench's default run length in seconds.
    pub duration: f64,
    pub repeat: Repeat,
    pub category: Category,
    pub time_source: TimeSource,
    /// How many processes one copy uses at most (for the process-limit check).
    pub procs_per_copy: u32,
    /// The workload's untimed setup, which returns its timed part.
    pub prepare: Prepare,
    /// The per-test constants it runs with.
    pub params: Params,
    /// What the run's private directory needs before any copy starts.
    pub install: Option<Install>,
    /// Programs the test runs (names looked up in PATH, or absolute paths): without one of
    /// them the test is skipped with one line, not the run.
    pub tools: &'static [&'static str],
    /// One line for `patchbench list`.
    pub description: &'static str,
    /// Its loop keeps its count where the runner can read it while the copies run
    /// (`crate::unixbench::shared_count`), for the throughput over the window in which all
    /// copies ran: the tests whose loop is a few system calls, where one store per loop is
    /// nothing.
    pub live_count: bool,
}

/// A test of one process that counts loops over its wall time: the common case.
const fn simple(
    id: &'static str,
    name: &'static str,
    duration: f64,
    repeat: Repeat,
    prepare: Prepare,
    description: &'static str,
) -> TestSpec {
    TestSpec {
        id,
        name,
        unit: "lps",
        timebase: 1,
        baseline: None,
        duration,
        repeat,
        category: Category::System,
        time_source: TimeSource::Wall,
        procs_per_copy: 1,
        prepare,
        params: Params::None,
        install: None,
        tools: &[],
        description,
        live_count: false,
    }
}

/// One of fstime's nine tests (30 s, short, KiB/s over the scored phase's own time).
const fn file(
    id: &'static str,
    name: &'static str,
    bufsize: usize,
    maxblocks: usize,
    mode: Mode,
    baseline: Option<f64>,
    description: &'static str,
) -> TestSpec {
    TestSpec {
        unit: "KBps",
        timebase: 0,
        baseline,
        time_source: TimeSource::SelfReported,
        params: Params::FileCopy(Geometry { bufsize, maxblocks }, mode),
        ..simple(
            id,
            name,
            30.0,
            Repeat::Short,
            workloads::file_copy,
            description,
        )
    }
}

/// One of arith.c's six builds (`<name> 10`, short, category misc).
const fn arith(
    id: &'static str,
    name: &'static str,
    datum: Datum,
    description: &'static str,
) -> TestSpec {
    TestSpec {
        category: Category::Misc,
        params: Params::Arith(datum),
        ..simple(
            id,
            name,
            10.0,
            Repeat::Short,
            workloads::arithmetic,
            description,
        )
    }
}

/// A shell test: the looper over `multi.sh N` for 60 s, loops per minute.
const fn shell(
    id: &'static str,
    name: &'static str,
    concurrency: u32,
    baseline: Option<f64>,
    description: &'static str,
) -> TestSpec {
    TestSpec {
        unit: "lpm",
        timebase: 60,
        baseline,
        procs_per_copy: concurrency * 6 + 2,
        params: Params::Shell { concurrency },
        install: Some(shell_scripts::install),
        tools: shell_scripts::TOOLS,
        ..simple(id, name, 60.0, Repeat::Short, workloads::shell, description)
    }
}

/// A looper test of category misc: `looper SECS argv… [< stdin]`, loops per minute; the
/// copy is the looper and one command.
const fn looper(
    id: &'static str,
    name: &'static str,
    duration: f64,
    argv: &'static [&'static str],
    stdin: Option<&'static str>,
    install: Install,
    description: &'static str,
) -> TestSpec {
    TestSpec {
        unit: "lpm",
        timebase: 60,
        category: Category::Misc,
        procs_per_copy: 2,
        params: Params::Looper { argv, stdin },
        install: Some(install),
        tools: match argv {
            [program, ..] => std::slice::from_ref(program),
            [] => &[],
        },
        ..simple(
            id,
            name,
            duration,
            Repeat::Short,
            workloads::looper,
            description,
        )
    }
}

/// Every test patchbench can run: UnixBench's `index` tests in its execution order, the rest
/// of its non-graphics tests, then patchbench's own variants.
pub const TESTS: &[TestSpec] = &[
    TestSpec {
        baseline: Some(116700.0),
        ..simple(
            "dhry2reg",
            "Dhrystone 2 using register variables",
            10.0,
            Repeat::Long,
            workloads::dhrystone,
            "Dhrystone 2.1 integer and string loop, loops per second",
        )
    },
    TestSpec {
        unit: "MWIPS",
        timebase: 0,
        baseline: Some(55.0),
        time_source: TimeSource::SelfReported,
        params: Params::Whetstone(Variant::Gcc),
        ..simple(
            "whetstone-double",
            "Double-Precision Whetstone",
            10.0,
            Repeat::Long,
            workloads::whetstone,
            "Longbottom's double-precision Whetstone, calibrated to the duration (gcc's work)",
        )
    },
    TestSpec {
        baseline: Some(43.0),
        ..simple(
            "execl",
            "Execl Throughput",
            30.0,
            Repeat::Short,
            workloads::execl,
            "a small program that execs itself, execs per second",
        )
    },
    file(
        "fstime",
        "File Copy 1024 bufsize 2000 maxblocks",
        1024,
        2000,
        Mode::Copy,
        Some(3960.0),
        "read/write copy of a 2,048,000-byte file with 1024-byte buffers, KiB/s",
    ),
    file(
        "fsbuffer",
        "File Copy 256 bufsize 500 maxblocks",
        256,
        500,
        Mode::Copy,
        Some(1655.0),
        "read/write copy of a 512,000-byte file with 256-byte buffers, KiB/s",
    ),
    file(
        "fsdisk",
        "File Copy 4096 bufsize 8000 maxblocks",
        4096,
        8000,
        Mode::Copy,
        Some(5800.0),
        "read/write copy of an 8,192,000-byte file with 4096-byte buffers, KiB/s",
    ),
    TestSpec {
        baseline: Some(12440.0),
        live_count: true,
        ..simple(
            "pipe",
            "Pipe Throughput",
            10.0,
            Repeat::Long,
            workloads::pipe,
            "512-byte write then read on one pipe in one process, pairs per second",
        )
    },
    TestSpec {
        baseline: Some(4000.0),
        procs_per_copy: 2,
        live_count: true,
        ..simple(
            "context1",
            "Pipe-based Context Switching",
            10.0,
            Repeat::Long,
            workloads::context1,
            "parent and child echo a counter over two pipes, round trips per second",
        )
    },
    TestSpec {
        baseline: Some(126.0),
        procs_per_copy: 2,
        ..simple(
            "spawn",
            "Process Creation",
            30.0,
            Repeat::Short,
            workloads::spawn,
            "fork, child exits at once, parent waits; cycles per second",
        )
    },
    TestSpec {
        baseline: Some(15000.0),
        live_count: true,
        ..simple(
            "syscall",
            "System Call Overhead",
            10.0,
            Repeat::Long,
            workloads::syscall,
            "close(dup()), getpid, getuid, umask: loops of five system calls per second",
        )
    },
    shell(
        "shell1",
        "Shell Scripts (1 concurrent)",
        1,
        Some(42.4),
        "one sort/od/grep/tee/wc pipeline script under /bin/sh, loops per minute",
    ),
    shell(
        "shell8",
        "Shell Scripts (8 concurrent)",
        8,
        Some(6.0),
        "eight concurrent pipeline scripts under /bin/sh, loops per minute",
    ),
    shell(
        "shell16",
        "Shell Scripts (16 concurrent)",
        16,
        None,
        "sixteen concurrent pipeline scripts (not indexed)",
    ),
    file(
        "fstime-w",
        "File Write 1024 bufsize 2000 maxblocks",
        1024,
        2000,
        Mode::Write,
        None,
        "writes of a 2,048,000-byte file with 1024-byte buffers, KiB/s",
    ),
    file(
        "fstime-r",
        "File Read 1024 bufsize 2000 maxblocks",
        1024,
        2000,
        Mode::Read,
        None,
        "reads of a 2,048,000-byte file with 1024-byte buffers, KiB/s",
    ),
    file(
        "fsbuffer-w",
        "File Write 256 bufsize 500 maxblocks",
        256,
        500,
        Mode::Write,
        None,
        "writes of a 512,000-byte file with 256-byte buffers, KiB/s",
    ),
    file(
        "fsbuffer-r",
        "File Read 256 bufsize 500 maxblocks",
        256,
        500,
        Mode::Read,
        None,
        "reads of a 512,000-byte file with 256-byte buffers, KiB/s",
    ),
    file(
        "fsdisk-w",
        "File Write 4096 bufsize 8000 maxblocks",
        4096,
        8000,
        Mode::Write,
        None,
        "writes of an 8,192,000-byte file with 4096-byte buffers, KiB/s",
    ),
    file(
        "fsdisk-r",
        "File Read 4096 bufsize 8000 maxblocks",
        4096,
        8000,
        Mode::Read,
        None,
        "reads of an 8,192,000-byte file with 4096-byte buffers, KiB/s",
    ),
    arith(
        "arithoh",
        "Arithoh",
        Datum::None,
        "arith.c's loop overhead: calls of an empty function, per second",
    ),
    arith(
        "short",
        "Arithmetic Test (short)",
        Datum::Short,
        "arith.c on short (gcc's work: see `arithmetic`), calls per second",
    ),
    arith(
        "int",
        "Arithmetic Test (int)",
        Datum::Int,
        "arith.c on int (gcc's work), calls per second",
    ),
    arith(
        "long",
        "Arithmetic Test (long)",
        Datum::Long,
        "arith.c on long (gcc's work), calls per second",
    ),
    arith(
        "float",
        "Arithmetic Test (float)",
        Datum::Float,
        "arith.c on float (gcc's work), calls per second",
    ),
    arith(
        "double",
        "Arithmetic Test (double)",
        Datum::Double,
        "arith.c on double (gcc's work), calls per second",
    ),
    TestSpec {
        category: Category::Misc,
        ..simple(
            "hanoi",
            "Recursion Test -- Tower of Hanoi",
            20.0,
            Repeat::Short,
            workloads::hanoi,
            "recursive Towers of Hanoi with 10 disks, solutions per second",
        )
    },
    TestSpec {
        // The looper, gcc, and at most three of cc1, as, collect2, ld at a time.
        procs_per_copy: 5,
        ..looper(
            "C",
            "C Compiler Throughput (gcc)",
            60.0,
            c_compiler::ARGV,
            None,
            c_compiler::install,
            "gcc compiles and links a 156-line C file, loops per minute (needs gcc)",
        )
    },
    looper(
        "dc",
        "Dc: sqrt(2) to 99 decimal places",
        30.0,
        dc::ARGV,
        Some(dc::INPUT),
        dc::install,
        "dc with dc.dat on its stdin, loops per minute (needs dc)",
    ),
    TestSpec {
        baseline: Some(1.0),
        ..looper(
            "grep",
            "Grep a large file (system's grep)",
            30.0,
            grep_file::ARGV,
            None,
            grep_file::install,
            "grep -c gimp in a 10,000-line file, loops per minute",
        )
    },
    TestSpec {
        baseline: Some(25.0),
        category: Category::Misc,
        procs_per_copy: 2,
        tools: &["/bin/true"],
        ..simple(
            "sysexec",
            "Exec System Call Overhead",
            10.0,
            Repeat::Long,
            workloads::sysexec,
            "fork, child execs /bin/true, parent waits; cycles per second",
        )
    },
    TestSpec {
        unit: "MWIPS",
        timebase: 0,
        category: Category::Extra,
        time_source: TimeSource::SelfReported,
        params: Params::Whetstone(Variant::Strict),
        ..simple(
            "whetstone-strict",
            "Double-Precision Whetstone (strict)",
            10.0,
            Repeat::Long,
            workloads::whetstone,
            "Whetstone as written, no section folded (patchbench's; not UnixBench's)",
        )
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

const OLDSYSTEM: &[&str] = &[
    "execl", "fstime", "fsbuffer", "fsdisk", "pipe", "context1", "spawn", "syscall",
];
const ARITHMETIC: &[&str] = &[
    "arithoh",
    "short",
    "int",
    "long",
    "float",
    "double",
    "whetstone-double",
];
const SHELL: &[&str] = &["shell1", "shell8", "shell16"];
const FS: &[&str] = &[
    "fstime-w",
    "fstime-r",
    "fstime",
    "fsbuffer-w",
    "fsbuffer-r",
    "fsbuffer",
    "fsdisk-w",
    "fsdisk-r",
    "fsdisk",
];

/// UnixBench's aliases (`$testList` in `Run`, unixbench.md §3.2), graphics excepted, each the
/// concatenation of its lists as there (`system` is `[ @$oldsystem, "shell1", "shell8",
/// "shell16" ]`, `speed` `[ @$arithmetic, @$system ]`). `load` is
/// `["shell"]` there, an alias of an alias, which UnixBench expands only one level and then
/// refuses (`unknown benchmark "shell"`); here it runs what it names, the shell tests.
const ALIASES: &[(&str, &[&[&str]])] = &[
    ("index", &[INDEX]),
    ("system", &[OLDSYSTEM, SHELL]),
    ("oldsystem", &[OLDSYSTEM]),
    ("arithmetic", &[ARITHMETIC]),
    ("fs", &[FS]),
    ("shell", &[SHELL]),
    ("load", &[SHELL]),
    ("misc", &[&["C", "dc", "hanoi"]]),
    ("speed", &[ARITHMETIC, OLDSYSTEM, SHELL]),
    ("dhry", &[&["dhry2reg"]]),
    ("dhrystone", &[&["dhry2reg"]]),
    ("whets", &[&["whetstone-double"]]),
    ("whetstone", &[&["whetstone-double"]]),
];

/// UnixBench's graphics tests and the aliases made of them, which patchbench does not run.
const GRAPHICS: &[&str] = &[
    "graphics",
    "gindex",
    "2d-rects",
    "2d-lines",
    "2d-circle",
    "2d-ellipse",
    "2d-shapes",
    "2d-aashapes",
    "2d-polys",
    "2d-text",
    "2d-blit",
    "2d-window",
    "ubgears",
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
            TESTS
                .iter()
                .filter(|t| t.category != Category::Extra)
                .map(|t| t.id)
                .collect()
        } else if let Some((_, lists)) = ALIASES.iter().find(|(a, _)| *a == word) {
            lists.concat()
        } else if find(word).is_some() {
            vec![word]
        } else if GRAPHICS.contains(&word) {
            return Err(format!(
                "{word:?} is one of UnixBench's graphics tests, which patchbench does not run; \
                 `patchbench list` shows the tests it runs"
            ));
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
pub fn aliases() -> impl Iterator<Item = (&'static str, Vec<&'static str>)> {
    ALIASES.iter().map(|(a, lists)| (*a, lists.concat()))
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

    fn ids(selection: &str) -> Vec<&'static str> {
        select(selection).unwrap().iter().map(|t| t.id).collect()
    }

    /// Every alias against unixbench.md §3.2 (and `Run`'s `$testList`), word for word.
    #[test]
    fn aliases_are_unixbenchs() {
        let oldsystem = [
            "execl", "fstime", "fsbuffer", "fsdisk", "pipe", "context1", "spawn", "syscall",
        ];
        let system: Vec<&str> = oldsystem
            .iter()
            .copied()
            .chain(["shell1", "shell8", "shell16"])
            .collect();
        let arithmetic = [
            "arithoh",
            "short",
            "int",
            "long",
            "float",
            "double",
            "whetstone-double",
        ];
        let speed: Vec<&str> = arithmetic.iter().copied().chain(system.clone()).collect();
        let shell = ["shell1", "shell8", "shell16"];
        assert_eq!(ids("index"), INDEX);
        assert_eq!(ids("system"), system);
        assert_eq!(ids("oldsystem"), oldsystem);
        assert_eq!(ids("arithmetic"), arithmetic);
        assert_eq!(
            ids("fs"),
            [
                "fstime-w",
                "fstime-r",
                "fstime",
                "fsbuffer-w",
                "fsbuffer-r",
                "fsbuffer",
                "fsdisk-w",
                "fsdisk-r",
                "fsdisk"
            ]
        );
        assert_eq!(ids("shell"), shell);
        assert_eq!(ids("load"), shell);
        assert_eq!(ids("misc"), ["C", "dc", "hanoi"]);
        assert_eq!(ids("speed"), speed);
        for (alias, id) in [
            ("dhry", "dhry2reg"),
            ("dhrystone", "dhry2reg"),
            ("whets", "whetstone-double"),
            ("whetstone", "whetstone-double"),
        ] {
            assert_eq!(ids(alias), [id]);
        }
        let names: Vec<&str> = aliases().map(|(a, _)| a).collect();
        assert_eq!(
            names,
            [
                "index",
                "system",
                "oldsystem",
                "arithmetic",
                "fs",
                "shell",
                "load",
                "misc",
                "speed",
                "dhry",
                "dhrystone",
                "whets",
                "whetstone"
            ]
        );
    }

    /// `all` is UnixBench's every individual test (graphics excepted): the 30 of §4 and §5.
    #[test]
    fn all_is_every_unixbench_test_and_nothing_of_patchbenchs() {
        let mut all = ids("all");
        all.sort_unstable();
        let mut expected = vec![
            "dhry2reg",
            "whetstone-double",
            "syscall",
            "pipe",
            "context1",
            "spawn",
            "execl",
            "fstime-w",
            "fstime-r",
            "fstime",
            "fsbuffer-w",
            "fsbuffer-r",
            "fsbuffer",
            "fsdisk-w",
            "fsdisk-r",
            "fsdisk",
            "shell1",
            "shell8",
            "shell16",
            "short",
            "int",
            "long",
            "float",
            "double",
            "arithoh",
            "C",
            "dc",
            "hanoi",
            "grep",
            "sysexec",
        ];
        expected.sort_unstable();
        assert_eq!(all, expected);
        // patchbench's own variant is selectable only by its id.
        assert_eq!(ids("whetstone-strict"), ["whetstone-strict"]);
        assert!(aliases().all(|(_, ids)| !ids.contains(&"whetstone-strict")));
    }

    #[test]
    fn graphics_tests_are_refused_by_name() {
        for word in ["graphics", "gindex", "2d-rects", "ubgears"] {
            let e = select(word).unwrap_err();
            assert!(e.contains("graphics tests"), "{e}");
        }
    }

    /// Categories and baselines as in `Run` and `index.base` (unixbench.md §3.6, §5).
    #[test]
    fn categories_and_baselines_are_unixbenchs() {
        let t = |id: &str| find(id).unwrap();
        for id in ids("system") {
            assert_eq!(t(id).category, Category::System, "{id}");
        }
        for id in ["fstime-w", "fsdisk-r", "dhry2reg", "whetstone-double"] {
            assert_eq!(t(id).category, Category::System, "{id}");
        }
        for id in [
            "arithoh", "short", "int", "long", "float", "double", "hanoi", "C", "dc", "grep",
            "sysexec",
        ] {
            assert_eq!(t(id).category, Category::Misc, "{id}");
        }
        assert_eq!(t("grep").baseline, Some(1.0));
        assert_eq!(t("sysexec").baseline, Some(25.0));
        let with_baseline: Vec<&str> = TESTS
            .iter()
            .filter(|t| t.baseline.is_some())
            .map(|t| t.id)
            .collect();
        let mut expected: Vec<&str> = INDEX.to_vec();
        expected.extend(["grep", "sysexec"]);
        assert_eq!(with_baseline, expected);
        // Units, durations and pass schemes of §5.
        for (id, unit, secs, repeat) in [
            ("arithoh", "lps", 10.0, Repeat::Short),
            ("hanoi", "lps", 20.0, Repeat::Short),
            ("C", "lpm", 60.0, Repeat::Short),
            ("dc", "lpm", 30.0, Repeat::Short),
            ("grep", "lpm", 30.0, Repeat::Short),
            ("sysexec", "lps", 10.0, Repeat::Long),
            ("fstime-w", "KBps", 30.0, Repeat::Short),
        ] {
            assert_eq!(
                (t(id).unit, t(id).duration, t(id).repeat),
                (unit, secs, repeat)
            );
        }
        for id in ["fstime-r", "fsbuffer-w", "whetstone-double", "fsdisk"] {
            assert_eq!(t(id).time_source, TimeSource::SelfReported, "{id}");
        }
        assert_eq!(t("C").tools, ["gcc"]);
        assert_eq!(t("dc").tools, ["dc"]);
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
