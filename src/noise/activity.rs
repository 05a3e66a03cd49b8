//! What else used the CPUs between two moments: the per-pass monitor and the sample `check`
//! takes. A [`CpuSnapshot`] is `/proc/stat` (CPU time of the whole machine, including the
//! time a hypervisor stole), every `/proc/<pid>/stat` (CPU time of each process and of its
//! exited children) and the thermal throttle counters; [`activity`] compares two snapshots
//! and reports the stolen share, the processes other than ours that used more than a set
//! share of a CPU, and throttling.
//!
//! A harness calls it around a pass, outside the timed region:
//! `let before = CpuSnapshot::take(); /* the pass */ let after = CpuSnapshot::take();
//! let a = activity(&before, &after, &MonitorSettings::default());` and stores `a` (serde)
//! with the pass and prints `a.warnings()`. "Ours" is this process and every process whose
//! parent chain leads to it (the copies and their children), found in the snapshots
//! themselves. Taking a snapshot reads one small file per process: 8 to 10 ms for 130
//! processes on this project's loaded 2-CPU VM (release build).
//!
//! A process's share counts only CPU time inside the window: its own, and that of the
//! children it reaped in the window less whatever they (and everything they had reaped)
//! used before it ([`super::window_cpu`]), so no share exceeds 100 % × the CPUs.
//!
//! Limits, from what `/proc` offers: a process that both started and exited between the two
//! snapshots is seen only through its parent's "children" time, once the parent waited for
//! it (so a build's short compiler runs show up under `make`); one orphaned and reaped by
//! init shows up under init. Where the snapshots cannot tell who reaped an ended process, its
//! time from before the window is taken off every process that could have, so a share may
//! read low, never high. CPU time is counted in clock ticks (1/100 s normally), so over a
//! 0.25 s window on one CPU one tick is 4 % of a CPU.

use super::cpu_snapshot::CpuSnapshot;
use super::{Finding, Kind};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Watches one unit of work (a pass, a load point, a task count) from outside its timed
/// region: a snapshot when it starts, another when it ends, and what happened in between.
#[derive(Debug, Clone)]
pub struct Watch {
    before: CpuSnapshot,
}

impl Watch {
    /// Takes the first snapshot (8-10 ms for 130 processes; call it before the unit's clock
    /// starts).
    pub fn start() -> Watch {
        Watch {
            before: CpuSnapshot::take(),
        }
    }

    /// Takes the second snapshot and says what else used the CPUs, with the default
    /// thresholds (this process and its descendants are ours).
    pub fn finish(&self) -> Activity {
        activity(
            &self.before,
            &CpuSnapshot::take(),
            &MonitorSettings::default(),
        )
    }
}

/// What counts as noise, and which processes are ours.
#[derive(Debug, Clone, PartialEq)]
pub struct MonitorSettings {
    /// Another process using at least this share of one CPU (%) is reported.
    pub busy_pct: f64,
    /// Stolen time of at least this share of all CPU time (%) is reported.
    pub steal_pct: f64,
    /// Processes whose parent chain reaches one of these pids are ours, not noise.
    pub ours: Vec<i32>,
}

impl Default for MonitorSettings {
    /// 10 % of a CPU, 1 % stolen, this process and its descendants ours.
    fn default() -> MonitorSettings {
        MonitorSettings {
            busy_pct: 10.0,
            steal_pct: 1.0,
            ours: vec![std::process::id() as i32],
        }
    }
}

/// Another process's CPU use between two snapshots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BusyProcess {
    pub pid: i32,
    pub comm: String,
    /// Share of one CPU over the window, %, including exited children it waited for.
    pub cpu_pct: f64,
    #[serde(default)]
    pub kernel_thread: bool,
}

impl BusyProcess {
    /// `cc1 (pid 4242) 97% of a CPU`. Any process sets its own `comm`: it is shown escaped
    /// and cut (`crate::safe_text::field`).
    pub fn describe(&self) -> String {
        let what = if self.kernel_thread {
            "kernel thread "
        } else {
            ""
        };
        format!(
            "{what}{} (pid {}) {:.0}% of a CPU",
            crate::safe_text::field(&self.comm),
            self.pid,
            self.cpu_pct
        )
    }
}

