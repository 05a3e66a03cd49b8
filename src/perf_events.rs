//! Performance counters through `perf_event_open(2)`: per task for will-it-scale's `--counters`, and
//! inherited by a whole process tree for the monitors' perf-stat rows (`crate::monitor`).
//!
//! The driver opens one counter per task and event on the task's thread id (pid = tid,
//! cpu = -1), counting user and kernel time, and reads them at the start and the end of the
//! measured window; divided by the operations counted in that window they give per-operation
//! costs. Hardware events (instructions, cycles, cache misses) are often not exposed (virtual
//! machines, containers, `perf_event_paranoid`); then the run says "not available on this
//! system" once and goes on with the software events the kernel does offer.
//!
//! Where the kernel allows only the user-space part of the events (`crate::perf_scope`), the
//! counters are opened with `exclude_kernel` and named for what they then count.

pub use crate::perf_scope::Kind;
use crate::perf_scope::{row_name, Scope};
use crate::perf_scope::{
    HW_CACHE_MISSES, HW_CPU_CYCLES, HW_INSTRUCTIONS, SW_CONTEXT_SWITCHES, SW_CPU_MIGRATIONS,
    SW_PAGE_FAULTS, SW_TASK_CLOCK,
};
use std::fs::File;
use std::io::Read;
use std::os::fd::FromRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_FORMAT_TOTAL_TIME_ENABLED: u64 = 1;
const PERF_FORMAT_TOTAL_TIME_RUNNING: u64 = 2;
/// `exclude_hv` in the attribute's flag bits.
const EXCLUDE_HV: u64 = 1 << 6;
/// `inherit`.
const INHERIT: u64 = 1 << 1;
/// `exclude_kernel`.
const EXCLUDE_KERNEL: u64 = 1 << 5;
/// `PERF_FLAG_FD_CLOEXEC`.
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;

/// The events tried, in report order: (name, kind, config).
const EVENTS: [(&str, Kind, u64); 7] = [
    ("instructions", Kind::Hardware, HW_INSTRUCTIONS),
    ("cycles", Kind::Hardware, HW_CPU_CYCLES),
    ("cache-misses", Kind::Hardware, HW_CACHE_MISSES),
    ("task-clock-ns", Kind::Software, SW_TASK_CLOCK),
    ("context-switches", Kind::Software, SW_CONTEXT_SWITCHES),
    ("page-faults", Kind::Software, SW_PAGE_FAULTS),
    ("cpu-migrations", Kind::Software, SW_CPU_MIGRATIONS),
];

static HW_WARNED: AtomicBool = AtomicBool::new(false);
static ALL_WARNED: AtomicBool = AtomicBool::new(false);
static USER_WARNED: AtomicBool = AtomicBool::new(false);

/// The first 64 bytes of `struct perf_event_attr` (PERF_ATTR_SIZE_VER0).
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    bp_addr: u64,
}

/// Open counters: for every available event, one file per task (the event's name with `:u`
/// where only its user-mode part is counted).
pub struct CounterSet {
    events: Vec<(String, Vec<File>)>,
}

/// Counter values summed over tasks, scaled for multiplexing.
#[derive(Debug, Clone, PartialEq)]
pub struct CounterValues {
    pub values: Vec<(String, f64)>,
}

impl CounterValues {
    /// `self − earlier`, event by event.
    pub fn minus(&self, earlier: &CounterValues) -> CounterValues {
        CounterValues {
            values: self
                .values
                .iter()
                .zip(&earlier.values)
                .map(|((n, a), (_, b))| (n.clone(), a - b))
                .collect(),
        }
    }

    /// Each event divided by `ops` (events per operation).
    pub fn per_op(&self, ops: u64) -> Vec<(String, f64)> {
        let ops = ops.max(1) as f64;
        self.values
            .iter()
            .map(|(n, v)| (n.clone(), v / ops))
            .collect()
    }
}

/// `perf_event_open` of one counting event on `tid` (0: the calling thread) on any CPU.
fn open_with(tid: i32, type_: u32, config: u64, flags: u64) -> std::io::Result<File> {
    let attr = PerfEventAttr {
        type_,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config,
        read_format: PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
        flags,
        ..Default::default()
    };
    // SAFETY: a valid attribute of the size it declares; the result is a new fd or -1.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfEventAttr,
            tid,
            -1i32,
            -1i32,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor to us.
    Ok(unsafe { File::from_raw_fd(fd as i32) })
}

