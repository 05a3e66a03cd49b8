//! Shared by the benches: builds the C references of `benches/c/` the way UnixBench's Makefile
//! builds its programs, and runs copies of a command the way UnixBench's `Run` runs a test.
//!
//! Build (unixbench.md §8): `cc -Wall -pedantic -O3 -ffast-math -march=native -mtune=native
//! -DTIME`, one program per test, dynamically linked against libc with the toolchain's default
//! (lazy) binding; Dhrystone from two translation units with `-DREG=register`, Whetstone with
//! `-lm`. The shell tests' scripts `multi.sh` and `tst.sh` are copied next to the programs.
//!
//! Run (unixbench.md §3.5): each copy is `/bin/sh -c '<command> 2>&1 >> <log>'`, started back
//! to back without a barrier, in the same working directory; a copy's `elapsed` runs from
//! just before its start to EOF on its stderr pipe (so it includes exec, start-up and any
//! process still holding the pipe). Copies' counts are summed, their times (the program's
//! `TIME` if it printed one, else `elapsed`) averaged, and the rate is
//! `count / (time / timebase)`, or the count itself for timebase 0.

#![allow(dead_code)] // each bench uses part of this module

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// UnixBench's CFLAGS (`OPTON` on Linux plus the generic flags).
pub const CFLAGS: &[&str] = &[
    "-Wall",
    "-pedantic",
    "-O3",
    "-ffast-math",
    "-march=native",
    "-mtune=native",
    "-DTIME",
];

/// Sources of each reference program and extra compiler arguments, by program name.
const PROGRAMS: &[(&str, &[&str], &[&str])] = &[
    (
        "dhry2reg",
        &["dhry1.c", "dhry2.c"],
        &["-DREG=register", "-DHZ="],
    ),
    ("whetstone-double", &["whetstone.c"], &["-lm"]),
    ("execl", &["execl.c", "execl_bulk.c"], &[]),
    ("fstime", &["fstime.c"], &[]),
    ("pipe", &["pipe.c"], &[]),
    ("context1", &["context1.c"], &[]),
    ("spawn", &["spawn.c"], &[]),
    ("syscall", &["syscall.c"], &[]),
    ("looper", &["looper.c"], &[]),
    ("arithoh", &["arith.c"], &["-DEMPTY"]),
    ("short", &["arith.c"], &["-DDATUM=short"]),
    ("int", &["arith.c"], &["-DDATUM=int"]),
    ("long", &["arith.c"], &["-DDATUM=long"]),
    ("float", &["arith.c"], &["-DDATUM=float"]),
    ("double", &["arith.c"], &["-DDATUM=double"]),
    ("hanoi", &["hanoi.c"], &[]),
];

fn sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/c")
}

/// Builds the reference program `name` into `bindir`; returns its path.
pub fn build(name: &str, bindir: &Path) -> PathBuf {
    let (_, files, extra) = PROGRAMS
        .iter()
        .find(|(n, _, _)| *n == name)
        .unwrap_or_else(|| panic!("no C reference named {name}"));
    let exe = bindir.join(name);
    let cc = std::env::var("FIDELITY_CC").unwrap_or_else(|_| "cc".to_string());
    let mut cmd = Command::new(&cc);
    cmd.arg("-o")
        .arg(&exe)
        .args(CFLAGS)
        .arg("-I")
        .arg(sources());
    cmd.args(files.iter().map(|f| sources().join(f)));
    cmd.args(*extra);
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("{cc}: {e} (a C compiler is needed for this benchmark)"));
    assert!(status.success(), "{cc} failed for {name}");
    exe
}

