//! The monitors of a run as comparable metrics: one place that says what each monitor row is
//! called, in which unit, and which rows are monitor rows (the second table of a comparison,
//! "what changed with it", `crate::compare`) rather than scores.
//!
//! From each measured unit's [`Sample`] (`crate::monitor`):
//! - `time.user_time`, `time.system_time`, `time.elapsed_time` (s) and
//!   `time.percent_of_cpu_this_job_got` (%), LKP's names for GNU time's figures, and the
//!   workload's faults and context switches (`time.minor_page_faults`, …);
//! - `vmstat.cpu.{us,sy,id,wa,st}`: the machine's CPU time by state in % of all CPUs' time
//!   (us = user + nice, sy = system + irq + softirq, as vmstat(8) adds them);
//!   `vmstat.system.{cs,in}`: context switches and interrupts per second;
//! - every `proc-vmstat.*` event, `interrupts.*` and `softirqs.*` row as its difference over
//!   the windows; `schedstat.run_delay` (ms summed over CPUs) and `schedstat.timeslices`;
//!   the cgroup's `cgroup.cpu.nr_throttled` and `cgroup.cpu.throttled_time` (ms);
//!   `meminfo.*` gauges (KiB) at the end;
//! - the workload's own perf events, `perf-stat.{task-clock,context-switches,cpu-migrations,
//!   page-faults}` and where the kernel has a PMU `perf-stat.{cycles,instructions,
//!   cache-misses,branch-misses,ipc}` (task-clock in ms); counted user-space only
//!   (`crate::perf_scope`), the rows of events counted in part are named with `:u`
//!   (`perf-stat.page-faults:u`, `perf-stat.ipc:u`);
//! - with `--profile`, `perf-profile.{self,children}.<event>.<symbol>` (% of the samples, the
//!   mean over the passes);
//! - counters that grow with the work again per operation of the unit, as `<name>.per-op`
//!   (a faster kernel does more operations, so more faults in total).
//!
//! The score per CPU-second of the workload's processes ([`per_cpu_second`]) is a score row,
//! not a monitor row: it is judged with the scores.

use super::{Direction, Metric};
use crate::monitor::Sample;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One measured unit's monitors: which unit (the params its score rows carry), its title,
/// how many operations it did (None where the count is not a number of operations), and
/// what the monitors saw.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Unit {
    #[serde(default)]
    pub params: BTreeMap<String, String>,
    #[serde(default)]
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops: Option<f64>,
    pub sample: Sample,
}

impl Unit {
    /// A unit with `params` as (name, value) pairs, as `Metric::new` takes them.
    pub fn new(params: &[(&str, String)], title: String, ops: Option<f64>, sample: Sample) -> Unit {
        Unit {
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            title,
            ops,
            sample,
        }
    }

    /// The params as `Metric::new` takes them.
    fn param_pairs(&self) -> Vec<(&str, String)> {
        self.params
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect()
    }
}

/// Name prefixes of monitor rows (everything else is a score row).
pub const MONITOR_PREFIXES: &[&str] = &[
    "time.",
    "vmstat.",
    "proc-vmstat.",
    "interrupts.",
    "softirqs.",
    "schedstat.",
    "cgroup.",
    "meminfo.",
    "perf-stat.",
    "perf-profile.",
];

