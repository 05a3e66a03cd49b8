//! Which monitor rows have enough events to judge, and how finely each is measured: the one
//! table of floors, and the resolution of every kind of monitor row.
//!
//! A floor is the size a row must reach in some run (the largest run value of either side)
//! to be judged; below it the row is listed as "too few events here" and gets no estimate, so
//! it neither takes part in the table correction nor can be flagged. LKP's thresholds are the
//! start (comparison.md §3: `interrupts.*` need 100; `perf-profile.*` shares below 1 point are
//! not judged); ours extend them to every counter family. A per-operation row is judged only
//! when the count it is derived from is.
//!
//! The resolution is a row's smallest step: 1 for an integer count; for a per-operation row,
//! one event over the operations; for `vmstat.cpu.*`, one USER_HZ tick (1/100 s) over the
//! window's CPU time, `100 × 0.01 / (wall_s × cpus)` %. The window (`time.elapsed_time` of the
//! same unit) and the machine's online CPUs come from the run; the CPUs the ticks were counted
//! on can be fewer than the record says (a guest), so where either is missing the resolution
//! is taken as one tick of one CPU-second, 1 %, the conservative end.

use crate::record::monitors::is_monitor;

/// A family's floor: rows whose name starts with `prefix` (and, when given, whose unit is
/// `unit`) need `min` in some run.
#[derive(Debug, Clone, Copy)]
pub struct Floor {
    pub prefix: &'static str,
    pub unit: Option<&'static str>,
    pub min: f64,
}

/// The floor of most count rows (LKP's for interrupts): 100 events in some run.
pub const COUNT_FLOOR: f64 = 100.0;

/// The floors, first match wins (per-op rows follow their count row, see [`too_few`]).
pub const FLOORS: &[Floor] = &[
    // LKP: interrupts.* below 100 are not judged.
    Floor {
        prefix: "interrupts.",
        unit: None,
        min: COUNT_FLOOR,
    },
    Floor {
        prefix: "softirqs.",
        unit: None,
        min: COUNT_FLOOR,
    },
    Floor {
        prefix: "proc-vmstat.",
        unit: None,
        min: COUNT_FLOOR,
    },
    // A quota's throttled periods: one per 100 ms period at most, so a few seconds give tens.
    Floor {
        prefix: "cgroup.cpu.nr_",
        unit: None,
        min: 10.0,
    },
    Floor {
        prefix: "cgroup.cpu.throttled_time",
        unit: None,
        min: 1.0,
    },
    Floor {
        prefix: "schedstat.run_delay",
        unit: None,
        min: 1.0,
    },
    Floor {
        prefix: "schedstat.",
        unit: Some("count"),
        min: COUNT_FLOOR,
    },
    // LKP: perf-profile shares below 1 percentage point are not judged.
    Floor {
        prefix: "perf-profile.",
        unit: None,
        min: 1.0,
    },
    Floor {
        prefix: "vmstat.cpu.",
        unit: None,
        min: 1.0,
    },
    // time.minor_page_faults, time.*_context_switches, …
    Floor {
        prefix: "time.",
        unit: Some("count"),
        min: COUNT_FLOOR,
    },
    // Any other count (perf-stat events, …).
    Floor {
        prefix: "",
        unit: Some("count"),
        min: COUNT_FLOOR,
    },
];

/// The floor of a (non-per-op) row, if its family has one.
pub fn floor_of(name: &str, unit: &str) -> Option<&'static Floor> {
    FLOORS
        .iter()
        .find(|f| name.starts_with(f.prefix) && f.unit.is_none_or(|u| u == unit))
}

/// The count row a per-operation row is derived from (`x.per-op` → `x`).
pub fn count_of(name: &str) -> Option<&str> {
    name.strip_suffix(".per-op")
}