/// What happened on the machine between two snapshots, besides our own processes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Activity {
    /// Length of the window, from the machine's CPU time (s).
    pub window_secs: f64,
    pub cpus: usize,
    /// Share of all CPU time stolen by the hypervisor, %.
    pub steal_pct: f64,
    pub steal_ticks: u64,
    pub total_ticks: u64,
    /// All other processes together, % of one CPU.
    pub other_cpu_pct: f64,
    /// The busiest other processes (up to 5), busiest first.
    pub busiest: Vec<BusyProcess>,
    /// The thresholds the warnings used.
    pub busy_threshold_pct: f64,
    pub steal_threshold_pct: f64,
    /// Thermal throttle events during the window (None: counters not exposed).
    #[serde(default)]
    pub throttle_events: Option<u64>,
}

impl Activity {
    /// Other processes at or above the busy threshold.
    pub fn busy(&self) -> impl Iterator<Item = &BusyProcess> {
        self.busiest
            .iter()
            .filter(|p| p.cpu_pct >= self.busy_threshold_pct)
    }

    /// Stolen time at or above the threshold (and at least 2 ticks, so that one tick in a
    /// short window is not a warning).
    pub fn steal_is_noise(&self) -> bool {
        self.steal_ticks >= 2 && self.steal_pct >= self.steal_threshold_pct
    }

    /// `3.2% of CPU time (7 of 219 ticks)`.
    pub fn describe_steal(&self) -> String {
        format!(
            "{:.1}% of CPU time ({} of {} ticks)",
            self.steal_pct, self.steal_ticks, self.total_ticks
        )
    }

    /// One line per thing that disturbed the window; empty when nothing did.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.steal_is_noise() {
            out.push(format!(
                "the hypervisor stole {} over {:.2} s",
                self.describe_steal(),
                self.window_secs
            ));
        }
        for p in self.busy() {
            out.push(format!(
                "another process used the CPU: {} over {:.2} s",
                p.describe(),
                self.window_secs
            ));
        }
        if let Some(n) = self.throttle_events.filter(|&n| n > 0) {
            out.push(format!(
                "the CPU was thermally throttled {n} times over {:.2} s",
                self.window_secs
            ));
        }
        out
    }
}

/// Compares two snapshots (`before` taken first).
pub fn activity(before: &CpuSnapshot, after: &CpuSnapshot, settings: &MonitorSettings) -> Activity {
    let d = |a: u64, b: u64| a.saturating_sub(b);
    let total = d(after.times.total(), before.times.total());
    let steal = d(after.times.steal, before.times.steal);
    let cpus = after.cpus.max(1);
    // Ticks of one CPU over the window: the machine's ticks shared out over its CPUs.
    let per_cpu = total as f64 / cpus as f64;
    let pct_of_cpu = |ticks: u64| {
        if per_cpu > 0.0 {
            100.0 * ticks as f64 / per_cpu
        } else {
            0.0
        }
    };
    let ours = our_pids(before, after, &settings.ours);
    // No process can use more than every CPU of the window; the per-process times are read
    // a few ms after /proc/stat, so a busy process can show a tick or two more than the
    // window: a share is capped at what the CPUs could give.
    let most = 100.0 * cpus as f64;
    let mut others: Vec<BusyProcess> = Vec::new();
    for (pid, ticks) in super::window_cpu::in_window_ticks(before, after) {
        if ours.contains(&pid) {
            continue;
        }
        let Some(now) = after.procs.get(&pid) else {
            continue;
        };
        others.push(BusyProcess {
            pid,
            comm: now.comm.clone(),
            cpu_pct: pct_of_cpu(ticks).min(most),
            kernel_thread: now.kernel_thread,
        });
    }
    let other_cpu_pct = others.iter().map(|p| p.cpu_pct).sum::<f64>().min(most);
    others.sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct).then(a.pid.cmp(&b.pid)));
    others.truncate(5);
    let throttle_events = match (before.throttle, after.throttle) {
        (Some(b), Some(a)) => Some(d(a.total(), b.total())),
        _ => None,
    };
    Activity {
        window_secs: per_cpu / after.ticks_per_sec.max(1) as f64,
        cpus: after.cpus,
        steal_pct: if total > 0 {
            100.0 * steal as f64 / total as f64
        } else {
            0.0
        },
        steal_ticks: steal,
        total_ticks: total,
        other_cpu_pct,
        busiest: others,
        busy_threshold_pct: settings.busy_pct,
        steal_threshold_pct: settings.steal_pct,
        throttle_events,
    }
}

