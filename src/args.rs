//! The command line: one clap definition for every subcommand, and the dispatch to the module
//! that implements it. Each subcommand's arguments live next to its implementation where they
//! are large (`aim7`, `scale`, the store commands); `run` and `list` are defined here.

use crate::error::usage;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// patchbench: did my change make the operating system faster or slower, and is that real?
///
/// Runs faithful re-implementations of UnixBench, AIM7 and will-it-scale workloads at 1..N
/// parallel copies, keeps every sample with a fingerprint of the system, and compares a base
/// run with a patched one statistically.
#[derive(Debug, Parser)]
#[command(name = "patchbench", version, about, long_about = None, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the UnixBench System Benchmarks Index (or selected tests) at 1..N copies.
    Run(RunArgs),
    /// List every test with its report name, unit, baseline and description.
    List(ListArgs),
    /// Run AIM7 jobs (creat-clo, disk_*, …) at a load of N tasks and report jobs/min.
    Aim7(crate::aim7::Aim7Args),
    /// Run will-it-scale testcases at 1..N tasks, as processes and/or threads.
    Scale(crate::will_it_scale::ScaleArgs),
    /// Run a user-space model of a kernel mechanism (model-setbit, model-isize).
    Model(crate::model::ModelArgs),
    #[command(flatten)]
    Store(crate::commands::store::StoreCommand),
}

/// Where results go: the embedded store (on by default) and a label for comparisons.
#[derive(Debug, Clone, Args, Default)]
pub struct StoreOpts {
    /// Label this run as one side of a comparison (e.g. base, patched).
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,
    /// Result store (SQLite); default: $PATCHBENCH_STORE, else $XDG_DATA_HOME/patchbench/results.db.
    #[arg(long, value_name = "PATH")]
    pub store: Option<PathBuf>,
    /// Do not save this run in the store.
    #[arg(long)]
    pub no_store: bool,
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Tests or aliases to run (comma separated or repeated): index (default), system, fs,
    /// shell, or test ids such as pipe,syscall. `patchbench list` shows them all.
    #[arg(value_name = "TEST")]
    pub tests: Vec<String>,
    /// The same as the positional TEST arguments.
    #[arg(short = 't', long = "tests", value_name = "LIST")]
    pub tests_opt: Vec<String>,
    /// Copy counts, each a complete run of the selection: e.g. 1,4. Default: 1, then the number
    /// of online CPUs if above 1.
    #[arg(short, long, value_name = "LIST", value_delimiter = ',', value_parser = parse_copies)]
    pub copies: Vec<u32>,
    /// Passes of every test (default: UnixBench's 10 for long tests, 3 for short ones; the
    /// lowest third by count is dropped).
    #[arg(short = 'i', long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub passes: Option<u32>,
    /// Seconds each test runs, replacing every test's default (10, 30 or 60 s).
    #[arg(short, long, value_name = "SECS", value_parser = parse_duration)]
    pub duration: Option<f64>,
    /// A first look in about two minutes: 1 pass, 2 s per test, no settle pauses before the
    /// passes (the file tests keep fstime's own pauses). Numbers are noisier than a default
    /// run; the report says which profile ran.
    #[arg(long)]
    pub quick: bool,
    /// Skip UnixBench's `sync; sleep 1; sync; sleep 2` before every pass. (The file tests
    /// still make fstime's own pauses between their phases, as UnixBench's program always does.)
    #[arg(long)]
    pub no_settle: bool,
    /// Adaptive passes: keep adding passes of each test (at least 3) until the 95% confidence
    /// interval of its mean pass rate is within ±PCT % (e.g. 1), or the test has used the time
    /// UnixBench's fixed passes would take (`--max-time` overrides). The report shows the
    /// precision reached.
    #[arg(long, value_name = "PCT", value_parser = parse_precision)]
    pub precision: Option<f64>,
    /// With --precision: seconds of passes allowed per test (default: what UnixBench's fixed
    /// passes take: 10 or 3 passes of the test's duration).
    #[arg(long, value_name = "SECS", value_parser = parse_duration, requires = "precision")]
    pub max_time: Option<f64>,
    /// Directory in which a private working directory (mode 0700) is made for the file and
    /// shell tests; it is removed at the end. Default: the system temp directory.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Write every sample, the scores and the system fingerprint to FILE as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write UnixBench's CSV (one row of scores per copy count) to FILE.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreOpts,
}

#[derive(Debug, Clone, Args)]
pub struct ListArgs {}

fn parse_copies(s: &str) -> Result<u32, String> {
    let n: u32 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a copy count; give whole numbers like 1,4"))?;
    if n == 0 {
        return Err("copies must be at least 1 (e.g. --copies 1,4)".into());
    }
    Ok(n)
}

fn parse_precision(s: &str) -> Result<f64, String> {
    let p: f64 = s
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("{s:?} is not a percentage; give e.g. --precision 1"))?;
    if !(p > 0.0 && p < 100.0) {
        return Err(format!(
            "precision must be between 0 and 100 percent, got {s}"
        ));
    }
    Ok(p)
}

/// Parses a positive duration in seconds (fractions allowed).
pub fn parse_duration(s: &str) -> Result<f64, String> {
    let d: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds; give e.g. --duration 2"))?;
    if !d.is_finite() || d <= 0.0 || d > 86400.0 {
        return Err(format!(
            "duration must be between 0 and 86400 seconds, got {s}"
        ));
    }
    Ok(d)
}

/// Runs the parsed command; returns the process exit status.
pub fn execute(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Run(args) => crate::unixbench::runner::run_command(&args),
        Command::List(_) => {
            print!("{}", crate::report::list::render());
            Ok(0)
        }
        Command::Aim7(args) => crate::aim7::execute(&args),
        Command::Scale(args) => crate::will_it_scale::execute(&args),
        Command::Model(args) => crate::model::execute(&args),
        Command::Store(cmd) => crate::commands::store::execute(cmd),
    }
}

/// Rejects a `--dir` that is missing, not a directory, a symlink or not writable.
pub fn check_dir(dir: &std::path::Path) -> anyhow::Result<()> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(_) => {
            return usage(format!(
                "--dir {}: no such directory; create it or choose another with --dir",
                dir.display()
            ))
        }
    };
    if meta.file_type().is_symlink() {
        return usage(format!(
            "--dir {}: is a symbolic link; give the real directory it points to",
            dir.display()
        ));
    }
    if !meta.is_dir() {
        return usage(format!("--dir {}: not a directory", dir.display()));
    }
    if nix::unistd::access(
        dir,
        nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK,
    )
    .is_err()
    {
        return usage(format!(
            "--dir {}: not writable by this user; choose a writable directory with --dir",
            dir.display()
        ));
    }
    Ok(())
}

/// Rejects an output path whose directory is missing or not writable, or that names a
/// directory.
pub fn check_output(what: &str, path: &std::path::Path) -> anyhow::Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if path.is_dir() {
        return usage(format!(
            "{what} {}: is a directory; give a file name",
            path.display()
        ));
    }
    if !parent.is_dir() {
        return usage(format!(
            "{what} {}: directory {} does not exist; create it or write elsewhere",
            path.display(),
            parent.display()
        ));
    }
    let w = nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK;
    if nix::unistd::access(&parent, w).is_err() {
        return usage(format!(
            "{what} {}: directory {} is not writable; write elsewhere",
            path.display(),
            parent.display()
        ));
    }
    if path.exists() && nix::unistd::access(path, nix::unistd::AccessFlags::W_OK).is_err() {
        return usage(format!(
            "{what} {}: file is not writable; write elsewhere",
            path.display()
        ));
    }
    Ok(())
}
