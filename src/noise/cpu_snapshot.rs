//! The CPU time of the machine and of every process at one moment ([`CpuSnapshot`]): the
//! `cpu` line of `/proc/stat` (including the time a hypervisor stole), every
//! `/proc/<pid>/stat` (each process's own time and that of the exited children it waited for)
//! and the thermal throttle counters. Two of them make a window: `super::activity` says what
//! else used the CPUs in it, `super::window_cpu` how much each process used inside it.

use super::cpu_power::{read_throttle, ThrottleCounts};
use super::sysfs::Root;
use std::collections::BTreeMap;

/// Machine-wide CPU time from the `cpu` line of `/proc/stat`, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTimes {
    /// user + nice + system + irq + softirq (guest time is already inside user and nice).
    pub busy: u64,
    /// idle + iowait.
    pub idle: u64,
    /// Time a hypervisor ran something else while this guest's virtual CPU wanted to run.
    pub steal: u64,
}

impl CpuTimes {
    pub fn total(&self) -> u64 {
        self.busy + self.idle + self.steal
    }
}

/// One process's line of `/proc/<pid>/stat`.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcTimes {
    pub pid: i32,
    pub comm: String,
    pub ppid: i32,
    /// Start time after boot, in ticks: tells a reused pid from the process seen before.
    pub start: u64,
    /// utime + stime.
    pub own: u64,
    /// cutime + cstime: time of exited children this process waited for.
    pub children: u64,
    pub kernel_thread: bool,
    /// Ended and not yet reaped (state `Z` or `X`): still listed, its times final.
    pub zombie: bool,
}

/// `PF_KTHREAD` in the flags field of `/proc/<pid>/stat`.
const PF_KTHREAD: u64 = 0x0020_0000;

/// Parses the `cpu` line of `/proc/stat`; also returns the number of `cpuN` lines.
pub fn parse_proc_stat(text: &str) -> Option<(CpuTimes, usize)> {
    let s = crate::proc_stat::ProcStat::parse(text);
    if s.cpu.len() < 4 {
        return None;
    }
    let at = |i: usize| s.ticks(i);
    let times = CpuTimes {
        busy: at(0) + at(1) + at(2) + at(5) + at(6),
        idle: at(3) + at(4),
        steal: at(7),
    };
    Some((times, s.cpus))
}

/// Parses `/proc/<pid>/stat`. The command name is in parentheses and may itself contain
/// spaces and parentheses, so the fields are counted from the last `)`.
pub fn parse_pid_stat(text: &str) -> Option<ProcTimes> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid: i32 = text.get(..open)?.trim().parse().ok()?;
    let comm = text.get(open + 1..close)?.to_string();
    // Field 3 (state) is index 0 here.
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    let num = |field: usize| -> Option<u64> { rest.get(field - 3)?.parse().ok() };
    Some(ProcTimes {
        pid,
        comm,
        ppid: rest.get(1)?.parse().ok()?,
        start: num(22)?,
        own: num(14)? + num(15)?,
        children: num(16)? + num(17)?,
        kernel_thread: num(9)? & PF_KTHREAD != 0,
        zombie: matches!(rest.first(), Some(&"Z") | Some(&"X")),
    })
}

/// The machine's and every process's CPU time at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuSnapshot {
    pub times: CpuTimes,
    /// CPUs counted in `/proc/stat` (0 when it could not be read).
    pub cpus: usize,
    /// By pid.
    pub procs: BTreeMap<i32, ProcTimes>,
    pub throttle: Option<ThrottleCounts>,
    /// Clock ticks per second (`sysconf(_SC_CLK_TCK)`, normally 100).
    pub ticks_per_sec: u64,
}

