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
//!
//! A user who may count only user space (`crate::perf_scope`: `kernel.perf_event_paranoid` 2
//! without `CAP_PERFMON`) gets the events that mean something there: `task-clock` as ever
//! (the same count), `perf-stat.page-faults:u` and the hardware events' `:u` rows (their
//! user-mode part, named so), not `context-switches` or `cpu-migrations` (they would read
//! 0). [`user_space_only`] says so in one line, said once and kept in every window's
//! `missing`.

use crate::perf_events::scope;
use crate::perf_events::{open_inherited, read_value, why_refused, Kind};
use crate::perf_scope::{row_name, Scope, USER_SUFFIX};
use crate::perf_scope::{
    HW_BRANCH_MISSES, HW_CACHE_MISSES, HW_CPU_CYCLES, HW_INSTRUCTIONS, SW_CONTEXT_SWITCHES,
    SW_CPU_MIGRATIONS, SW_PAGE_FAULTS, SW_TASK_CLOCK,
};
use std::fs::File;
use std::sync::OnceLock;

/// (event name, kind, config): the row `perf-stat.<name>` (with `:u` where only its user-mode
/// part is counted).
const EVENTS: [(&str, Kind, u64); 8] = [
    ("task-clock", Kind::Software, SW_TASK_CLOCK),
    ("context-switches", Kind::Software, SW_CONTEXT_SWITCHES),
    ("cpu-migrations", Kind::Software, SW_CPU_MIGRATIONS),
    ("page-faults", Kind::Software, SW_PAGE_FAULTS),
    ("cycles", Kind::Hardware, HW_CPU_CYCLES),
    ("instructions", Kind::Hardware, HW_INSTRUCTIONS),
    ("cache-misses", Kind::Hardware, HW_CACHE_MISSES),
    ("branch-misses", Kind::Hardware, HW_BRANCH_MISSES),
];

/// The open counters of one window, by row name.
pub struct Events {
    open: Vec<(String, File)>,
}

impl Events {
    /// Opens every event this kernel offers and this user may count (the others are
    /// [`unavailable`] or left out: [`user_space_only`]).
    pub fn open() -> Events {
        let Ok(scope) = scope() else {
            return Events { open: Vec::new() };
        };
        Events {
            open: EVENTS
                .iter()
                .filter_map(|(name, kind, config)| {
                    let row = row_name(name, *kind, *config, scope)?;
                    open_inherited(*kind, *config, scope).ok().map(|f| (row, f))
                })
                .collect(),
        }
    }

    /// Whether any counter is open (none where `perf_event_paranoid` forbids them all).
    pub fn any(&self) -> bool {
        !self.open.is_empty()
    }

    /// The counts since [`Events::open`], as `perf-stat.<row>` (task-clock in ns), and
    /// `perf-stat.ipc` (`ipc:u`) when cycles and instructions were both counted alike.
    pub fn read(mut self) -> Vec<(String, f64)> {
        let mut out: Vec<(String, f64)> = self
            .open
            .iter_mut()
            .map(|(name, f)| (format!("perf-stat.{name}"), read_value(f)))
            .collect();
        let get = |n: &str| out.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        let ipc: Vec<(String, f64)> = ["", USER_SUFFIX]
            .into_iter()
            .filter_map(|suffix| {
                let c = get(&format!("perf-stat.cycles{suffix}"))?;
                let i = get(&format!("perf-stat.instructions{suffix}"))?;
                (c > 0.0).then(|| (format!("perf-stat.ipc{suffix}"), i / c))
            })
            .collect();
        out.extend(ipc);
        out
    }
}

/// Why the events this kernel does not offer are missing, one line (found once), or None.
/// The events left out because only user space is counted are [`user_space_only`]'s.
pub fn unavailable() -> Option<String> {
    static LINE: OnceLock<Option<String>> = OnceLock::new();
    LINE.get_or_init(|| {
        let scope = match scope() {
            Ok(s) => s,
            Err(errno) => {
                let names: Vec<&str> = EVENTS.iter().map(|e| e.0).collect();
                return Some(format!(
                    "perf-stat: {} cannot be counted here: {}",
                    names.join(", "),
                    why_refused(&std::io::Error::from_raw_os_error(errno))
                ));
            }
        };
        let mut missing = Vec::new();
        let mut first_error = None;
        for (name, kind, config) in EVENTS {
            if row_name(name, kind, config, scope).is_none() {
                continue;
            }
            if let Err(e) = open_inherited(kind, config, scope) {
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

/// Where this user may count only user space: one line that says so, which rows are counted
/// in part (named `:u`), which as ever, which are left out and why (found once); None where
/// it counts in full (or not at all).
pub fn user_space_only() -> Option<String> {
    static LINE: OnceLock<Option<String>> = OnceLock::new();
    LINE.get_or_init(|| {
        if scope() != Ok(Scope::UserOnly) {
            return None;
        }
        let (mut part, mut same, mut left_out) = (Vec::new(), Vec::new(), Vec::new());
        for (name, kind, config) in EVENTS {
            match row_name(name, kind, config, Scope::UserOnly) {
                None => left_out.push(name.to_string()),
                Some(_) if open_inherited(kind, config, Scope::UserOnly).is_err() => {}
                Some(row) if row.ends_with(USER_SUFFIX) => part.push(row),
                Some(row) => same.push(row),
            }
        }
        Some(format!(
            "perf-stat: counting user space only (perf's :u), as {}: rows {} hold the user-mode \
             part only, {} the same count as in full; {} left out (counted in kernel mode, they \
             read 0 there)",
            crate::perf_scope::why_user_only(),
            part.join(", "),
            same.join(", "),
            left_out.join(", ")
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