/// Whether the metric called `name` is a monitor row.
pub fn is_monitor(name: &str) -> bool {
    MONITOR_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Whether the monitor row is a share or a percentage, whose change is shown in points (as
/// LKP shows `perf-profile.*` and `%` keys).
pub fn is_share(name: &str, unit: &str) -> bool {
    unit == "%" || name.starts_with("perf-profile.")
}

/// The monitor rows of every unit.
pub fn metrics(units: &[Unit]) -> Vec<Metric> {
    units.iter().flat_map(unit_metrics).collect()
}

fn unit_metrics(u: &Unit) -> Vec<Metric> {
    let s = &u.sample;
    let params = u.param_pairs();
    let mut out = Vec::new();
    let mut put = |name: &str, unit: &str, value: f64| {
        if value.is_finite() && value >= 0.0 {
            let title = if u.title.is_empty() {
                name.to_string()
            } else {
                format!("{name} ({})", u.title)
            };
            out.push(Metric::new(
                name,
                &params,
                title,
                unit,
                Direction::LowerIsBetter,
                value,
                Vec::new(),
            ));
        }
    };
    let per_op = |v: f64| u.ops.filter(|o| *o > 0.0).map(|o| v / o);
    put("time.user_time", "s", s.user_s);
    put("time.system_time", "s", s.system_s);
    put("time.elapsed_time", "s", s.wall_s);
    if s.wall_s > 0.0 {
        put(
            "time.percent_of_cpu_this_job_got",
            "%",
            100.0 * s.cpu_s() / s.wall_s,
        );
    }
    let c = |k: &str| s.counters.get(k).copied().unwrap_or(0.0);
    let total: f64 = crate::monitor::procfs::CPU_STATES
        .iter()
        .map(|t| c(&format!("proc-stat.ticks.{t}")))
        .sum();
    if total > 0.0 {
        let share = |ks: &[&str]| {
            100.0
                * ks.iter()
                    .map(|t| c(&format!("proc-stat.ticks.{t}")))
                    .sum::<f64>()
                / total
        };
        put("vmstat.cpu.us", "%", share(&["user", "nice"]));
        put("vmstat.cpu.sy", "%", share(&["system", "irq", "softirq"]));
        put("vmstat.cpu.id", "%", share(&["idle"]));
        put("vmstat.cpu.wa", "%", share(&["iowait"]));
        put("vmstat.cpu.st", "%", share(&["steal"]));
    }
    for (k, v) in &s.counters {
        match k.as_str() {
            k if k.starts_with("proc-stat.ticks.") || k == "schedstat.running" => {}
            "proc-stat.ctxt" | "proc-stat.intr" => {
                let name = if k == "proc-stat.ctxt" {
                    "vmstat.system.cs"
                } else {
                    "vmstat.system.in"
                };
                if s.wall_s > 0.0 {
                    put(name, "/s", v / s.wall_s);
                }
                if let Some(p) = per_op(*v) {
                    put(&format!("{name}.per-op"), "per op", p);
                }
            }
            "schedstat.run_delay" | "cgroup.cpu.throttled_time" => put(k, "ms", v / 1e6),
            "perf-stat.task-clock" => {
                put(k, "ms", v / 1e6);
                if let Some(p) = per_op(*v) {
                    put(&format!("{k}.per-op"), "ns per op", p);
                }
            }
            "perf-stat.ipc" | "perf-stat.ipc:u" => put(k, "per cycle", *v),
            "schedstat.timeslices" | "cgroup.cpu.nr_throttled" | "cgroup.cpu.nr_periods" => {
                put(k, "count", *v)
            }
            _ => {
                put(k, "count", *v);
                if let Some(p) = per_op(*v) {
                    put(&format!("{k}.per-op"), "per op", p);
                }
            }
        }
    }
    for (k, v) in &s.gauges {
        put(k, "KiB", *v);
    }
    // A profile's shares: the mean over the windows that had one (a symbol below perf
    // report's limit in a window counts as 0 there).
    if s.profile_windows > 0 {
        for (k, v) in &s.profile {
            put(k, "%", v / f64::from(s.profile_windows));
        }
    }
    out
}

/// The score per CPU-second of the workload's processes: `ops` over the unit's CPU time, as
/// the score row `name` with the unit's params (None without CPU time or operations).
pub fn per_cpu_second(name: &str, u: &Unit, title: &str, unit: &str) -> Option<Metric> {
    let ops = u.ops?;
    let cpu = u.sample.cpu_s();
    (ops > 0.0 && cpu > 0.0).then(|| {
        Metric::new(
            name,
            &u.param_pairs(),
            format!("{title} per CPU-second"),
            format!("{unit} per CPU-s"),
            Direction::HigherIsBetter,
            ops / cpu,
            Vec::new(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit() -> Unit {
        let counters: BTreeMap<String, f64> = [
            ("proc-stat.ticks.user", 60.0),
            ("proc-stat.ticks.system", 30.0),
            ("proc-stat.ticks.idle", 10.0),
            ("proc-stat.ctxt", 2000.0),
            ("proc-vmstat.pgfault", 500.0),
            ("cgroup.cpu.throttled_time", 3e6),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        Unit {
            params: [("test".to_string(), "syscall".to_string())].into(),
            title: "System Call Overhead".into(),
            ops: Some(1000.0),
            sample: Sample {
                wall_s: 2.0,
                user_s: 0.5,
                system_s: 1.0,
                counters,
                ..Sample::default()
            },
        }
    }

    fn value(ms: &[Metric], name: &str) -> Option<f64> {
        ms.iter().find(|m| m.name == name).map(|m| m.value)
    }

    #[test]
    fn counters_become_shares_rates_and_per_op_rows() {
        let ms = metrics(&[unit()]);
        assert_eq!(value(&ms, "vmstat.cpu.us"), Some(60.0));
        assert_eq!(value(&ms, "vmstat.cpu.sy"), Some(30.0));
        assert_eq!(value(&ms, "vmstat.system.cs"), Some(1000.0));
        assert_eq!(value(&ms, "vmstat.system.cs.per-op"), Some(2.0));
        assert_eq!(value(&ms, "proc-vmstat.pgfault"), Some(500.0));
        assert_eq!(value(&ms, "proc-vmstat.pgfault.per-op"), Some(0.5));
        assert_eq!(value(&ms, "cgroup.cpu.throttled_time"), Some(3.0));
        assert_eq!(value(&ms, "time.percent_of_cpu_this_job_got"), Some(75.0));
        assert!(ms.iter().all(|m| is_monitor(&m.name)));
        assert!(ms.iter().all(|m| m.params["test"] == "syscall"));
    }

    #[test]
    fn the_score_per_cpu_second_is_a_score_row() {
        let m = per_cpu_second("unixbench.score-per-cpu-s", &unit(), "System Call", "lps").unwrap();
        assert_eq!(m.value, 1000.0 / 1.5);
        assert!(!is_monitor(&m.name));
        assert_eq!(m.direction, Direction::HigherIsBetter);
        let mut idle = unit();
        idle.sample.user_s = 0.0;
        idle.sample.system_s = 0.0;
        assert!(per_cpu_second("x", &idle, "x", "x").is_none());
    }
}
