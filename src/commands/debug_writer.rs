//! TESTING AIDS, hidden from `--help`. `patchbench debug-slow-writer` saves a synthetic run
//! through the same store sink the measuring commands use, one fake test at a time, printing
//! `committed N` after each commit and stalling after a chosen one; `tests/store.rs` kills it
//! with SIGKILL mid-run and runs two at once against one store. `patchbench debug-hold-lock`
//! holds the store's write lock for a while (a lock really held by another process, for the
//! lock tests). Neither measures anything.

use super::shared::StoreArg;
use crate::record::sink::Sink;
use crate::record::{Direction, Kind, Metric, RunRecord};
use clap::Args;
use std::io::Write;

#[derive(Debug, Clone, Args)]
pub struct DebugArgs {
    #[arg(long, default_value = "3")]
    pub tests: u32,
    #[arg(long, default_value = "0")]
    pub stall_after: u32,
    #[arg(long, default_value = "0")]
    pub pause_ms: u64,
    #[arg(long)]
    pub label: Option<String>,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Args)]
pub struct HoldLockArgs {
    /// How long to hold the write lock.
    #[arg(long, default_value = "5000")]
    pub ms: u64,
    #[command(flatten)]
    pub store: StoreArg,
}

fn say(line: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")?;
    out.flush()?;
    Ok(())
}

/// Writes `tests` fake test results; after the `stall_after`-th commit it sleeps `pause_ms`
/// (so a test can kill it at a known point).
pub fn slow_writer(a: &DebugArgs) -> anyhow::Result<i32> {
    let mut sink = crate::store::sink(
        &a.store.location()?,
        a.label.clone(),
        a.store.connect_timeout,
    )?;
    let now = crate::clock::now_rfc3339;
    let mut record = RunRecord {
        label: a.label.clone(),
        source: Some("debug-slow-writer".to_string()),
        finished_at: now(),
        incomplete: true,
        ..RunRecord::new(Kind::Debug, crate::sysinfo::SystemInfo::collect(), &())
    };
    sink.started(&record)?;
    say("started")?;
    for i in 0..a.tests {
        record.metrics.push(Metric::new(
            "debug.value",
            &[("test", format!("fake{i}"))],
            format!("Fake test {i}"),
            "lps",
            Direction::HigherIsBetter,
            1000.0 + i as f64,
            vec![1000.0 + i as f64; 3],
        ));
        record.finished_at = now();
        sink.progress(&record)?;
        say(&format!("committed {}", i + 1))?;
        if i + 1 == a.stall_after {
            std::thread::sleep(std::time::Duration::from_millis(a.pause_ms));
        }
    }
    record.incomplete = false;
    sink.finished(&record)?;
    say(&format!("finished {}", sink.saved_as().unwrap_or_default()))?;
    Ok(0)
}

/// Holds the store's write lock for `ms` milliseconds, printing `locked` once it has it.
pub fn hold_lock(a: &HoldLockArgs) -> anyhow::Result<i32> {
    let mut store = a.store.open(true)?;
    store.with_write_lock(|| {
        say("locked")?;
        std::thread::sleep(std::time::Duration::from_millis(a.ms));
        Ok(())
    })?;
    Ok(0)
}
