//! The monitors every measuring command records around each measured unit (a UnixBench test
//! at one copy count, an AIM7 load point, a will-it-scale or model run): the workload's own
//! CPU time, faults and context switches (`getrusage` of this process and the children it
//! waited for), and the machine's counters (`/proc/vmstat`, `/proc/stat`, `/proc/interrupts`,
//! `/proc/softirqs`, `/proc/schedstat`, the cgroup's `cpu.stat`, a few `/proc/meminfo`
//! gauges). See `../shared/spec/monitors.md` for what LKP and mmtests collect.
//!
//! A harness opens a window (`monitoring::Monitoring::open`: a [`Snapshot`], and with
//! `--profile` a perf recording) at the start of a unit and closes it at its end, outside
//! the timed region (before the workers are released and after they are reaped), and adds the windows of a unit with [`Sample::add`]. What the numbers are named
//! and how they become comparable metrics (shares, rates, per operation) is
//! `crate::record::monitors`; this module only reads.
//!
//! A snapshot reads seven small files: about 0.2 ms on this project's 2-CPU VM, twice per
//! pass, outside the timed region: nothing of the default monitors runs while the workload
//! is timed. The monitors that must run inside the window, because they hook the paths a
//! workload times (the inherited perf-stat counters: fork, exit, every context switch), are
//! opt-in (`--perf-stat`), and a window records which ran ([`Sample::in_window`]); their
//! measured cost per workload is [`in_window_cost`]'s (the bench `monitor_overhead`).

pub mod in_window_cost;
pub mod monitoring;
pub mod procfs;
pub mod profile;
pub mod rusage;
pub mod task_events;

use crate::noise::cgroup;
use crate::noise::sysfs::Root;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Instant;

/// What the monitors saw over a unit's windows.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Sample {
    /// Seconds inside the windows.
    pub wall_s: f64,
    /// User and system CPU seconds of the workload's processes: this process and every
    /// child (and grandchild) it waited for in the windows.
    pub user_s: f64,
    pub system_s: f64,
    /// Differences of cumulative counters over the windows, by LKP-style name
    /// (`proc-vmstat.pgfault`, `time.voluntary_context_switches`, `proc-stat.ticks.steal`).
    pub counters: BTreeMap<String, f64>,
    /// Gauges read at the end of the last window (`meminfo.AnonHugePages`, KiB).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub gauges: BTreeMap<String, f64>,
    /// The monitors this kernel does not offer, one line each with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// With `--profile`: each symbol's share of the samples (`perf-profile.self.<event>.<sym>`,
    /// `perf-profile.children.…`, in %), summed over `profile_windows` windows.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub profile: BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub profile_windows: u32,
    /// With `--profile-data DIR`: the perf data files kept there, one per window.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profile_data: Vec<String>,
    /// The monitors that ran inside the timed window (the kernel worked for them on the
    /// workload's own paths): `perf-stat` (`--perf-stat`), `perf-record` (`--profile`).
    /// Empty by default. A record of an earlier build has no such field though its perf-stat
    /// counters did run inside: see [`Sample::ran_in_window`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub in_window: Vec<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Sample {
    /// Adds another window of the same unit.
    pub fn add(&mut self, other: &Sample) {
        self.wall_s += other.wall_s;
        self.user_s += other.user_s;
        self.system_s += other.system_s;
        for (k, v) in &other.counters {
            *self.counters.entry(k.clone()).or_insert(0.0) += v;
        }
        for (k, v) in &other.gauges {
            self.gauges.insert(k.clone(), *v);
        }
        for (k, v) in &other.profile {
            *self.profile.entry(k.clone()).or_insert(0.0) += v;
        }
        self.profile_windows += other.profile_windows;
        self.profile_data.extend(other.profile_data.iter().cloned());
        for w in &other.in_window {
            if !self.in_window.contains(w) {
                self.in_window.push(w.clone());
            }
        }
        for m in &other.missing {
            if !self.missing.contains(m) {
                self.missing.push(m.clone());
            }
        }
    }

    /// CPU seconds of the workload's processes.
    pub fn cpu_s(&self) -> f64 {
        self.user_s + self.system_s
    }

    /// Drops the counters' and gauges' values, which the run's metrics repeat, keeping what
    /// [`Sample::ran_in_window`] reads (an earlier build's perf-stat counters say it ran
    /// inside): what a comparison of many runs keeps of each (`patchbench compare`).
    pub fn keep_only_window_evidence(&mut self) {
        self.counters.retain(|k, _| k.starts_with(PERF_STAT_PREFIX));
        self.gauges.clear();
    }

    /// The monitors that ran inside the timed window: those recorded, or for a record of a
    /// build before the field existed (whose perf-stat counters always ran inside the window
    /// and whose profiles always did), what its rows show.
    pub fn ran_in_window(&self) -> Vec<String> {
        if !self.in_window.is_empty() {
            return self.in_window.clone();
        }
        let mut out = Vec::new();
        if self
            .counters
            .keys()
            .any(|k| k.starts_with(PERF_STAT_PREFIX))
        {
            out.push(PERF_STAT.to_string());
        }
        if self.profile_windows > 0 {
            out.push(PERF_RECORD.to_string());
        }
        out
    }

    /// How the perf-stat counters counted, from their rows: None without perf-stat rows, else
    /// in full or user space only (rows named `:u`, `crate::perf_scope`).
    pub fn perf_stat_scope(&self) -> Option<crate::perf_scope::Scope> {
        use crate::perf_scope::{Scope, USER_SUFFIX};
        let mut rows = self
            .counters
            .keys()
            .filter(|k| k.starts_with(PERF_STAT_PREFIX))
            .peekable();
        rows.peek()?;
        Some(if rows.any(|k| k.ends_with(USER_SUFFIX)) {
            Scope::UserOnly
        } else {
            Scope::Full
        })
    }
}

