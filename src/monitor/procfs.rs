//! The kernel's counter files, parsed into cumulative counters named as LKP names them
//! (`monitors.md` §1–2). Every function takes the file's text and returns `(name, value)`
//! pairs; the caller takes the difference of two readings. Only counters that grow go here
//! (gauges such as `nr_*` and `procs_running` are left out: a difference of gauges means
//! nothing); memory gauges are read by [`meminfo`] and kept as the later reading.

/// `/proc/vmstat`: every event counter (`pgfault`, `thp_fault_alloc`, …) as
/// `proc-vmstat.<name>`; the `nr_*` gauges are left out.
pub fn vmstat(text: &str) -> Vec<(String, f64)> {
    text.lines()
        .filter_map(|l| {
            let (name, value) = l.split_once(' ')?;
            if name.starts_with("nr_") {
                return None;
            }
            Some((format!("proc-vmstat.{name}"), value.trim().parse().ok()?))
        })
        .collect()
}

/// The states of `/proc/stat`'s `cpu` line recorded, in its order (guest time is inside user,
/// so the two guest fields are left out).
pub const CPU_STATES: &[&str] = crate::proc_stat::CPU_STATES.split_at(8).0;

/// The machine's CPU time by state from the `cpu` line of `/proc/stat`, in USER_HZ ticks,
/// as `proc-stat.ticks.<state>`, and the `ctxt` and `intr` totals as `proc-stat.ctxt` and
/// `proc-stat.intr` (`crate::proc_stat` reads the file).
pub fn stat(text: &str) -> Vec<(String, f64)> {
    let s = crate::proc_stat::ProcStat::parse(text);
    let mut out: Vec<(String, f64)> = CPU_STATES
        .iter()
        .zip(&s.cpu)
        .map(|(state, v)| (format!("proc-stat.ticks.{state}"), *v as f64))
        .collect();
    for (name, v) in [("proc-stat.ctxt", s.ctxt), ("proc-stat.intr", s.intr)] {
        out.extend(v.map(|v| (name.to_string(), v as f64)));
    }
    out
}

/// `/proc/interrupts`, each row summed over the CPUs: named rows as
/// `interrupts.LOC:Local_timer_interrupts`, numbered ones as
/// `interrupts.<n>:<chip>.<hwirq>.<handlers>` (LKP's naming without the per-CPU split).
pub fn interrupts(text: &str) -> Vec<(String, f64)> {
    let mut lines = text.lines();
    let cpus = lines
        .next()
        .map(|h| h.split_whitespace().count())
        .unwrap_or(0);
    let mut out = Vec::new();
    for line in lines {
        let Some((id, rest)) = line.split_once(':') else {
            continue;
        };
        let id = id.trim();
        let mut fields = rest.split_whitespace().peekable();
        let mut sum = 0.0;
        let mut counted = 0;
        while counted < cpus {
            match fields.peek().and_then(|v| v.parse::<f64>().ok()) {
                Some(v) => {
                    sum += v;
                    counted += 1;
                    fields.next();
                }
                None => break,
            }
        }
        if counted == 0 {
            continue;
        }
        let words: Vec<&str> = fields.collect();
        let name = if id.bytes().all(|b| b.is_ascii_digit()) {
            format!("{id}:{}", words.join("."))
        } else if words.is_empty() {
            id.to_string()
        } else {
            format!("{id}:{}", words.join("_"))
        };
        out.push((format!("interrupts.{name}"), sum));
    }
    out
}

/// `/proc/softirqs`, each kind summed over the CPUs, as `softirqs.<KIND>`.
pub fn softirqs(text: &str) -> Vec<(String, f64)> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let (kind, rest) = l.split_once(':')?;
            let sum: f64 = rest
                .split_whitespace()
                .filter_map(|v| v.parse::<f64>().ok())
                .sum();
            Some((format!("softirqs.{}", kind.trim()), sum))
        })
        .collect()
}

