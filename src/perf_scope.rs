//! How much of its own tasks' events this process may count, and what each event then counts.
//!
//! `perf_event_open(2)` counts kernel-mode events only for root, a holder of `CAP_PERFMON` (or
//! `CAP_SYS_ADMIN`), or under `kernel.perf_event_paranoid` 1 or below. Under 2 (Debian's and
//! most distributions' default) any other user may still count the user-space part of their
//! own tasks' events: `exclude_kernel`, perf's `:u`. `crate::perf_events::scope` finds which
//! applies once, by opening a task clock on the calling thread (in full, then, if refused for
//! lack of privilege, user-space only), so the decision is the kernel's own whatever sets it
//! (paranoid level, capabilities, an LSM).
//!
//! What a counter opened user-space only counts ([`user_only`]), measured on this project's
//! VM (Linux 6.18, `perf stat -e X,X:u` on one program as root) and read in
//! kernel/events/core.c:
//! - `task-clock` (and `cpu-clock`): the same as in full (433.64 ms both). The count is the
//!   task's whole time on a CPU (`task_clock_event_update`); only the clock's samples honour
//!   the exclusion. Its row keeps its name.
//! - `page-faults`: the faults taken in user mode only (19,844 of 20,447); the faults the
//!   kernel takes on user memory (copying to or from it, `fork`'s copy-on-write setup) are not
//!   counted. Hardware events likewise count their user-mode part. Their rows are named with
//!   [`USER_SUFFIX`] (`perf-stat.page-faults:u`), so they are never taken for full counts.
//! - `context-switches` and `cpu-migrations`: 0 (2,210 and 1 in full). The scheduler counts
//!   them in kernel mode, so a user-space-only counter never sees one. They are left out and
//!   said to be, not recorded as 0.

/// A hardware event (`PERF_TYPE_HARDWARE`) or a software one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Hardware,
    Software,
}

/// What this process may count of its own tasks' events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// User and kernel mode.
    Full,
    /// User mode only (`exclude_kernel`, perf's `:u`).
    UserOnly,
}

/// What a counter opened user-space only counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserOnly {
    /// The same as a full count (the task clock): its row keeps its name.
    Same,
    /// Its user-mode part: a row of its own, named with [`USER_SUFFIX`].
    UserPart,
    /// Nothing (the kernel counts it in kernel mode): left out.
    Nothing,
}

/// What names a row counted user-space only, as perf names such an event.
pub const USER_SUFFIX: &str = ":u";

/// The event configs of `perf_event_open(2)` that patchbench opens (`PERF_COUNT_HW_*` with
/// [`Kind::Hardware`], `PERF_COUNT_SW_*` with [`Kind::Software`]): one home for both event
/// tables (will-it-scale's counters, the monitors' perf-stat) and the decisions here.
pub const HW_CPU_CYCLES: u64 = 0;
pub const HW_INSTRUCTIONS: u64 = 1;
pub const HW_CACHE_MISSES: u64 = 3;
pub const HW_BRANCH_MISSES: u64 = 5;
pub const SW_CPU_CLOCK: u64 = 0;
pub const SW_TASK_CLOCK: u64 = 1;
pub const SW_PAGE_FAULTS: u64 = 2;
pub const SW_CONTEXT_SWITCHES: u64 = 3;
pub const SW_CPU_MIGRATIONS: u64 = 4;

/// What the event (`kind`, `config`) counts when opened user-space only (see the module's doc).
pub fn user_only(kind: Kind, config: u64) -> UserOnly {
    match (kind, config) {
        (Kind::Software, SW_CPU_CLOCK | SW_TASK_CLOCK) => UserOnly::Same,
        (Kind::Software, SW_CONTEXT_SWITCHES | SW_CPU_MIGRATIONS) => UserOnly::Nothing,
        _ => UserOnly::UserPart,
    }
}

/// The row name of event `name` counted in `scope`: `name`, `name:u`, or None when it counts
/// nothing there.
pub fn row_name(name: &str, kind: Kind, config: u64, scope: Scope) -> Option<String> {
    match (scope, user_only(kind, config)) {
        (Scope::Full, _) | (Scope::UserOnly, UserOnly::Same) => Some(name.to_string()),
        (Scope::UserOnly, UserOnly::UserPart) => Some(format!("{name}{USER_SUFFIX}")),
        (Scope::UserOnly, UserOnly::Nothing) => None,
    }
}

/// Why the kernel counts only user space here, and how to count in full (a clause).
pub fn why_user_only() -> String {
    let level = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|t| t.trim().parse::<i32>().ok())
        .map_or_else(|| "above 1".to_string(), |p| p.to_string());
    format!(
        "kernel.perf_event_paranoid is {level} and this user lacks CAP_PERFMON (root, \
         CAP_PERFMON or `sysctl kernel.perf_event_paranoid=1` counts in full)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_counted_user_space_only_are_named_so_or_left_out() {
        let u = Scope::UserOnly;
        assert_eq!(
            row_name("task-clock", Kind::Software, SW_TASK_CLOCK, u).as_deref(),
            Some("task-clock")
        );
        assert_eq!(
            row_name("page-faults", Kind::Software, SW_PAGE_FAULTS, u).as_deref(),
            Some("page-faults:u")
        );
        assert_eq!(
            row_name("cycles", Kind::Hardware, HW_CPU_CYCLES, u).as_deref(),
            Some("cycles:u")
        );
        assert_eq!(
            row_name("context-switches", Kind::Software, SW_CONTEXT_SWITCHES, u),
            None
        );
        assert_eq!(
            row_name("cpu-migrations", Kind::Software, SW_CPU_MIGRATIONS, u),
            None
        );
        assert_eq!(
            row_name(
                "context-switches",
                Kind::Software,
                SW_CONTEXT_SWITCHES,
                Scope::Full
            )
            .as_deref(),
            Some("context-switches")
        );
    }
}