/// The in-window monitor of `--perf-stat`: the workload's inherited perf counters.
pub const PERF_STAT: &str = "perf-stat";
/// The in-window monitor of `--profile`: a machine-wide `perf record`.
pub const PERF_RECORD: &str = "perf-record";
/// The rows the perf-stat counters make.
const PERF_STAT_PREFIX: &str = "perf-stat.";

/// The readings at the start of a window.
pub struct Snapshot {
    at: Instant,
    /// With `--perf-stat` only: counters that run inside the window.
    events: Option<task_events::Events>,
    usage: rusage::Usage,
    counters: BTreeMap<String, f64>,
}

impl Snapshot {
    /// Reads every monitor now; with `perf_stat`, also opens the workload's inherited perf
    /// counters, which count (and cost) inside the window.
    pub fn take(perf_stat: bool) -> Snapshot {
        let (counters, _, _) = read_counters(&Root::system());
        Snapshot {
            usage: rusage::Usage::now(),
            counters,
            events: perf_stat.then(task_events::Events::open),
            at: Instant::now(),
        }
    }

    /// Reads every monitor again and returns what changed since the snapshot.
    pub fn end(self) -> Sample {
        let wall_s = self.at.elapsed().as_secs_f64();
        let usage = rusage::Usage::now();
        let (after, gauges, mut missing) = read_counters(&Root::system());
        let perf_stat = self.events.is_some();
        if perf_stat {
            missing.extend(task_events::unavailable());
            missing.extend(task_events::user_space_only());
        }
        let mut counters: BTreeMap<String, f64> = after
            .iter()
            .filter_map(|(k, v)| {
                let before = self.counters.get(k)?;
                // A counter that went backwards was reset (a CPU went offline, a cgroup
                // moved): its difference is unknown, not negative.
                (v >= before).then(|| (k.clone(), v - before))
            })
            .collect();
        // The counters ran inside the window only where one could be opened.
        let in_window = match self.events {
            Some(events) if events.any() => {
                counters.extend(events.read());
                vec![PERF_STAT.to_string()]
            }
            _ => Vec::new(),
        };
        let d = usage.since(&self.usage);
        counters.insert("time.minor_page_faults".into(), d.minflt);
        counters.insert("time.major_page_faults".into(), d.majflt);
        counters.insert("time.voluntary_context_switches".into(), d.nvcsw);
        counters.insert("time.involuntary_context_switches".into(), d.nivcsw);
        Sample {
            wall_s,
            user_s: d.user_s,
            system_s: d.system_s,
            counters,
            gauges,
            missing,
            in_window,
            ..Sample::default()
        }
    }
}

/// The monitors this system lacks, one line each saying why and how to get it (said once by
/// a command before it measures); the perf-stat counters only when asked for (`perf_stat`).
pub fn unavailable(perf_stat: bool) -> Vec<String> {
    let mut lines = read_counters(&Root::system()).2;
    if perf_stat {
        lines.extend(task_events::unavailable());
    }
    lines
}

/// A counter file's parser (`procfs`).
type Parser = fn(&str) -> Vec<(String, f64)>;