/// Builds every reference program into `bindir` and copies the shell scripts there; the
/// looper tests' inputs (cctest.c, dc.dat, large.txt) are patchbench's, written by
/// [`install_inputs`].
pub fn build_all(bindir: &Path) {
    for (name, _, _) in PROGRAMS {
        build(name, bindir);
    }
    for script in ["multi.sh", "tst.sh"] {
        let to = bindir.join(script);
        std::fs::copy(sources().join(script), &to).expect("copy script");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
}

/// Writes the inputs of the looper tests (`C`, `dc`, `grep`) into `testdir`.
pub fn install_inputs(testdir: &Path) {
    use patchbench::unixbench::workloads::{c_compiler, dc, grep_file};
    for install in [c_compiler::install, dc::install, grep_file::install] {
        install(testdir).expect("write a looper test's input");
    }
}

/// The command UnixBench's Run gives each copy of `test` (unixbench.md §4 and §5), with `secs`
/// in place of the default duration (its stdin: [`unixbench_stdin`]). `bindir` holds the
/// programs, `tmpdir` is `UB_TMPDIR`.
pub fn unixbench_command(test: &str, secs: u32, bindir: &Path, tmpdir: &Path) -> Vec<String> {
    let bin = |n: &str| bindir.join(n).display().to_string();
    let s = secs.to_string();
    let file = |mode: &str, b: &str, m: &str| {
        vec![
            bin("fstime"),
            mode.into(),
            "-t".into(),
            s.clone(),
            "-d".into(),
            tmpdir.display().to_string(),
            "-b".into(),
            b.into(),
            "-m".into(),
            m.into(),
        ]
    };
    let looper = |argv: &[&str]| {
        let mut v = vec![bin("looper"), s.clone()];
        v.extend(argv.iter().map(|a| a.to_string()));
        v
    };
    let mode = |id: &str| match id.rsplit_once('-') {
        Some((_, "w")) => "-w",
        Some((_, "r")) => "-r",
        _ => "-c",
    };
    match test {
        "fstime" | "fstime-w" | "fstime-r" => file(mode(test), "1024", "2000"),
        "fsbuffer" | "fsbuffer-w" | "fsbuffer-r" => file(mode(test), "256", "500"),
        "fsdisk" | "fsdisk-w" | "fsdisk-r" => file(mode(test), "4096", "8000"),
        "C" => looper(&["gcc", "cctest.c"]),
        "dc" => looper(&["dc"]),
        "grep" => looper(&["grep", "-c", "gimp", "large.txt"]),
        "sysexec" => vec![bin("syscall"), s, "exec".into()],
        "arithoh" | "short" | "int" | "long" | "float" | "double" | "hanoi" => vec![bin(test), s],
        "shell1" | "shell8" | "shell16" => vec![
            bin("looper"),
            s,
            bin("multi.sh"),
            test.trim_start_matches("shell").to_string(),
        ],
        "dhry2reg" | "whetstone-double" | "execl" | "pipe" | "context1" | "spawn" | "syscall" => {
            vec![bin(test), s]
        }
        _ => panic!("no C reference for {test}"),
    }
}

/// The file Run puts on the command's stdin (`< dc.dat`), relative to the test directory.
pub fn unixbench_stdin(test: &str) -> Option<&'static str> {
    (test == "dc").then_some("dc.dat")
}

