//! UnixBench fidelity: `patchbench run` against C references of UnixBench's programs.
//!
//! For every index test, builds the C reference in `benches/c/` with UnixBench's flags (see
//! `support`), then runs pairs: one pass of the C reference, driven the way UnixBench's `Run`
//! drives it (copies started back to back through `/bin/sh`, `elapsed` to EOF, counts summed),
//! and one `patchbench run TEST --passes 1` with the same duration and copy count, adjacent,
//! the order alternating from pair to pair. Per test and copy count it prints the median of
//! the pair ratios patchbench / C, their range and the number of pairs. Copy counts default
//! to 1 and the number of online CPUs; with N copies both sides sum N processes' throughput.
//!
//! The file tests get Run's `sync; sleep 1; sync; sleep 2` before each pass on both sides
//! (patchbench's own settle); the other tests run without it (`--no-settle`), unless
//! `FIDELITY_SETTLE=all`. `LANG=en_US.utf8` on both sides, as Run sets it. The shell tests'
//! input is patchbench's `sort.src` on both sides (UnixBench's file is not ours to ship).
//! A C reference's stderr line without `|` stops the bench, as it stops Run, except in the `C`
//! test, whose gcc warnings are kept out of the count on both sides (patchbench records them).
//!
//! Run: `cargo bench --bench fidelity`. Environment:
//! - `FIDELITY_TESTS`: comma-separated test ids (default: the twelve index tests; every
//!   non-graphics UnixBench test has a reference: the -w/-r file tests, arithoh, short, int,
//!   long, float, double, hanoi, sysexec, and C, dc and grep under the reference looper);
//! - `FIDELITY_PAIRS`: pairs per test and copy count (default 7);
//! - `FIDELITY_SECS`: whole seconds per run (default 3); `FIDELITY_SHELL_SECS` for the shell
//!   tests (default twice that);
//! - `FIDELITY_COPIES`: copy counts, e.g. `1,2` (default 1 and the online CPUs);
//! - `FIDELITY_SETTLE`: `files` (default), `all` or `none`;
//! - `FIDELITY_CPUS`: a CPU list; both sides then run under `taskset -c LIST`;
//! - `FIDELITY_CSV`: a file to which every pair is written (test, copies, pair, first, C,
//!   patchbench, ratio);
//! - `FIDELITY_CC`: the C compiler (default `cc`).
//!
//! AIM7 (issue #20): `benches/c/aim7.c` does what AIM Suite VII's `multitask` does for a
//! one-line workfile (aim7.md, aim7-jobs.md: the fork of the tasks, the start barrier, the
//! jobs' calls, `times()` around each job and the log line, the reaping and the jobs/min),
//! for `creat-clo` and disk1.c's `disk_rr`, `disk_rw`, `disk_rd`, `disk_wrt` and `disk_cp`,
//! built with AIM's `-O2`. Pairs of one load point of it and one `patchbench aim7 TEST
//! --load L --no-start-delay`, adjacent, the order alternating, both in the same kind of
//! `config` directory, both without the 10 s start delay and both writing AIM's log in the
//! system temp directory (patchbench's suite directory is there; the reference runs there);
//! the ratio is patchbench's jobs/min over the reference's. Environment:
//! - `FIDELITY_AIM7`: `TEST:LOAD,...` (default `creat-clo:200`; `none` skips AIM7);
//! - `FIDELITY_AIM7_DIR`: the tasks' directory (default `/dev/shm`, a tmpfs, else the temp
//!   directory); a fresh directory is made inside it for each side;
//! - `FIDELITY_AIM7_JOBS`: jobs per task (AIM's 100).
//!
//! `FIDELITY_TESTS=none` skips the UnixBench tests.

mod support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Tests whose passes are preceded by Run's settle pause by default.
const FILE_TESTS: &[&str] = &[
    "fstime",
    "fsbuffer",
    "fsdisk",
    "fstime-w",
    "fstime-r",
    "fsbuffer-w",
    "fsbuffer-r",
    "fsdisk-w",
    "fsdisk-r",
];