fn type_of(kind: Kind) -> u32 {
    match kind {
        Kind::Hardware => PERF_TYPE_HARDWARE,
        Kind::Software => PERF_TYPE_SOFTWARE,
    }
}

/// The attribute's exclusion bits for `scope`: never the hypervisor; the kernel too when
/// only user space may be counted.
fn exclusion(scope: Scope) -> u64 {
    match scope {
        Scope::Full => EXCLUDE_HV,
        Scope::UserOnly => EXCLUDE_HV | EXCLUDE_KERNEL,
    }
}

/// Opens one event in `scope` on the calling thread and, inherited, on every thread and
/// process it makes from now on; their counts join this counter as each of them exits (so
/// a window that reaps its workers reads their totals).
pub fn open_inherited(kind: Kind, config: u64, scope: Scope) -> std::io::Result<File> {
    open_with(0, type_of(kind), config, exclusion(scope) | INHERIT)
}

/// Opens one event in `scope` on the calling thread alone (what [`scope`] tries).
pub fn open_on_self(kind: Kind, config: u64, scope: Scope) -> std::io::Result<File> {
    open_with(0, type_of(kind), config, exclusion(scope))
}

/// The scope this process counts in, found once; the error (an errno) when it may count
/// nothing at all (`perf_event_paranoid` 3 on Debian's kernels, a seccomp filter, a kernel
/// without perf events).
pub fn scope() -> Result<Scope, i32> {
    static FOUND: OnceLock<Result<Scope, i32>> = OnceLock::new();
    *FOUND.get_or_init(|| {
        let errno = |e: std::io::Error| e.raw_os_error().unwrap_or(libc::EINVAL);
        let task_clock = |s| open_on_self(Kind::Software, SW_TASK_CLOCK, s);
        match task_clock(Scope::Full) {
            Ok(_) => Ok(Scope::Full),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM)) => {
                task_clock(Scope::UserOnly)
                    .map(|_| Scope::UserOnly)
                    .map_err(errno)
            }
            Err(e) => Err(errno(e)),
        }
    })
}

/// A counter's value, scaled by its enabled over running time (multiplexing).
pub fn read_value(f: &mut File) -> f64 {
    read_scaled(f)
}

/// Why the kernel refused an event, in words, with the fix (no raw "os error": the line is
/// a note, not a failure).
pub fn why_refused(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => {
            "perf_event_paranoid forbids them (run as root, or lower /proc/sys/kernel/perf_event_paranoid)".into()
        }
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => {
            "the kernel has no such events (a VM needs a virtual PMU for hardware events)".into()
        }
        Some(n) => format!("the kernel refused them ({})", nix::errno::Errno::from_raw(n)),
        None => format!("the kernel refused them ({e})"),
    }
}

/// Opens every event the kernel allows on every task, in the scope this user may count
/// (`crate::perf_scope`); None (after saying so once) when none can be opened. Where only user
/// space may be counted, that is said once, the events that would read 0 are left out, and
/// those counted in part are named with `:u`.
pub fn open(tids: &[i32]) -> Option<CounterSet> {
    let scope = scope().unwrap_or(Scope::Full);
    let mut events = Vec::new();
    let (mut hw_missing, mut left_out) = (false, Vec::new());
    for (name, kind, config) in EVENTS {
        let Some(row) = row_name(name, kind, config, scope) else {
            left_out.push(name);
            continue;
        };
        let files: std::io::Result<Vec<File>> = tids
            .iter()
            .map(|t| open_with(*t, type_of(kind), config, exclusion(scope)))
            .collect();
        match files {
            Ok(f) => events.push((row, f)),
            Err(_) if kind == Kind::Hardware => hw_missing = true,
            Err(_) => {}
        }
    }
    if events.is_empty() {
        if !ALL_WARNED.swap(true, Ordering::Relaxed) {
            crate::safe_text::eprint_line(
                "patchbench: performance counters: not available on this system",
            );
        }
        return None;
    }
    if scope == Scope::UserOnly && !USER_WARNED.swap(true, Ordering::Relaxed) {
        let counted: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
        crate::safe_text::eprint_line(&format!(
            "patchbench: performance counters: counting user space only (perf's :u), as {}: \
             {} ({} left out: counted in kernel mode, they read 0 there)",
            crate::perf_scope::why_user_only(),
            counted.join(", "),
            left_out.join(", ")
        ));
    }
    if hw_missing && !HW_WARNED.swap(true, Ordering::Relaxed) {
        crate::safe_text::eprint_line(
            "patchbench: hardware counters (instructions, cycles, cache misses): not available \
             on this system; reporting software counters only",
        );
    }
    Some(CounterSet { events })
}