/// The `other processes` line of a check: warn when one is at or above the threshold.
pub fn others_finding(a: &Activity) -> Finding {
    let (id, source) = ("others", "other processes");
    if a.total_ticks == 0 {
        return Finding::not_exposed(id, source, Kind::Activity, "no /proc/stat to sample");
    }
    let busy: Vec<String> = a.busy().map(BusyProcess::describe).collect();
    let window = format!("during the {:.2} s sample", a.window_secs);
    if busy.is_empty() {
        let busiest = a
            .busiest
            .first()
            .map(|p| format!(" (busiest: {})", p.describe()))
            .unwrap_or_default();
        Finding::ok(
            id,
            source,
            Kind::Activity,
            format!(
                "none above {:.0}% of a CPU {window}{busiest}",
                a.busy_threshold_pct
            ),
        )
    } else {
        Finding::warn(
            id,
            source,
            Kind::Activity,
            format!("{} {window}", busy.join(", ")),
            "stop them, or wait until they finish, before measuring",
        )
    }
}

/// The `steal` line of a check.
pub fn steal_finding(a: &Activity) -> Finding {
    let (id, source) = ("steal", "hypervisor steal");
    if a.total_ticks == 0 {
        return Finding::not_exposed(id, source, Kind::Activity, "no /proc/stat to sample");
    }
    let value = format!(
        "{} during the {:.2} s sample",
        a.describe_steal(),
        a.window_secs
    );
    if a.steal_is_noise() {
        Finding::warn(
            id,
            source,
            Kind::Activity,
            value,
            "the host ran other work on these CPUs: use a VM with dedicated (pinned, not \
             overcommitted) CPUs, or bare metal",
        )
    } else {
        Finding::ok(id, source, Kind::Activity, value)
    }
}