/// Cumulative counters, gauges and the monitors that could not be read.
fn read_counters(root: &Root) -> (BTreeMap<String, f64>, BTreeMap<String, f64>, Vec<String>) {
    let mut counters = BTreeMap::new();
    let mut missing = Vec::new();
    let mut put = |v: Vec<(String, f64)>| counters.extend(v);
    let files: [(&str, Parser); 4] = [
        ("/proc/vmstat", procfs::vmstat),
        ("/proc/stat", procfs::stat),
        ("/proc/interrupts", procfs::interrupts),
        ("/proc/softirqs", procfs::softirqs),
    ];
    for (path, parse) in files {
        match root.read(path) {
            Some(text) => put(parse(&text)),
            None => missing.push(format!(
                "{path} cannot be read; its counters are not recorded"
            )),
        }
    }
    match root.read("/proc/schedstat").map(|t| procfs::schedstat(&t)) {
        Some(Some(v)) => put(v),
        Some(None) => missing.push(
            "/proc/schedstat has a version this build does not read (15 to 17); run delay \
             is not recorded"
                .into(),
        ),
        None => missing.push(
            "/proc/schedstat is missing (a kernel built without CONFIG_SCHEDSTATS); run \
             delay and time slices are not recorded"
                .into(),
        ),
    }
    if let Some(dir) = cpu_cgroup_dir(root) {
        if let Some(text) = root.read(&format!("{dir}/cpu.stat")) {
            put(procfs::cgroup_cpu_stat(&text));
        }
    }
    let gauges = root
        .read("/proc/meminfo")
        .map(|t| procfs::meminfo(&t).into_iter().collect())
        .unwrap_or_default();
    (counters, gauges, missing)
}

/// This process's CPU cgroup directory (found once for the running system).
fn cpu_cgroup_dir(root: &Root) -> Option<String> {
    static SYSTEM: OnceLock<Option<String>> = OnceLock::new();
    if root.is_system() {
        SYSTEM
            .get_or_init(|| cgroup::locate(&Root::system()).map(|c| c.dir))
            .clone()
    } else {
        cgroup::locate(root).map(|c| c.dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_counts_the_childrens_cpu_time_and_faults() {
        let s = Snapshot::take(false);
        // A child that faults in 64 MiB and burns CPU, waited for inside the window.
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg("i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; head -c 67108864 /dev/zero | tail -c 1 >/dev/null")
            .status()
            .unwrap();
        assert!(status.success());
        let d = s.end();
        assert!(d.cpu_s() > 0.0, "{d:?}");
        assert!(d.counters["time.minor_page_faults"] > 100.0, "{d:?}");
        // The machine's count holds the child's faults too (not exactly: other tests' threads
        // fault meanwhile, and a fault retried counts once in one and twice in the other).
        assert!(
            d.counters["proc-vmstat.pgfault"] >= 0.5 * d.counters["time.minor_page_faults"],
            "{d:?}"
        );
        assert!(d.counters["proc-stat.ctxt"] > 0.0);
        assert!(d.wall_s > 0.0);
        // Nothing ran inside the window by default.
        assert!(
            d.in_window.is_empty() && d.ran_in_window().is_empty(),
            "{d:?}"
        );
        assert!(!d.counters.keys().any(|k| k.starts_with("perf-stat.")));
    }

    #[test]
    fn perf_stat_counts_inside_the_window_and_says_so() {
        // What the counters count is task_events' test; here, that they ran and say so.
        let d = Snapshot::take(true).end();
        assert_eq!(d.in_window, vec![PERF_STAT.to_string()]);
        assert!(d.counters.contains_key("perf-stat.task-clock"), "{d:?}");
        // A record of an earlier build: no field, but its perf-stat rows ran inside.
        let old = Sample {
            in_window: Vec::new(),
            ..d
        };
        assert_eq!(old.ran_in_window(), vec![PERF_STAT.to_string()]);
    }

    #[test]
    fn windows_add_up_and_missing_lines_are_said_once() {
        let mut a = Sample {
            wall_s: 1.0,
            user_s: 0.5,
            counters: [("x".to_string(), 2.0)].into(),
            missing: vec!["m".into()],
            ..Sample::default()
        };
        a.in_window = vec![PERF_STAT.into()];
        a.add(&a.clone());
        assert_eq!(a.in_window, vec![PERF_STAT.to_string()]);
        assert_eq!(a.wall_s, 2.0);
        assert_eq!(a.counters["x"], 4.0);
        assert_eq!(a.missing, vec!["m".to_string()]);
    }

    #[test]
    fn a_system_without_schedstat_says_so_and_how() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        std::fs::write(dir.path().join("proc/vmstat"), "pgfault 3\n").unwrap();
        let (c, _, missing) = read_counters(&Root::at(dir.path()));
        assert_eq!(c["proc-vmstat.pgfault"], 3.0);
        assert!(
            missing.iter().any(|m| m.contains("CONFIG_SCHEDSTATS")),
            "{missing:?}"
        );
        assert!(missing
            .iter()
            .any(|m| m.contains("/proc/stat cannot be read")));
    }
}
