//! The report's note on the monitors that ran inside the timed window (`--perf-stat`,
//! `--profile`): which ran, in how many of the run's units, and what `--perf-stat` was measured
//! to cost each of its workloads (`crate::monitor::in_window_cost`). Nothing is printed for a
//! run of the defaults, whose monitors are all read outside the window.

use crate::monitor::in_window_cost::{self, MEASURED_ON};
use crate::monitor::{PERF_RECORD, PERF_STAT};
use crate::record::RunRecord;

/// The note's lines (each ending in a newline), or "" when nothing ran inside the window.
pub fn note(record: &RunRecord) -> String {
    let units: Vec<_> = record
        .monitors
        .iter()
        .map(|u| (u, u.sample.ran_in_window()))
        .filter(|(_, w)| !w.is_empty())
        .collect();
    if units.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n");
    let count = |name: &str| {
        units
            .iter()
            .filter(|(_, w)| w.iter().any(|x| x == name))
            .count()
    };
    let (stat, record_n) = (count(PERF_STAT), count(PERF_RECORD));
    if record_n > 0 {
        out.push_str(&format!(
            "Inside the timed window: perf record (--profile) sampled the machine in {record_n} \
             of {} units; their scores include its cost.\n",
            record.monitors.len()
        ));
    }
    if stat == 0 {
        return out;
    }
    out.push_str(&format!(
        "Inside the timed window: the perf-stat counters (--perf-stat) in {stat} of {} units; \
         the kernel worked for them at every fork, exit and context switch. Their measured cost \
         (score with them / without):\n",
        record.monitors.len()
    ));
    for (u, w) in &units {
        if !w.iter().any(|x| x == PERF_STAT) {
            continue;
        }
        let name = if u.title.is_empty() {
            u.params.get("test").cloned().unwrap_or_default()
        } else {
            u.title.clone()
        };
        let size = in_window_cost::size_of(&u.params);
        let shown = size.map_or(String::new(), |(k, n)| format!("{k} {n}"));
        let line = match in_window_cost::perf_stat(&u.params) {
            Some(c) => {
                let at = match size {
                    Some((_, n)) if n != c.size => format!(" (measured at {})", c.size),
                    _ => String::new(),
                };
                format!(
                    "  {name} [{shown}]: ×{:.3} ({:.3}-{:.3}, median of {} pairs){at}\n",
                    c.median, c.min, c.max, c.pairs
                )
            }
            None => format!("  {name} [{shown}]: not measured for this workload\n"),
        };
        out.push_str(&line);
    }
    out.push_str(&format!("  (measured on {MEASURED_ON})\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::Sample;
    use crate::record::monitors::Unit;

    fn record(in_window: Vec<String>, counters: &[(&str, f64)]) -> RunRecord {
        let mut r: RunRecord =
            serde_json::from_str(include_str!("../../tests/fixtures/patchbench-run.json"))
                .expect("the fixture is a run");
        let sample = Sample {
            in_window,
            counters: counters.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..Sample::default()
        };
        r.monitors = vec![Unit::new(
            &[("test", "context1".into()), ("copies", "1".into())],
            "Pipe-based Context Switching".into(),
            None,
            sample,
        )];
        r
    }

    #[test]
    fn the_defaults_print_nothing() {
        assert_eq!(
            note(&record(Vec::new(), &[("proc-vmstat.pgfault", 3.0)])),
            ""
        );
    }

    #[test]
    fn perf_stat_says_so_with_its_cost_or_that_it_was_not_measured() {
        let n = note(&record(vec![PERF_STAT.into()], &[]));
        assert!(
            n.contains("perf-stat counters (--perf-stat) in 1 of 1 units"),
            "{n}"
        );
        assert!(n.contains("Pipe-based Context Switching [copies 1]"), "{n}");
        // An earlier build's record: its perf-stat rows ran inside the window.
        let old = note(&record(Vec::new(), &[("perf-stat.task-clock", 5.0)]));
        assert!(old.contains("perf-stat counters"), "{old}");
    }
}