/// `/proc/schedstat` (versions 15 to 17): per CPU, the time tasks waited on a run queue and
/// the time slices run, summed over the CPUs, as `schedstat.run_delay` (ns) and
/// `schedstat.timeslices`, plus `schedstat.running` (ns on a CPU). None for another version.
pub fn schedstat(text: &str) -> Option<Vec<(String, f64)>> {
    let version: u32 = text
        .lines()
        .find_map(|l| l.strip_prefix("version "))?
        .trim()
        .parse()
        .ok()?;
    if !(15..=17).contains(&version) {
        return None;
    }
    let (mut run, mut wait, mut slices) = (0.0, 0.0, 0.0);
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let Some(cpu) = f.next() else { continue };
        if !cpu.starts_with("cpu") {
            continue;
        }
        let v: Vec<f64> = f.filter_map(|x| x.parse().ok()).collect();
        if v.len() >= 9 {
            run += v[6];
            wait += v[7];
            slices += v[8];
        }
    }
    Some(vec![
        ("schedstat.running".into(), run),
        ("schedstat.run_delay".into(), wait),
        ("schedstat.timeslices".into(), slices),
    ])
}

/// A cgroup's `cpu.stat` (v1: `throttled_time` in ns; v2: `throttled_usec`): throttled
/// periods as `cgroup.cpu.nr_throttled`, throttled time in ns as `cgroup.cpu.throttled_time`.
pub fn cgroup_cpu_stat(text: &str) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(' ') else {
            continue;
        };
        let Ok(v) = v.trim().parse::<f64>() else {
            continue;
        };
        match k {
            "nr_periods" => out.push(("cgroup.cpu.nr_periods".into(), v)),
            "nr_throttled" => out.push(("cgroup.cpu.nr_throttled".into(), v)),
            "throttled_time" => out.push(("cgroup.cpu.throttled_time".into(), v)),
            "throttled_usec" => out.push(("cgroup.cpu.throttled_time".into(), v * 1000.0)),
            _ => {}
        }
    }
    out
}