impl CounterSet {
    /// Reads every counter, summed over tasks and scaled by enabled/running time.
    pub fn read(&mut self) -> CounterValues {
        let values = self
            .events
            .iter_mut()
            .map(|(name, files)| {
                let total = files.iter_mut().map(read_scaled).sum();
                (name.clone(), total)
            })
            .collect();
        CounterValues { values }
    }
}

fn read_scaled(f: &mut File) -> f64 {
    let mut buf = [0u8; 24];
    if f.read_exact(&mut buf).is_err() {
        return 0.0;
    }
    let word = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&buf[i * 8..i * 8 + 8]);
        u64::from_ne_bytes(b)
    };
    let (value, enabled, running) = (word(0), word(1), word(2));
    if running == 0 {
        0.0
    } else {
        value as f64 * enabled as f64 / running as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf_scope::Scope;

    /// Counts each software event in full and user-space only around one child (root only:
    /// a full count needs CAP_PERFMON under perf_event_paranoid 2).
    #[test]
    fn what_each_software_event_counts_user_space_only_is_what_the_table_says() {
        assert_eq!(
            scope(),
            Ok(Scope::Full),
            "counting in full needs root or CAP_PERFMON (scripts/test.sh runs as root)"
        );
        let events = [(1, "task-clock"), (2, "page-faults"), (3, "cs"), (4, "mig")];
        let open = |s| {
            events
                .iter()
                .map(|(c, _)| open_inherited(Kind::Software, *c, s).unwrap())
                .collect::<Vec<_>>()
        };
        let (mut full, mut user) = (open(Scope::Full), open(Scope::UserOnly));
        // A child that faults in memory in user mode, makes the kernel fault on a pipe's
        // buffer, sleeps (voluntary switches) and burns a little CPU.
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(
                "head -c 33554432 /dev/zero | cat >/dev/null; for i in 1 2 3 4 5; do sleep 0.01; \
                 done; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done",
            )
            .status()
            .unwrap();
        assert!(status.success());
        let f: Vec<f64> = full.iter_mut().map(read_value).collect();
        let u: Vec<f64> = user.iter_mut().map(read_value).collect();
        // Measured so (2026-12-07, as root): full [40225426 ns, 688, 3772, 2], user space only
        // [40185412 ns, 638, 0, 0].
        // The task clock: the same count (opened a moment apart, so within 1 %).
        assert!(
            f[0] > 1e6 && (u[0] - f[0]).abs() <= 0.01 * f[0],
            "{f:?} {u:?}"
        );
        // Page faults: the user-mode part, fewer than in full but not none.
        assert!(u[1] > 100.0 && u[1] < f[1], "{f:?} {u:?}");
        // Context switches happen in the kernel: none seen user-space only.
        assert!(f[2] >= 5.0 && u[2] == 0.0, "{f:?} {u:?}");
        assert_eq!(u[3], 0.0, "{f:?} {u:?}");
    }

    #[test]
    fn a_refused_event_is_explained_without_a_raw_os_error() {
        let no_pmu = why_refused(&std::io::Error::from_raw_os_error(libc::ENOENT));
        assert!(
            no_pmu.contains("virtual PMU") && !no_pmu.contains("error"),
            "{no_pmu}"
        );
        let paranoid = why_refused(&std::io::Error::from_raw_os_error(libc::EACCES));
        assert!(paranoid.contains("perf_event_paranoid"), "{paranoid}");
    }

    #[test]
    fn attr_is_the_version_0_size() {
        assert_eq!(std::mem::size_of::<PerfEventAttr>(), 64);
    }

    #[test]
    fn per_op_divides_deltas() {
        let a = CounterValues {
            values: vec![("page-faults".into(), 10.0)],
        };
        let b = CounterValues {
            values: vec![("page-faults".into(), 110.0)],
        };
        assert_eq!(
            b.minus(&a).per_op(50),
            vec![("page-faults".to_string(), 2.0)]
        );
    }
}