/// One side's throughput for one pass.
struct Sides<'a> {
    bindir: &'a Path,
    testdir: &'a Path,
    prefix: Vec<String>,
}

impl Sides<'_> {
    fn c_rate(&self, test: &str, copies: u32, secs: u32, settle: bool) -> f64 {
        if settle {
            support::settle();
        }
        let argv = support::unixbench_command(test, secs, self.bindir, self.testdir);
        let env = [
            ("LANG", "en_US.utf8".to_string()),
            ("UB_BINDIR", self.bindir.display().to_string()),
            ("UB_TMPDIR", self.testdir.display().to_string()),
            ("UB_TESTDIR", self.testdir.display().to_string()),
        ];
        let log = self.testdir.join("c-reference.log");
        let outcomes = support::run_pass(
            &argv,
            support::unixbench_stdin(test),
            copies,
            self.testdir,
            &env,
            &log,
            &self.prefix,
        )
        .and_then(|o| {
            if test == "C" {
                Ok(o)
            } else {
                support::strict(o)
            }
        })
        .unwrap_or_else(|e| panic!("C reference for {test}: {e}"));
        support::pass_rate(&outcomes)
    }

    fn patchbench_rate(&self, test: &str, copies: u32, secs: u32, settle: bool) -> f64 {
        let json = self.testdir.join("patchbench.json");
        let (program, pre) = match self.prefix.split_first() {
            Some((p, rest)) => (p.clone(), rest.to_vec()),
            None => (env!("CARGO_BIN_EXE_patchbench").to_string(), Vec::new()),
        };
        let mut cmd = Command::new(program);
        cmd.args(pre);
        if !self.prefix.is_empty() {
            cmd.arg(env!("CARGO_BIN_EXE_patchbench"));
        }
        cmd.args(["run", test, "--passes", "1", "--no-store"])
            .arg("--copies")
            .arg(copies.to_string())
            .arg("--duration")
            .arg(secs.to_string())
            .arg("--json")
            .arg(&json)
            .arg("--dir")
            .arg(self.testdir)
            .env("LANG", "en_US.utf8")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        if !settle {
            cmd.arg("--no-settle");
        }
        let status = cmd.status().expect("start patchbench");
        assert!(status.success(), "patchbench run {test} failed");
        let text = std::fs::read_to_string(&json).expect("read patchbench JSON");
        let doc: serde_json::Value = serde_json::from_str(&text).expect("parse patchbench JSON");
        doc["tests"][0]["score"]
            .as_f64()
            .expect("a score in patchbench's JSON")
    }
}

/// Median and range of a non-empty list.
fn summary(values: &[f64]) -> (f64, f64, f64) {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (median, v[0], v[n - 1])
}

/// One side of an AIM7 pair: jobs/min.
struct Aim7Sides<'a> {
    reference: &'a Path,
    /// Where each side makes its directories.
    dir: &'a Path,
    jobs: u32,
    prefix: Vec<String>,
}