/// The memory gauges of `/proc/meminfo` worth a look under a verdict, in KiB, as
/// `meminfo.<Field>`.
pub fn meminfo(text: &str) -> Vec<(String, f64)> {
    const KEPT: [&str; 6] = [
        "MemFree",
        "MemAvailable",
        "Cached",
        "AnonPages",
        "AnonHugePages",
        "Slab",
    ];
    text.lines()
        .filter_map(|l| {
            let (k, rest) = l.split_once(':')?;
            if !KEPT.contains(&k) {
                return None;
            }
            let v: f64 = rest.split_whitespace().next()?.parse().ok()?;
            Some((format!("meminfo.{k}"), v))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(v: &[(String, f64)], k: &str) -> Option<f64> {
        v.iter().find(|(n, _)| n == k).map(|(_, x)| *x)
    }

    // Samples in the kernel's own layout (this VM's 6.1 kernel; schedstat from
    // Documentation/scheduler/sched-stats.rst's version 15).
    const VMSTAT: &str = "nr_free_pages 5637193\nnr_zone_inactive_anon 1212\n\
                          pgpgin 4212672\npgfault 1398823411\npgmajfault 3421\n\
                          thp_fault_alloc 12\n";
    const STAT: &str = "cpu  2266497 135710 586354 5721469 24244 0 5770 4082 0 0\n\
                        cpu0 1099390 63583 283733 2914507 7403 0 434 2054 0 0\n\
                        intr 17874400 0 0 0 0 0 1\nctxt 38398186\nbtime 1764800000\n\
                        processes 912345\nprocs_running 3\n";
    const INTERRUPTS: &str = "           CPU0       CPU1       \n\
  24:          1          0  IO-APIC   5-edge      ACPI:Ged\n\
  29:      12165       8738   PCI-MSI 81920-edge      virtio2-req.0\n\
 NMI:          0          0   Non-maskable interrupts\n\
 LOC:    4145572    4012345   Local timer interrupts\n\
 ERR:          0\n\
 MIS:          0\n";
    const SOFTIRQS: &str = "                    CPU0       CPU1       \n\
          HI:          0          0\n\
       TIMER:     792512     814938\n\
      NET_RX:         10         20\n";
    const SCHEDSTAT: &str = "version 15\ntimestamp 4295892062\n\
cpu0 0 0 0 0 0 0 2044345212 1131402 1002\n\
domain0 3 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n\
cpu1 0 0 0 0 0 0 1000000000 2000000 500\n";

    #[test]
    fn vmstat_keeps_events_and_drops_gauges() {
        let v = vmstat(VMSTAT);
        assert_eq!(get(&v, "proc-vmstat.pgfault"), Some(1398823411.0));
        assert_eq!(get(&v, "proc-vmstat.thp_fault_alloc"), Some(12.0));
        assert!(get(&v, "proc-vmstat.nr_free_pages").is_none());
        assert_eq!(v.len(), 4);
    }

    #[test]
    fn stat_reads_ticks_by_state_and_totals() {
        let v = stat(STAT);
        assert_eq!(get(&v, "proc-stat.ticks.user"), Some(2266497.0));
        assert_eq!(get(&v, "proc-stat.ticks.steal"), Some(4082.0));
        assert_eq!(get(&v, "proc-stat.ctxt"), Some(38398186.0));
        assert_eq!(get(&v, "proc-stat.intr"), Some(17874400.0));
        assert!(get(&v, "proc-stat.procs_running").is_none());
    }

    #[test]
    fn interrupts_are_summed_over_cpus_and_named_as_lkp() {
        let v = interrupts(INTERRUPTS);
        assert_eq!(
            get(&v, "interrupts.LOC:Local_timer_interrupts"),
            Some(8157917.0)
        );
        assert_eq!(
            get(&v, "interrupts.29:PCI-MSI.81920-edge.virtio2-req.0"),
            Some(20903.0)
        );
        // ERR and MIS have one column only.
        assert_eq!(get(&v, "interrupts.ERR"), Some(0.0));
        assert_eq!(v.len(), 6);
    }

    #[test]
    fn softirqs_are_summed_per_kind() {
        let v = softirqs(SOFTIRQS);
        assert_eq!(get(&v, "softirqs.TIMER"), Some(1607450.0));
        assert_eq!(get(&v, "softirqs.NET_RX"), Some(30.0));
    }

    #[test]
    fn schedstat_sums_run_delay_and_slices_and_refuses_unknown_versions() {
        let v = schedstat(SCHEDSTAT).unwrap();
        assert_eq!(get(&v, "schedstat.run_delay"), Some(3131402.0));
        assert_eq!(get(&v, "schedstat.timeslices"), Some(1502.0));
        assert!(schedstat("version 14\ncpu0 1 2 3\n").is_none());
        assert!(schedstat("").is_none());
    }

    #[test]
    fn cgroup_cpu_stat_reads_v1_and_v2() {
        let v1 = cgroup_cpu_stat("nr_periods 10\nnr_throttled 4\nthrottled_time 123\n");
        assert_eq!(get(&v1, "cgroup.cpu.throttled_time"), Some(123.0));
        let v2 = cgroup_cpu_stat("usage_usec 5\nnr_throttled 2\nthrottled_usec 7\n");
        assert_eq!(get(&v2, "cgroup.cpu.throttled_time"), Some(7000.0));
        assert_eq!(get(&v2, "cgroup.cpu.nr_throttled"), Some(2.0));
    }

    #[test]
    fn meminfo_keeps_the_listed_gauges() {
        let v = meminfo("MemTotal: 100 kB\nMemFree:  42 kB\nAnonHugePages: 2048 kB\n");
        assert_eq!(get(&v, "meminfo.MemFree"), Some(42.0));
        assert_eq!(get(&v, "meminfo.AnonHugePages"), Some(2048.0));
        assert!(get(&v, "meminfo.MemTotal").is_none());
    }

    #[test]
    fn the_running_kernels_files_parse() {
        // Whatever this kernel exposes parses into something (no file is all garbage).
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        assert!(!vmstat(&read("/proc/vmstat")).is_empty());
        assert!(get(&stat(&read("/proc/stat")), "proc-stat.ctxt").is_some());
        assert!(!softirqs(&read("/proc/softirqs")).is_empty());
    }
}