/// The pids in either snapshot whose parent chain reaches one of `roots`.
fn our_pids(before: &CpuSnapshot, after: &CpuSnapshot, roots: &[i32]) -> BTreeSet<i32> {
    let mut parent: BTreeMap<i32, i32> = before.procs.iter().map(|(p, t)| (*p, t.ppid)).collect();
    parent.extend(after.procs.iter().map(|(p, t)| (*p, t.ppid)));
    let mut ours = BTreeSet::new();
    for &pid in parent.keys() {
        let mut p = pid;
        // Chains are short; the bound guards against a loop made by pid reuse.
        for _ in 0..64 {
            if roots.contains(&p) {
                ours.insert(pid);
                break;
            }
            match parent.get(&p) {
                Some(&pp) if pp > 0 && pp != p => p = pp,
                _ => break,
            }
        }
    }
    ours.extend(roots.iter().copied());
    ours
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::cpu_power::ThrottleCounts;

    /// A hand-made `/proc/<pid>/stat` line: utime, stime, cutime, cstime given.
    fn pid_line(pid: i32, comm: &str, ppid: i32, start: u64, times: [u64; 4]) -> String {
        format!(
            "{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194304 0 0 0 0 {} {} {} {} 20 0 1 0 {start} 0 0",
            times[0], times[1], times[2], times[3]
        )
    }

    fn stat(user: u64, idle: u64, steal: u64) -> String {
        // Two CPUs; per-CPU lines only need to be there.
        format!("cpu  {user} 0 0 {idle} 0 0 0 {steal} 0 0\ncpu0 0 0 0 0\ncpu1 0 0 0 0\n")
    }

    fn settings() -> MonitorSettings {
        MonitorSettings {
            busy_pct: 10.0,
            steal_pct: 1.0,
            ours: vec![100],
        }
    }

    #[test]
    fn a_busy_neighbour_and_steal_are_reported() {
        // One second on 2 CPUs at 100 ticks/s: 200 ticks, 10 of them stolen.
        let before = CpuSnapshot::parse(
            &stat(1000, 5000, 50),
            &[
                pid_line(100, "patchbench", 1, 500, [10, 0, 0, 0]),
                pid_line(101, "worker", 100, 600, [5, 0, 0, 0]),
                pid_line(200, "make", 1, 50, [1, 1, 300, 100]),
                pid_line(201, "cc1", 200, 700, [40, 0, 0, 0]),
                pid_line(300, "idle daemon", 1, 10, [7, 0, 0, 0]),
            ],
            None,
            100,
        );
        let after = CpuSnapshot::parse(
            &stat(1150, 5040, 60),
            &[
                pid_line(100, "patchbench", 1, 500, [20, 0, 0, 0]),
                pid_line(101, "worker", 100, 600, [95, 0, 0, 0]),
                pid_line(102, "grandchild", 101, 900, [30, 0, 0, 0]),
                // cc1 (40 ticks before, 60 in the window, then exited) was reaped by make.
                pid_line(200, "make", 1, 50, [2, 1, 300 + 100, 100]),
                pid_line(300, "idle daemon", 1, 10, [7, 0, 0, 0]),
                pid_line(400, "new job", 1, 950, [12, 3, 0, 0]),
            ],
            None,
            100,
        );
        let a = activity(&before, &after, &settings());
        assert_eq!(a.total_ticks, 200);
        assert!((a.window_secs - 1.0).abs() < 1e-9);
        assert!((a.steal_pct - 5.0).abs() < 1e-9);
        assert!(a.steal_is_noise());
        // make: 1 own tick + 100 reaped - 40 of cc1's from before the window = 61 ticks of
        // 100 per CPU; the new job 15; the idle daemon nothing; ours (100, 101, 102) skipped.
        let names: Vec<(&str, i64)> = a
            .busiest
            .iter()
            .map(|p| (p.comm.as_str(), p.cpu_pct.round() as i64))
            .collect();
        assert_eq!(names, vec![("make", 61), ("new job", 15)]);
        assert!((a.other_cpu_pct - 76.0).abs() < 1e-9);
        assert_eq!(a.busy().count(), 2);
        let w = a.warnings();
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(
            w[0].contains("5.0% of CPU time (10 of 200 ticks)"),
            "{}",
            w[0]
        );
        assert!(w[1].contains("make (pid 200) 61% of a CPU"), "{}", w[1]);
    }

    #[test]
    fn a_quiet_window_has_no_warnings() {
        let procs = [pid_line(300, "sshd", 1, 10, [7, 0, 0, 0])];
        let before = CpuSnapshot::parse(&stat(1000, 5000, 50), &procs, None, 100);
        let after = CpuSnapshot::parse(&stat(1002, 5198, 51), &procs, None, 100);
        let a = activity(&before, &after, &settings());
        assert!(!a.steal_is_noise(), "one tick is not a warning");
        assert!(a.busiest.is_empty());
        assert!(a.warnings().is_empty());
    }

    #[test]
    fn a_reused_pid_counts_as_a_new_process() {
        let before = CpuSnapshot::parse(
            &stat(0, 0, 0),
            &[pid_line(300, "old", 1, 10, [500, 0, 0, 0])],
            None,
            100,
        );
        let after = CpuSnapshot::parse(
            &stat(100, 100, 0),
            &[pid_line(300, "new", 1, 90, [20, 0, 0, 0])],
            None,
            100,
        );
        let a = activity(&before, &after, &settings());
        assert_eq!(a.busiest[0].comm, "new");
        assert!((a.busiest[0].cpu_pct - 20.0).abs() < 1e-9);
    }

    #[test]
    fn throttle_events_are_counted_over_the_window() {
        let t = |core, package| Some(ThrottleCounts { core, package });
        let before = CpuSnapshot::parse(&stat(0, 0, 0), &[], t(5, 1), 100);
        let after = CpuSnapshot::parse(&stat(100, 100, 0), &[], t(8, 2), 100);
        let a = activity(&before, &after, &settings());
        assert_eq!(a.throttle_events, Some(4));
        assert!(a.warnings()[0].contains("throttled 4 times"));
    }

    #[test]
    fn an_unreadable_proc_gives_an_empty_window() {
        let empty = CpuSnapshot::parse("", &[], None, 100);
        let a = activity(&empty, &empty, &settings());
        assert_eq!((a.total_ticks, a.window_secs, a.cpus), (0, 0.0, 0));
        assert!(a.warnings().is_empty());
    }

    #[test]
    fn a_live_snapshot_sees_this_process() {
        let s = CpuSnapshot::take();
        assert!(s.cpus >= 1);
        assert!(s.procs.contains_key(&(std::process::id() as i32)));
        let a = activity(&s, &CpuSnapshot::take(), &MonitorSettings::default());
        assert!(a.busiest.iter().all(|p| p.pid != std::process::id() as i32));
    }
}