/// What one copy printed and how long it took.
#[derive(Debug, Clone)]
pub struct CopyOutcome {
    /// The last `COUNT` line's count and timebase.
    pub count: f64,
    pub timebase: u32,
    /// The last `TIME` line, if any.
    pub time: Option<f64>,
    /// From just before the start to EOF of the copy's stderr pipe.
    pub elapsed: f64,
    /// The first line without `|` (an error to Run; see [`strict`]).
    pub noise: Option<String>,
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Parses a copy's stderr as Run does: later lines win; a line without `|` is kept as
/// `noise`, which Run takes for an error ([`strict`]).
pub fn parse(stderr: &str, elapsed: f64) -> Result<CopyOutcome, String> {
    let (mut count, mut timebase, mut time, mut noise) = (None, 1, None, None);
    for line in stderr.lines() {
        let f: Vec<&str> = line.split('|').collect();
        match f.as_slice() {
            ["COUNT", n, tb, ..] => {
                count = n.parse::<f64>().ok();
                timebase = tb.parse().unwrap_or(1);
            }
            ["TIME", t] => time = t.parse().ok(),
            [_] => {
                noise.get_or_insert_with(|| line.to_string());
            }
            _ => {}
        }
    }
    let count = count.ok_or_else(|| format!("no COUNT line in {stderr:?}"))?;
    Ok(CopyOutcome {
        count,
        timebase,
        time,
        elapsed,
        noise,
    })
}

/// The outcomes as Run takes them: any copy's stderr line without `|` aborts. (The `C` test's
/// gcc warnings do that to UnixBench's run; the fidelity bench keeps that test's counts, as
/// patchbench does.)
pub fn strict(outcomes: Vec<CopyOutcome>) -> Result<Vec<CopyOutcome>, String> {
    match outcomes.iter().find_map(|o| o.noise.as_ref()) {
        Some(line) => Err(format!("error output: {line}")),
        None => Ok(outcomes),
    }
}

/// Runs `copies` copies of `argv` as Run's one pass does, in `cwd`, with `env` added, `stdin`
/// (a file in `cwd`) on their stdin and the programs' stdout appended to `log`; `prefix`
/// (e.g. `taskset -c 0`) goes before `/bin/sh`.
pub fn run_pass(
    argv: &[String],
    stdin: Option<&str>,
    copies: u32,
    cwd: &Path,
    env: &[(&str, String)],
    log: &Path,
    prefix: &[String],
) -> Result<Vec<CopyOutcome>, String> {
    let redirect = stdin.map_or(String::new(), |f| format!(" < {}", shell_quote(f)));
    let line = format!(
        "{}{redirect} 2>&1 >> {}",
        argv.iter()
            .map(|a| shell_quote(a))
            .collect::<Vec<_>>()
            .join(" "),
        shell_quote(&log.display().to_string())
    );
    // Start every copy first (from this single thread), then read their pipes.
    let mut running = Vec::new();
    for _ in 0..copies {
        let (program, args) = match prefix.split_first() {
            Some((p, rest)) => (p.as_str(), rest.to_vec()),
            None => ("/bin/sh", Vec::new()),
        };
        let mut cmd = Command::new(program);
        cmd.args(args);
        if !prefix.is_empty() {
            cmd.arg("/bin/sh");
        }
        cmd.arg("-c")
            .arg(&line)
            .current_dir(cwd)
            .envs(env.iter().map(|(k, v)| (*k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let started = Instant::now();
        let child = cmd.spawn().map_err(|e| format!("start {argv:?}: {e}"))?;
        running.push((started, child));
    }
    let readers: Vec<_> = running
        .into_iter()
        .map(|(started, mut child)| {
            std::thread::spawn(move || {
                let mut out = String::new();
                let mut pipe = child.stdout.take().expect("piped stdout");
                let read = pipe.read_to_string(&mut out);
                let elapsed = started.elapsed().as_secs_f64();
                let status = child.wait();
                (out, elapsed, read, status)
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for r in readers {
        let (out, elapsed, read, status) = r.join().map_err(|_| "reader panicked".to_string())?;
        read.map_err(|e| format!("read: {e}"))?;
        let status = status.map_err(|e| format!("wait: {e}"))?;
        if !status.success() {
            return Err(format!("{argv:?} exited with {status}: {out}"));
        }
        outcomes.push(parse(&out, elapsed)?);
    }
    Ok(outcomes)
}

/// Run's pass result: summed count over the mean time (TIME if printed, else elapsed).
pub fn pass_rate(copies: &[CopyOutcome]) -> f64 {
    let count: f64 = copies.iter().map(|c| c.count).sum();
    let time = copies
        .iter()
        .map(|c| c.time.unwrap_or(c.elapsed))
        .sum::<f64>()
        / copies.len().max(1) as f64;
    let timebase = copies.first().map_or(1, |c| c.timebase);
    if timebase > 0 && time > 0.0 {
        count / (time / timebase as f64)
    } else {
        count
    }
}

/// Run's settle pause before a pass: `sync; sleep 1; sync; sleep 2`.
pub fn settle() {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    std::thread::sleep(std::time::Duration::from_secs(1));
    unsafe { libc::sync() };
    std::thread::sleep(std::time::Duration::from_secs(2));
}

/// Parses an environment variable, or returns the default.
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}
