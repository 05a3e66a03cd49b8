//! TESTING AID, hidden from `--help`: `patchbench debug-slow-writer` saves a synthetic run
//! through the same [`crate::store::sink`] the runner uses, one fake test at a time, printing
//! `committed N` after each commit, and stalling after a chosen one. `tests/store.rs` kills it with
//! SIGKILL mid-run and runs two at once against one store. It measures nothing.

use crate::args::StoreOpts;
use crate::record::{Direction, Metric, RunRecord};
use std::collections::BTreeMap;
use std::io::Write;

/// Writes `tests` fake test results; after the `stall_after`-th commit it sleeps `pause_ms`
/// (so a test can kill it at a known point).
pub fn run(opts: &StoreOpts, tests: u32, stall_after: u32, pause_ms: u64) -> anyhow::Result<i32> {
    let Some(mut sink) = crate::store::sink(opts)? else {
        return crate::error::usage("debug-slow-writer needs a store (drop --no-store)");
    };
    let now = crate::clock::now_rfc3339;
    let mut record = RunRecord {
        label: opts.label.clone(),
        source: Some("debug-slow-writer".to_string()),
        finished_at: now(),
        incomplete: true,
        ..RunRecord::new(
            "debug",
            crate::sysinfo::SystemInfo::collect(),
            BTreeMap::new(),
        )
    };
    let id = sink.started(&record)?.unwrap_or_default();
    println!("started {id}");
    let mut out = std::io::stdout();
    for i in 0..tests {
        let mut params = BTreeMap::new();
        params.insert("test".to_string(), format!("fake{i}"));
        record.metrics.push(Metric {
            name: "debug.value".to_string(),
            params,
            title: format!("Fake test {i}"),
            unit: "lps".to_string(),
            direction: Direction::HigherIsBetter,
            value: 1000.0 + i as f64,
            samples: vec![1000.0 + i as f64; 3],
        });
        record.finished_at = now();
        sink.progress(&record)?;
        writeln!(out, "committed {}", i + 1)?;
        out.flush()?;
        if i + 1 == stall_after {
            std::thread::sleep(std::time::Duration::from_millis(pause_ms));
        }
    }
    record.incomplete = false;
    sink.finished(&record)?;
    println!("finished {id}");
    Ok(0)
}