impl Aim7Sides<'_> {
    /// A fresh directory in `self.dir` for one run, removed by the caller.
    fn fresh(&self, side: &str) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix(&format!("fidelity-aim7-{side}-"))
            .tempdir_in(self.dir)
            .expect("a directory for the AIM7 run")
    }

    fn command(&self, program: &Path) -> Command {
        match self.prefix.split_first() {
            Some((p, rest)) => {
                let mut c = Command::new(p);
                c.args(rest).arg(program);
                c
            }
            None => Command::new(program),
        }
    }

    /// jobs/min and the tasks' CPU seconds of one load point of the reference.
    fn c_rate(&self, test: &str, load: u32) -> (f64, f64) {
        // AIM's FILESIZE 1M + POOLSIZE 10M / load, patchbench's defaults too.
        let blocks = 1024 + 10240 / u64::from(load);
        // multitask writes its log in its working directory; patchbench writes it in its
        // suite directory in the system temp directory: the same filesystem on both sides
        // (a log appended on ext4 costs more per job than one on tmpfs).
        let config = self.fresh("c-config");
        let cwd = tempfile::Builder::new()
            .prefix("fidelity-aim7-c-cwd-")
            .tempdir()
            .expect("a working directory for the AIM7 reference");
        let out = self
            .command(self.reference)
            .arg(test)
            .arg(load.to_string())
            .arg(self.jobs.to_string())
            .arg(config.path())
            .arg(blocks.to_string())
            .arg("0")
            .arg("1")
            .current_dir(cwd.path())
            .stdin(Stdio::null())
            .output()
            .expect("start the AIM7 reference");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "AIM7 reference {test} load {load}: {:?} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let field = |i: usize| -> f64 {
            text.split('|')
                .nth(i)
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("AIM7 reference printed {text:?}"))
        };
        (field(1), field(5))
    }

    /// jobs/min and the tasks' CPU seconds of one `patchbench aim7` load point, its --dir as
    /// deep as the reference's directory.
    fn patchbench_rate(&self, test: &str, load: u32) -> (f64, f64) {
        let work = self.fresh("patchbench");
        let out = tempfile::tempdir().expect("a directory for the JSON");
        let json = out.path().join("run.json");
        let status = self
            .command(Path::new(env!("CARGO_BIN_EXE_patchbench")))
            .args(["aim7", test, "--no-start-delay", "--no-store"])
            .args([
                "--load",
                &load.to_string(),
                "--jobs",
                &self.jobs.to_string(),
            ])
            .arg("--dir")
            .arg(work.path())
            .arg("--json")
            .arg(&json)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("start patchbench aim7");
        assert!(
            status.success(),
            "patchbench aim7 {test} --load {load} failed"
        );
        let text = std::fs::read_to_string(&json).expect("read patchbench JSON");
        let doc: serde_json::Value = serde_json::from_str(&text).expect("parse patchbench JSON");
        let figures = &doc["aim7"]["points"][0]["runs"][0]["figures"];
        let field = |f: &str| {
            figures[f]
                .as_f64()
                .unwrap_or_else(|| panic!("{f} in patchbench's JSON"))
        };
        (field("jobs_per_min"), field("cpu"))
    }
}

/// One row of the table: test, copies (or load), median ratio, min, max, pairs, C median,
/// patchbench median.
type Row = (String, u32, f64, f64, f64, usize, f64, f64);

