//! The workload's own perf events over a window (LKP's `perf-stat` rows): counters opened on
//! patchbench's measuring thread with `inherit`, so every copy, task and thread made inside
//! the window is counted, and read after the window reaped them (an inherited count joins
//! its parent's when the child exits). Software events always exist (`task-clock`,
//! `context-switches`, `cpu-migrations`, `page-faults`); hardware ones (`cycles`,
//! `instructions`, `cache-misses`, `branch-misses`, and `ipc` from the first two) only where
//! the kernel exposes a PMU, which a VM often does not.
//!
//! `task-clock` is not the CPU time the CPU-normalised score uses (that is rusage's): a
//! child's counts are handed to its parent part way through its exit, so a process that
//! lives microseconds is under-counted. Measured here: a C loop forking 20000 children that
//! exit at once, `perf stat -e task-clock` 2.40 s against rusage's user + system 3.57 s;
//! UnixBench's spawn 1.39 s against 2.00 s; syscall (one long-lived copy) 2005.8 ms against
//! 2.004 s.
//!
//! Opened after `--profile`'s perf has started (`super::monitoring`), so perf is not counted.

use crate::perf_events::{open_inherited, read_value, why_refused, Kind};
use std::fs::File;
use std::sync::OnceLock;

/// (row name, kind, config): `perf-stat.<name>`.
const EVENTS: [(&str, Kind, u64); 8] = [
    ("task-clock", Kind::Software, 1),
    ("context-switches", Kind::Software, 3),
    ("cpu-migrations", Kind::Software, 4),
    ("page-faults", Kind::Software, 2),
    ("cycles", Kind::Hardware, 0),
    ("instructions", Kind::Hardware, 1),
    ("cache-misses", Kind::Hardware, 3),
    ("branch-misses", Kind::Hardware, 5),
];

/// The open counters of one window.
pub struct Events {
    open: Vec<(&'static str, File)>,
}

impl Events {
    /// Opens every event this kernel offers (the others are [`unavailable`]).
    pub fn open() -> Events {
        Events {
            open: EVENTS
                .iter()
                .filter_map(|(name, kind, config)| {
                    open_inherited(*kind, *config).ok().map(|f| (*name, f))
                })
                .collect(),
        }
    }

    /// Whether any counter is open (none where `perf_event_paranoid` forbids them all).
    pub fn any(&self) -> bool {
        !self.open.is_empty()
    }

    /// The counts since [`Events::open`], as `perf-stat.<event>` (task-clock in ns), and
    /// `perf-stat.ipc` when cycles and instructions were both counted.
    pub fn read(mut self) -> Vec<(String, f64)> {
        let mut out: Vec<(String, f64)> = self
            .open
            .iter_mut()
            .map(|(name, f)| (format!("perf-stat.{name}"), read_value(f)))
            .collect();
        let get = |n: &str| out.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        if let (Some(c), Some(i)) = (get("perf-stat.cycles"), get("perf-stat.instructions")) {
            if c > 0.0 {
                out.push(("perf-stat.ipc".into(), i / c));
            }
        }
        out
    }
}

/// Why the events this kernel does not offer are missing, one line (found once), or None.
pub fn unavailable() -> Option<String> {
    static LINE: OnceLock<Option<String>> = OnceLock::new();
    LINE.get_or_init(|| {
        let mut missing = Vec::new();
        let mut first_error = None;
        for (name, kind, config) in EVENTS {
            if let Err(e) = open_inherited(kind, config) {
                missing.push(name);
                first_error.get_or_insert(e);
            }
        }
        let e = first_error?;
        Some(format!(
            "perf-stat: {} cannot be counted here: {}",
            missing.join(", "),
            why_refused(&e)
        ))
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_childs_events_are_counted_once_it_has_exited() {
        let events = Events::open();
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg("i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done")
            .status()
            .unwrap();
        assert!(status.success());
        let read: std::collections::BTreeMap<String, f64> = events.read().into_iter().collect();
        // The child's CPU time: tens of milliseconds at least.
        assert!(read["perf-stat.task-clock"] > 1e6, "{read:?}");
        assert!(read["perf-stat.page-faults"] > 10.0, "{read:?}");
    }
}
