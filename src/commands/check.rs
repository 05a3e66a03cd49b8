//! `patchbench check`: its arguments and what it does. Samples the machine for `--sample`
//! seconds (the probes are `crate::noise`), prints one line per noise source (or the report as
//! JSON) and exits 1 when any source warns, so a script can refuse to measure on a noisy
//! machine.

use crate::args::parse_sample_secs;
use crate::error::usage;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    /// One aligned line per source: status, source, value (and the fix for a warning).
    Text,
    /// The report as one JSON document (schema `patchbench.check/1`, docs/check.md).
    Json,
}

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Directory the file tests would use, to say what it is on (default: the system temp
    /// directory, as for `run`).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Seconds to watch for other processes, stolen time, CPU pressure, swapping and
    /// throttling.
    #[arg(long, value_name = "SECS", default_value = "1", value_parser = parse_sample_secs)]
    pub sample: f64,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: CheckFormat,
}

/// Runs the check; returns 0 when nothing warns, 1 otherwise.
pub fn execute(args: &CheckArgs) -> anyhow::Result<i32> {
    let dir = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    if !dir.is_dir() {
        return usage(format!(
            "--dir {}: no such directory; give an existing directory",
            dir.display()
        ));
    }
    let report = crate::noise::snapshot(&dir, Duration::from_secs_f64(args.sample));
    let text = match args.format {
        CheckFormat::Text => crate::report::check::render(&report, crate::report::color::enabled()),
        CheckFormat::Json => format!("{}\n", serde_json::to_string_pretty(&report)?),
    };
    crate::report::print(&text)?;
    Ok(report.exit_status())
}