impl CpuSnapshot {
    /// Builds a snapshot from the texts of `/proc/stat` and of `/proc/<pid>/stat` files.
    pub fn parse(
        proc_stat: &str,
        pid_stats: &[String],
        throttle: Option<ThrottleCounts>,
        ticks_per_sec: u64,
    ) -> CpuSnapshot {
        let (times, cpus) = parse_proc_stat(proc_stat).unwrap_or_default();
        let procs = pid_stats
            .iter()
            .filter_map(|t| parse_pid_stat(t))
            .map(|p| (p.pid, p))
            .collect();
        CpuSnapshot {
            times,
            cpus,
            procs,
            throttle,
            ticks_per_sec: ticks_per_sec.max(1),
        }
    }

    /// Reads a snapshot under `root`.
    pub fn read(root: &Root) -> CpuSnapshot {
        let stat = root.read("/proc/stat").unwrap_or_default();
        let pid_stats: Vec<String> = root
            .list("/proc")
            .iter()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            // A process may exit between the listing and the read: skip it.
            .filter_map(|pid| root.read(&format!("/proc/{pid}/stat")))
            .collect();
        CpuSnapshot::parse(&stat, &pid_stats, read_throttle(root), clock_ticks())
    }

    /// Reads a snapshot of the running system.
    pub fn take() -> CpuSnapshot {
        CpuSnapshot::read(&Root::system())
    }
}

fn clock_ticks() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as u64
    } else {
        100
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Taken from this project's 2-CPU VM (Linux 6.18), `intr` and `softirq` lines cut.
    const PROC_STAT: &str = "\
cpu  81470 0 44990 296857 1341 0 137 487 0 0
cpu0 39584 0 21159 151280 358 0 19 235 0 0
cpu1 41886 0 23830 145577 983 0 117 251 0 0
ctxt 3941437
btime 1764620226
processes 11191
procs_running 1
procs_blocked 0
";
    /// Real lines from the same machine: `cat` itself, init and kthreadd.
    const CAT: &str = "11190 (cat) R 11172 11172 8813 0 -1 4194304 102 0 0 0 0 0 0 0 20 0 1 0 214382 3133440 401 18446744073709551615 93868893904896 93868893924777 140728415959488 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 93868893940784 93868893942400 93869375746048 140728415963678 140728415963698 140728415963698 140728415965163 0";
    const INIT: &str = "1 (process_api) S 0 0 0 0 -1 4194560 24360 366056 0 176 127 620 866 843 10 -10 14 0 25 49696768 3872 18446744073709551615 1 1 0 0 0 0 0 4096 1256 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0";
    const KTHREADD: &str = "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 25 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0";

    #[test]
    fn parses_a_real_proc_stat() {
        let (t, cpus) = parse_proc_stat(PROC_STAT).unwrap();
        assert_eq!(cpus, 2);
        assert_eq!(t.busy, 81470 + 44990 + 137);
        assert_eq!(t.idle, 296857 + 1341);
        assert_eq!(t.steal, 487);
        // A kernel before 2.6.11 had no steal field.
        let (old, _) = parse_proc_stat("cpu  1 2 3 4\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!((old.busy, old.idle, old.steal), (6, 4, 0));
        assert!(parse_proc_stat("garbage").is_none());
    }

    #[test]
    fn parses_real_pid_stat_lines() {
        let cat = parse_pid_stat(CAT).unwrap();
        assert_eq!(
            (cat.pid, cat.comm.as_str(), cat.ppid),
            (11190, "cat", 11172)
        );
        assert_eq!((cat.own, cat.children, cat.start), (0, 0, 214382));
        assert!(!cat.kernel_thread && !cat.zombie);
        assert!(parse_pid_stat(&CAT.replace(") R ", ") Z ")).unwrap().zombie);
        let init = parse_pid_stat(INIT).unwrap();
        assert_eq!((init.own, init.children), (127 + 620, 866 + 843));
        assert!(parse_pid_stat(KTHREADD).unwrap().kernel_thread);
        // A name with spaces and parentheses.
        let odd = CAT.replace("(cat)", "(my (odd) prog)");
        let p = parse_pid_stat(&odd).unwrap();
        assert_eq!((p.comm.as_str(), p.ppid), ("my (odd) prog", 11172));
        assert!(parse_pid_stat("12 (cut").is_none());
    }
}