/// The AIM7 pairs of `FIDELITY_AIM7`; rows for the table.
fn aim7_rows(
    bindir: &Path,
    pairs: usize,
    prefix: &[String],
    csv: &mut Option<std::fs::File>,
) -> Vec<Row> {
    let spec = std::env::var("FIDELITY_AIM7").unwrap_or_else(|_| "creat-clo:200".into());
    if spec.trim() == "none" || spec.trim().is_empty() {
        return Vec::new();
    }
    let reference = bindir.join("aim7");
    let cc = std::env::var("FIDELITY_CC").unwrap_or_else(|_| "cc".to_string());
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/c/aim7.c");
    let status = Command::new(&cc)
        .args(["-O2", "-o"])
        .arg(&reference)
        .arg(&source)
        .status()
        .unwrap_or_else(|e| panic!("{cc}: {e} (a C compiler is needed for this benchmark)"));
    assert!(status.success(), "building the AIM7 reference failed");
    let dir = std::env::var_os("FIDELITY_AIM7_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            let shm = Path::new("/dev/shm");
            if shm.is_dir() {
                shm.to_path_buf()
            } else {
                std::env::temp_dir()
            }
        });
    let sides = Aim7Sides {
        reference: &reference,
        dir: &dir,
        jobs: support::env_or("FIDELITY_AIM7_JOBS", 100u32).max(1),
        prefix: prefix.to_vec(),
    };
    println!(
        "AIM7: patchbench aim7 / C reference of multitask, {pairs} adjacent pairs, {} jobs per \
         task, no start delay, in {}",
        sides.jobs,
        dir.display()
    );
    let mut rows = Vec::new();
    for item in spec.split(',') {
        let (test, load) = match item.trim().split_once(':') {
            Some((t, l)) => (t.to_string(), l.parse().expect("FIDELITY_AIM7: TEST:LOAD")),
            None => (item.trim().to_string(), 200),
        };
        let (mut ratios, mut c_rates, mut pb_rates) = (Vec::new(), Vec::new(), Vec::new());
        let mut cpu_ratios = Vec::new();
        for pair in 0..pairs {
            let c_first = pair % 2 == 0;
            let ((c, c_cpu), (pb, pb_cpu)) = if c_first {
                let c = sides.c_rate(&test, load);
                (c, sides.patchbench_rate(&test, load))
            } else {
                let pb = sides.patchbench_rate(&test, load);
                (sides.c_rate(&test, load), pb)
            };
            let ratio = pb / c;
            // The same jobs on both sides: the ratio of CPU seconds per job, reference over
            // patchbench (above 1: patchbench needs less CPU per job).
            let cpu_ratio = c_cpu / pb_cpu;
            println!(
                "  aim7 {test} load {load} pair {}: C {c:.1}  patchbench {pb:.1}  ratio \
                 {ratio:.3}{}; CPU s C {c_cpu:.2} patchbench {pb_cpu:.2}, ratio {cpu_ratio:.3} \
                 (load average {})",
                pair + 1,
                if c_first { "" } else { " (patchbench first)" },
                load_average()
            );
            cpu_ratios.push(cpu_ratio);
            if let Some(f) = csv.as_mut() {
                let first = if c_first { "c" } else { "patchbench" };
                writeln!(
                    f,
                    "aim7-{test},{load},{},{first},{c},{pb},{ratio}",
                    pair + 1
                )
                .expect("write FIDELITY_CSV");
            }
            ratios.push(ratio);
            c_rates.push(c);
            pb_rates.push(pb);
        }
        let (median, lo, hi) = summary(&ratios);
        let (cm, clo, chi) = summary(&cpu_ratios);
        println!(
            "  aim7 {test} load {load}: jobs/min ratio {median:.3} ({lo:.3}-{hi:.3}); CPU per job, \
             C / patchbench, {cm:.3} ({clo:.3}-{chi:.3}); {pairs} pairs"
        );
        rows.push((
            format!("aim7 {test}"),
            load,
            median,
            lo,
            hi,
            pairs,
            summary(&c_rates).0,
            summary(&pb_rates).0,
        ));
    }
    rows
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn main() {
    let cpus = patchbench::sysinfo::online_cpus();
    let pairs: usize = support::env_or("FIDELITY_PAIRS", 7).max(1);
    let secs: u32 = support::env_or("FIDELITY_SECS", 3).max(1);
    let shell_secs: u32 = support::env_or("FIDELITY_SHELL_SECS", 2 * secs).max(1);
    let settle_mode = std::env::var("FIDELITY_SETTLE").unwrap_or_else(|_| "files".into());
    let tests: Vec<String> = match std::env::var("FIDELITY_TESTS") {
        Ok(t) if t.trim() == "none" => Vec::new(),
        Ok(t) if !t.trim().is_empty() => t.split(',').map(|s| s.trim().to_string()).collect(),
        _ => patchbench::unixbench::catalog::INDEX
            .iter()
            .map(|s| s.to_string())
            .collect(),
    };
    let copies: Vec<u32> = match std::env::var("FIDELITY_COPIES") {
        Ok(c) if !c.trim().is_empty() => c
            .split(',')
            .map(|s| s.trim().parse().expect("FIDELITY_COPIES: whole numbers"))
            .collect(),
        _ if cpus > 1 => vec![1, cpus],
        _ => vec![1],
    };
    let prefix: Vec<String> = match std::env::var("FIDELITY_CPUS") {
        Ok(list) if !list.trim().is_empty() => {
            vec!["taskset".into(), "-c".into(), list.trim().to_string()]
        }
        _ => Vec::new(),
    };
    let mut csv = std::env::var_os("FIDELITY_CSV").map(|p| {
        let mut f = std::fs::File::create(&p).expect("create FIDELITY_CSV");
        writeln!(f, "test,copies,pair,first,c,patchbench,ratio").expect("write FIDELITY_CSV");
        f
    });

    let work = tempfile::tempdir().expect("temp dir");
    let bindir = work.path().join("pgms");
    let testdir = work.path().join("testdir");
    std::fs::create_dir_all(&bindir).expect("pgms dir");
    std::fs::create_dir_all(&testdir).expect("testdir");
    if !tests.is_empty() {
        support::build_all(&bindir);
        std::fs::write(
            testdir.join("sort.src"),
            patchbench::unixbench::workloads::shell_scripts::SORT_SRC,
        )
        .expect("sort.src");
        support::install_inputs(&testdir);
    }
    let sides = Sides {
        bindir: &bindir,
        testdir: &testdir,
        prefix,
    };

    println!(
        "fidelity: patchbench run / UnixBench-built C reference, {pairs} adjacent pairs per \
         test, {secs} s per run ({shell_secs} s for shell tests), order alternating"
    );
    println!("load average at start: {}", load_average());
    let mut table = Vec::new();
    for &n in &copies {
        for test in &tests {
            let t = if test.starts_with("shell") {
                shell_secs
            } else {
                secs
            };
            let settle = match settle_mode.as_str() {
                "all" => true,
                "none" => false,
                _ => FILE_TESTS.contains(&test.as_str()),
            };
            let (mut ratios, mut c_rates, mut pb_rates) = (Vec::new(), Vec::new(), Vec::new());
            for pair in 0..pairs {
                let c_first = pair % 2 == 0;
                let (c, pb) = if c_first {
                    let c = sides.c_rate(test, n, t, settle);
                    (c, sides.patchbench_rate(test, n, t, settle))
                } else {
                    let pb = sides.patchbench_rate(test, n, t, settle);
                    (sides.c_rate(test, n, t, settle), pb)
                };
                let ratio = pb / c;
                println!(
                    "  {test} x{n} pair {}: C {c:.1}  patchbench {pb:.1}  ratio {ratio:.3}{}",
                    pair + 1,
                    if c_first { "" } else { " (patchbench first)" }
                );
                if let Some(f) = csv.as_mut() {
                    let first = if c_first { "c" } else { "patchbench" };
                    writeln!(f, "{test},{n},{},{first},{c},{pb},{ratio}", pair + 1)
                        .expect("write FIDELITY_CSV");
                }
                ratios.push(ratio);
                c_rates.push(c);
                pb_rates.push(pb);
            }
            let (median, lo, hi) = summary(&ratios);
            table.push((
                test.clone(),
                n,
                median,
                lo,
                hi,
                pairs,
                summary(&c_rates).0,
                summary(&pb_rates).0,
            ));
        }
    }
    table.extend(aim7_rows(&bindir, pairs, &sides.prefix, &mut csv));
    println!("load average at end: {}\n", load_average());
    println!(
        "{:<18} {:>6} {:>8}  {:<15} {:>5} {:>14} {:>14}",
        "test", "copies/load", "ratio", "(min-max)", "pairs", "C median", "pb median"
    );
    for (test, n, median, lo, hi, pairs, c, pb) in table {
        println!(
            "{test:<18} {n:>6} {median:>8.3}  {:<15} {pairs:>5} {c:>14.1} {pb:>14.1}",
            format!("({lo:.3}-{hi:.3})")
        );
    }
}
