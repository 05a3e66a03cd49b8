//! Profile shares a run left out. A profile keeps only the symbols above perf report's
//! 0.5 % limit (`crate::monitor::profile`), so a symbol that a change makes common or rare,
//! such as the huge-page fault path under THP `always`, is absent from one side's runs; a
//! row that only one side has gets no verdict. In a run that was profiled (one with profile
//! rows for that unit and event), an absent symbol's share counts as 0 %, as LKP's tables
//! count it. Runs without a profile of the unit stay as they are.

use super::Side;
use crate::record::{metric_key, Metric};
use std::collections::{BTreeMap, BTreeSet};

const PREFIX: &str = "perf-profile.";

/// The event a profile row was sampled on (`perf-profile.self.<event>.<symbol>`).
fn event(name: &str) -> Option<&str> {
    name.strip_prefix(PREFIX)?.split('.').nth(1)
}

/// A profiled unit: the row's params and event.
fn unit(m: &Metric) -> Option<String> {
    Some(format!("{}|{}", event(&m.name)?, metric_key("", &m.params)))
}

/// The two sides with a 0 % row added to every profiled run for each symbol another run of
/// either side names in the same unit; None when no run has profile rows.
pub fn fill(base: &Side, patched: &Side) -> Option<(Side, Side)> {
    // Every profile row named anywhere, by unit: one template each.
    let mut named: BTreeMap<String, BTreeMap<String, &Metric>> = BTreeMap::new();
    for (_, run) in base.runs.iter().chain(&patched.runs) {
        for m in run.metrics.iter().filter(|m| m.name.starts_with(PREFIX)) {
            if let Some(u) = unit(m) {
                named.entry(u).or_default().entry(m.key()).or_insert(m);
            }
        }
    }
    if named.is_empty() {
        return None;
    }
    let filled = |side: &Side| -> Side {
        let mut side = side.clone();
        for (_, run) in side.runs.iter_mut() {
            let have: BTreeSet<String> = run.metrics.iter().map(Metric::key).collect();
            let profiled: BTreeSet<String> = run.metrics.iter().filter_map(unit).collect();
            let mut zeros = Vec::new();
            for u in &profiled {
                for (key, template) in &named[u] {
                    if !have.contains(key) {
                        let mut zero = (*template).clone();
                        zero.value = 0.0;
                        zero.samples.clear();
                        zeros.push(zero);
                    }
                }
            }
            run.metrics.extend(zeros);
        }
        side
    };
    Some((filled(base), filled(patched)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Direction, Kind, RunRecord};

    fn share(name: &str, test: &str, v: f64) -> Metric {
        Metric::new(
            name,
            &[("test", test.to_string())],
            name.to_string(),
            "%",
            Direction::LowerIsBetter,
            v,
            Vec::new(),
        )
    }

    fn run(metrics: Vec<Metric>) -> (String, RunRecord) {
        let mut r = RunRecord::new(
            Kind::WillItScale,
            crate::sysinfo::SystemInfo::default(),
            &serde_json::json!({}),
        );
        r.metrics = metrics;
        ("r".into(), r)
    }

    #[test]
    fn an_absent_symbol_is_zero_only_in_runs_that_profiled_its_unit() {
        let huge = "perf-profile.children.cpu-clock.do_huge_pmd_anonymous_page";
        let clear = "perf-profile.self.cpu-clock.clear_page_erms";
        let base = Side::new("never", vec![run(vec![share(clear, "pf", 8.0)])]);
        let patched = Side::new(
            "always",
            vec![
                run(vec![share(clear, "pf", 40.0), share(huge, "pf", 42.0)]),
                // Profiled another unit only, and a run without a profile.
                run(vec![share(clear, "other", 1.0)]),
                run(vec![share("time.user_time", "pf", 1.0)]),
            ],
        );
        let (b, p) = fill(&base, &patched).unwrap();
        let zero = b.runs[0].1.metrics.iter().find(|m| m.name == huge).unwrap();
        assert_eq!(zero.value, 0.0);
        assert_eq!(zero.params["test"], "pf");
        assert_eq!(p.runs[0].1.metrics.len(), 2);
        assert!(!p.runs[1].1.metrics.iter().any(|m| m.name == huge));
        assert_eq!(p.runs[2].1.metrics.len(), 1);
        let none = Side::new("x", vec![run(vec![share("time.user_time", "pf", 1.0)])]);
        assert!(fill(&none, &none).is_none());
    }
}