/// Why a row with this largest run value is not judged: None when it reaches its floor or
/// its family has none.
pub fn too_few(name: &str, unit: &str, largest: f64) -> Option<String> {
    let f = floor_of(name, unit)?;
    (largest < f.min).then(|| {
        format!(
            "too few events here: at most {} {unit} in any run, below the floor of {} for \
             {}* rows",
            shown(largest),
            f.min,
            f.prefix
        )
    })
}

/// A run's largest value as the reason prints it: a whole number as such, else 3 significant
/// digits (the report's own formats are above this module).
fn shown(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// The reason of a per-operation row whose count row is below its floor.
pub fn too_few_per_op(count_reason: &str) -> String {
    format!("{count_reason} (its count row)")
}

/// What is known about one run for the resolution of its rows.
#[derive(Debug, Clone, Copy, Default)]
pub struct Window {
    /// The unit's wall time (`time.elapsed_time`), if recorded.
    pub wall_s: Option<f64>,
    /// The machine's online CPUs (0: unknown).
    pub cpus: u32,
}

/// One USER_HZ tick in seconds.
const TICK_S: f64 = 0.01;

/// The resolution of one run's value of a monitor row: 1 for a count, one tick of the
/// window for `vmstat.cpu.*`, 0 (unknown, none applied) for the rest. Per-op rows are
/// handled by [`per_op_resolution`].
pub fn resolution(name: &str, unit: &str, w: Window) -> f64 {
    if !is_monitor(name) {
        return 0.0;
    }
    if needs_window(name) {
        return match (w.wall_s.filter(|s| *s > 0.0), w.cpus) {
            (Some(wall), cpus) if cpus > 0 => 100.0 * TICK_S / (wall * f64::from(cpus)),
            _ => 1.0,
        };
    }
    if unit == "count" {
        1.0
    } else {
        0.0
    }
}

/// Whether a row's resolution depends on its run's [`Window`] (the CPU shares, in ticks of
/// the window); every other row's does not, so its window need not be looked up.
pub fn needs_window(name: &str) -> bool {
    name.starts_with("vmstat.cpu.")
}

/// The resolution of a per-operation row: its count row's, times per-op over count (one event
/// over the operations).
pub fn per_op_resolution(count_res: f64, per_op_mean: f64, count_mean: f64) -> f64 {
    if count_mean > 0.0 && per_op_mean.is_finite() {
        count_res * per_op_mean / count_mean
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floors_follow_lkp_and_cover_every_counter_family() {
        assert!(too_few("interrupts.LOC", "count", 99.0).is_some());
        assert!(too_few("interrupts.LOC", "count", 100.0).is_none());
        assert!(too_few("perf-profile.self.cycles.foo", "%", 0.9).is_some());
        assert!(too_few("perf-profile.self.cycles.foo", "%", 1.5).is_none());
        assert!(too_few("vmstat.cpu.st", "%", 0.5).is_some());
        assert!(too_few("proc-vmstat.thp_fault_alloc", "count", 40.0).is_some());
        assert!(too_few("time.minor_page_faults", "count", 5000.0).is_none());
        assert!(too_few("cgroup.cpu.throttled_time", "ms", 80.0).is_none());
        // Rates and times have no floor.
        assert!(too_few("vmstat.system.cs", "/s", 3.0).is_none());
        assert!(too_few("time.user_time", "s", 0.01).is_none());
        let r = too_few("softirqs.TIMER", "count", 12.0).unwrap();
        assert!(
            r.contains("too few events here") && r.contains("100"),
            "{r}"
        );
    }

    #[test]
    fn resolutions() {
        let w = Window {
            wall_s: Some(10.0),
            cpus: 2,
        };
        assert_eq!(resolution("proc-vmstat.pgfault", "count", w), 1.0);
        assert!((resolution("vmstat.cpu.us", "%", w) - 0.05).abs() < 1e-12);
        assert_eq!(resolution("vmstat.cpu.us", "%", Window::default()), 1.0);
        assert_eq!(resolution("time.user_time", "s", w), 0.0);
        assert_eq!(per_op_resolution(1.0, 0.5, 500.0), 0.001);
    }
}
