//! `/proc/stat`, read here for every part of patchbench: the machine's CPU time by state (the
//! aggregate `cpu` line), how many CPUs it lists, the context switches and interrupts since
//! boot (`ctxt`, `intr`'s total) and the boot time (`btime`). The monitors, the noise watch,
//! the counter harness's idle share and the lock holder's start time all use this reader.

/// The fields of the `cpu` line, in the kernel's order, in USER_HZ ticks (guest time is also
/// counted inside user and nice).
pub const CPU_STATES: [&str; 10] = [
    "user",
    "nice",
    "system",
    "idle",
    "iowait",
    "irq",
    "softirq",
    "steal",
    "guest",
    "guest_nice",
];

/// One reading of `/proc/stat`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcStat {
    /// The aggregate `cpu` line's fields, in [`CPU_STATES`] order (as many as the kernel
    /// gives; empty when the line is missing).
    pub cpu: Vec<u64>,
    /// The `cpuN` lines: the CPUs online.
    pub cpus: usize,
    /// Context switches since boot.
    pub ctxt: Option<u64>,
    /// Interrupts since boot (the first number of the `intr` line).
    pub intr: Option<u64>,
    /// The boot time, in seconds since the epoch.
    pub btime: Option<i64>,
}

impl ProcStat {
    /// Parses the file's text; what it cannot read is left empty (a field that is no number
    /// counts as 0 in the `cpu` line, whose positions matter).
    pub fn parse(text: &str) -> ProcStat {
        let mut out = ProcStat::default();
        for line in text.lines() {
            let mut f = line.split_whitespace();
            let Some(key) = f.next() else {
                continue;
            };
            let first = |f: &mut std::str::SplitWhitespace| f.next().and_then(|v| v.parse().ok());
            match key {
                "cpu" => out.cpu = f.map(|v| v.parse().unwrap_or(0)).collect(),
                "ctxt" => out.ctxt = first(&mut f),
                "intr" => out.intr = first(&mut f),
                "btime" => out.btime = f.next().and_then(|v| v.parse().ok()),
                k if k.len() > 3
                    && k.starts_with("cpu")
                    && k[3..].bytes().all(|b| b.is_ascii_digit()) =>
                {
                    out.cpus += 1
                }
                _ => {}
            }
        }
        out
    }

    /// Reads the running system's `/proc/stat` (None when it cannot be read).
    pub fn read() -> Option<ProcStat> {
        std::fs::read_to_string("/proc/stat")
            .ok()
            .map(|t| ProcStat::parse(&t))
    }

    /// A state's ticks from the `cpu` line (0 when the kernel does not give it).
    pub fn ticks(&self, state: usize) -> u64 {
        self.cpu.get(state).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_proc_stat_parses() {
        let text = "cpu  4705 150 1120 16250 520 0 30 7 3 0\n\
                    cpu0 2300 70 560 8100 260 0 20 4 2 0\n\
                    cpu1 2405 80 560 8150 260 0 10 3 1 0\n\
                    intr 114930548 113199788 3 0 0 0\n\
                    ctxt 1990473\n\
                    btime 1062191376\n\
                    processes 2915\n\
                    procs_running 1\n";
        let s = ProcStat::parse(text);
        assert_eq!(s.cpu, vec![4705, 150, 1120, 16250, 520, 0, 30, 7, 3, 0]);
        assert_eq!(s.cpus, 2);
        assert_eq!(s.ctxt, Some(1_990_473));
        assert_eq!(s.intr, Some(114_930_548));
        assert_eq!(s.btime, Some(1_062_191_376));
        assert_eq!(
            s.ticks(CPU_STATES.iter().position(|s| *s == "steal").unwrap()),
            7
        );
        assert_eq!(s.ticks(12), 0);
        assert_eq!(ProcStat::parse("garbage"), ProcStat::default());
    }

    #[test]
    fn this_machines_proc_stat_parses() {
        let s = ProcStat::read().expect("/proc/stat");
        assert!(s.cpu.len() >= 8, "{s:?}");
        assert!(
            s.cpus >= 1 && s.ctxt.is_some() && s.btime.is_some(),
            "{s:?}"
        );
    }
}
