//! What differs between the two sides besides the kernel: every system-fingerprint field
//! (CPU model and count, memory, patchbench version and build, shell, libc, governor, the
//! filesystems of the directories used, …) and every configuration setting (durations,
//! passes, copies, profile, directories). Each difference becomes one warning line; the whole
//! table of attributes, side by side, is [`fingerprint`]. [`noise`] lists the noise-check
//! warnings each side's runs were measured with. Which differences and warnings mean
//! something (the kernel is expected to differ, BogoMIPS jitters, a directory a run never
//! wrote in says nothing) is [`super::meaning`]'s rule, asked here.

use super::meaning;
use super::Side;
use crate::perf_scope::Scope;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// `noise` holds measured activity, different on every run; its warnings are listed on their
/// own ([`noise`]).
const IGNORED_SYSTEM: &[&str] = &["noise"];

/// One attribute of the fingerprint, with what each side's runs had for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Attribute {
    /// `system.cpu_model`, `config.duration`, `kind`, …
    pub name: String,
    /// The base runs' values, joined by ` / ` (`(not recorded)`, `(unknown)` when empty).
    pub base: String,
    pub patched: String,
    /// The sides' values differ, under the attribute's rule ([`meaning::differs`]: a measured
    /// field such as BogoMIPS never does).
    pub differs: bool,
    /// A difference here is expected (the kernel) and not warned about.
    pub expected: bool,
}

/// Every attribute of either side, sorted by name, side by side.
pub fn fingerprint(base: &Side, patched: &Side) -> Vec<Attribute> {
    let b = attributes(base);
    let p = attributes(patched);
    let keys: BTreeSet<&String> = b.keys().chain(p.keys()).collect();
    let empty = BTreeSet::new();
    keys.into_iter()
        .map(|k| {
            let bv = b.get(k).unwrap_or(&empty);
            let pv = p.get(k).unwrap_or(&empty);
            Attribute {
                name: k.clone(),
                base: show(k, bv),
                patched: show(k, pv),
                differs: meaning::differs(k, bv, pv),
                expected: meaning::rule(k) == meaning::Rule::Expected,
            }
        })
        .collect()
}

/// One warning per attribute whose set of values differs between the sides and whose
/// difference warns ([`meaning::warns`]: not the kernel's). The values are quoted escaped and cut (`crate::safe_text::field`): a 100 KB host
/// name is a line of the warning, not the whole screen; the fingerprint keeps them whole.
pub fn differences(base: &Side, patched: &Side) -> Vec<String> {
    differences_in(&fingerprint(base, patched), base, patched)
}

/// [`differences`] from the sides' fingerprint, already made (`compare` makes it once).
pub fn differences_in(fingerprint: &[Attribute], base: &Side, patched: &Side) -> Vec<String> {
    use crate::safe_text::field;
    let overlap = overlap_warning(base, patched);
    fingerprint
        .iter()
        .filter(|a| a.differs && meaning::warns(&a.name))
        // A side without perf-stat rows is the in-window line's to say.
        .filter(|a| {
            a.name != PERF_STAT_SCOPE || (a.base != NOT_RECORDED && a.patched != NOT_RECORDED)
        })
        .map(|a| {
            let own: Option<OwnWarning> = match a.name.as_str() {
                PERF_STAT_SCOPE => Some(perf_stat_scope_warning),
                IN_WINDOW => Some(in_window_warning),
                _ => None,
            };
            if let Some(warning) = own {
                return warning(
                    &field(&base.name),
                    &field(&a.base),
                    &field(&patched.name),
                    &field(&a.patched),
                );
            }
            format!(
                "{} differs: {} {} vs {} {}",
                field(&a.name),
                field(&base.name),
                field(&a.base),
                field(&patched.name),
                field(&a.patched)
            )
        })
        .chain(overlap)
        .collect()
}

/// The settings of an `exec` run that say what was measured: runs whose tool, version or
/// command line differ measured different things, and `compare` does not judge them unless
/// told to ([`different_tools`]).
pub const TOOL_SETTINGS: &[&str] = &["config.tool", "config.version", "config.argv"];

/// When both sides hold `exec` runs and their [`TOOL_SETTINGS`] differ: what differs, one
/// clause per setting (values escaped and cut), for `compare`'s refusal.
pub fn different_tools(fingerprint: &[Attribute], base: &Side, patched: &Side) -> Option<String> {
    use crate::safe_text::field;
    let exec = |side: &Side| {
        side.runs
            .iter()
            .any(|(_, r)| r.kind == crate::record::Kind::Exec)
    };
    if !exec(base) || !exec(patched) {
        return None;
    }
    let clauses: Vec<String> = fingerprint
        .iter()
        .filter(|a| a.differs && TOOL_SETTINGS.contains(&a.name.as_str()))
        .map(|a| {
            format!(
                "{} differs: {} {} vs {} {}",
                a.name,
                field(&base.name),
                field(&a.base),
                field(&patched.name),
                field(&a.patched)
            )
        })
        .collect();
    (!clauses.is_empty()).then(|| clauses.join("; "))
}

/// The warning when a run of either side was measured beside another measurement on its
/// machine (`--allow-overlap`; the record's `system.extra.measured_beside`), naming the runs.
fn overlap_warning(base: &Side, patched: &Side) -> Option<String> {
    let key = crate::sysinfo::MEASURED_BESIDE;
    let runs: Vec<String> = [base, patched]
        .iter()
        .flat_map(|side| {
            side.runs
                .iter()
                .filter(|(_, r)| r.system.extra.contains_key(key))
                .map(|(id, _)| format!("{} {}", side.name, crate::safe_text::field(id)))
        })
        .collect();
    (!runs.is_empty()).then(|| {
        format!(
            "{} run(s) measured beside another measurement on their machine (--allow-overlap): \
             {}; their scores share the CPUs and caches with it",
            runs.len(),
            runs.join(", ")
        )
    })
}

/// The noise-check warnings one side's runs were measured with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideNoise {
    pub side: String,
    pub runs: usize,
    /// Runs that stored a noise check (older files and imports have none).
    pub checked: usize,
    /// Runs with at least one warning.
    pub warned: usize,
    /// Each noise source that warned, with the runs it warned in, in order of first sight.
    pub warnings: Vec<NoiseWarning>,
    /// The one-line warning `compare` prints, when a run warned.
    pub line: Option<String>,
}

/// One noise source that warned, and in which runs with what value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoiseWarning {
    /// What `patchbench check` calls it (`cpufreq governor`).
    pub source: String,
    pub runs: Vec<String>,
    /// The value measured in each of those runs.
    pub values: Vec<String>,
}

impl NoiseWarning {
    /// `source: value` when every run had the same value, else the source alone.
    fn summary(&self) -> String {
        match self.values.split_first() {
            Some((first, rest)) if rest.iter().all(|v| v == first) => {
                format!("{}: {first}", self.source)
            }
            _ => self.source.clone(),
        }
    }
}

/// What the noise checks stored with the side's runs warned about, grouped by source: the
/// warnings that apply to each run ([`meaning::noise_warnings`]).
pub fn noise(side: &Side) -> SideNoise {
    let mut warnings: Vec<NoiseWarning> = Vec::new();
    let (mut checked, mut warned) = (0, 0);
    for (id, run) in &side.runs {
        if run.system.noise.is_none() {
            continue;
        }
        checked += 1;
        let applying = meaning::noise_warnings(run);
        warned += usize::from(!applying.is_empty());
        for f in applying {
            match warnings.iter_mut().find(|x| x.source == f.source) {
                Some(w) => {
                    w.runs.push(id.clone());
                    w.values.push(f.value.clone());
                }
                None => warnings.push(NoiseWarning {
                    source: f.source.clone(),
                    runs: vec![id.clone()],
                    values: vec![f.value.clone()],
                }),
            }
        }
    }
    let runs = side.runs.len();
    let line = (warned > 0).then(|| {
        let listed: Vec<String> = warnings
            .iter()
            .map(|w| {
                let s = if w.runs.len() == 1 { "" } else { "s" };
                format!("{} (run{s} {})", w.summary(), w.runs.join(", "))
            })
            .collect();
        format!(
            "{}: {warned} of {runs} run{} ran with noise-check warnings: {} (each run's values: \
             --format json or html)",
            side.name,
            if runs == 1 { "" } else { "s" },
            listed.join("; ")
        )
    });
    SideNoise {
        side: side.name.clone(),
        runs,
        checked,
        warned,
        warnings,
        line,
    }
}

/// The values as the table shows them: memory in tenths of a GiB (compared in bytes, within
/// [`meaning`]'s tolerance), each value once.
fn show(name: &str, values: &BTreeSet<String>) -> String {
    if values.is_empty() {
        return NOT_RECORDED.to_string();
    }
    let shown: BTreeSet<String> = values
        .iter()
        .map(|v| match (name, v.parse::<f64>()) {
            (_, _) if v.is_empty() => "(unknown)".to_string(),
            ("system.memory_bytes", Ok(b)) => format!("{:.1} GiB", b / (1u64 << 30) as f64),
            _ => v.clone(),
        })
        .collect();
    shown.into_iter().collect::<Vec<_>>().join(" / ")
}

/// attribute name → the values the side's runs have for it.
fn attributes(side: &Side) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (_, run) in &side.runs {
        let mut add = |k: String, v: String| {
            out.entry(k).or_default().insert(v);
        };
        add("kind".to_string(), run.kind.to_string());
        add(IN_WINDOW.to_string(), in_window(run));
        for u in &run.monitors {
            match u.sample.perf_stat_scope() {
                Some(Scope::Full) => add(PERF_STAT_SCOPE.to_string(), "full".to_string()),
                Some(Scope::UserOnly) => add(PERF_STAT_SCOPE.to_string(), USER_ONLY.to_string()),
                None => {}
            }
        }
        if let Ok(serde_json::Value::Object(sys)) = serde_json::to_value(&run.system) {
            for (k, v) in sys {
                if IGNORED_SYSTEM.contains(&k.as_str()) || k == "extra" {
                    continue;
                }
                let text = match (k.as_str(), &v) {
                    ("memory_bytes" | "cpus", serde_json::Value::Number(n))
                        if n.as_u64() == Some(0) =>
                    {
                        String::new()
                    }
                    _ => plain(&v),
                };
                add(format!("system.{k}"), text);
            }
        }
        for (k, v) in &run.system.extra {
            add(format!("system.{k}"), v.clone());
        }
        for (k, v) in &run.config {
            add(format!("config.{k}"), plain(v));
        }
    }
    out
}

/// The line of an attribute whose difference has a warning of its own, from the sides'
/// names and values (base, its value, patched, its value).
type OwnWarning = fn(&str, &str, &str, &str) -> String;

/// The attribute that says which monitors ran inside the timed window.
const IN_WINDOW: &str = "monitors.in_window";

/// The attribute that says how the perf-stat counters counted (`full`, or [`USER_ONLY`]), of
/// runs that have perf-stat rows.
const PERF_STAT_SCOPE: &str = "monitors.perf_stat";
const USER_ONLY: &str = "user space only (:u)";

/// How the fingerprint shows an attribute a side's runs do not have.
const NOT_RECORDED: &str = "(not recorded)";

/// What of ours ran inside a run's timed windows: `nothing` (the defaults, `--no-monitors`, an
/// import), else the monitors (`perf-stat`, `perf-record`), with a word when the record is
/// an earlier build's, which always counted perf-stat inside the window.
fn in_window(run: &crate::record::RunRecord) -> String {
    let mut names: BTreeSet<String> = BTreeSet::new();
    let mut inferred = false;
    for u in &run.monitors {
        let ran = u.sample.ran_in_window();
        inferred |= u.sample.in_window.is_empty() && !ran.is_empty();
        names.extend(ran);
    }
    if names.is_empty() {
        return "nothing".to_string();
    }
    let list = names.into_iter().collect::<Vec<_>>().join("+");
    if inferred {
        format!("{list} (an earlier build: perf-stat always inside)")
    } else {
        list
    }
}

/// The warning when the sides' perf-stat counters counted differently (one side as a user who
/// may count only user space): their rows are kept apart, not compared.
fn perf_stat_scope_warning(base: &str, b: &str, patched: &str, p: &str) -> String {
    format!(
        "perf-stat counted differently: {base} {b} vs {patched} {p} (a user without \
         CAP_PERFMON under kernel.perf_event_paranoid 2 counts user space only); the rows \
         counted in part are named :u and compared only with their like, context-switches and \
         cpu-migrations exist only where counted in full, task-clock counts the same either \
         way (measure both sides as the same user)"
    )
}

/// The warning when the sides differ in what ran inside the timed window.
fn in_window_warning(base: &str, b: &str, patched: &str, p: &str) -> String {
    format!(
        "what ran inside the timed window differs: {base} {b} vs {patched} {p}; the kernel \
         works for in-window counters at every fork, exit and context switch, so the scores \
         of such workloads are not comparable (measure both sides with the same monitors)"
    )
}

fn plain(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Kind, RunRecord};
    use crate::sysinfo::SystemInfo;

    fn side(name: &str, kernel: &str, cpu: &str) -> Side {
        let system = SystemInfo {
            kernel_release: kernel.into(),
            cpu_model: cpu.into(),
            ..SystemInfo::default()
        };
        Side::new(
            name,
            vec![("1".into(), RunRecord::new(Kind::Unixbench, system, &()))],
        )
    }

    #[test]
    fn the_kernel_differs_as_expected_and_anything_else_is_warned_about() {
        let (b, p) = (side("base", "6.1", "EPYC"), side("patched", "6.2", "Xeon"));
        let table = fingerprint(&b, &p);
        let kernel = table
            .iter()
            .find(|a| a.name == "system.kernel_release")
            .unwrap();
        assert!(kernel.differs && kernel.expected);
        assert_eq!(
            (kernel.base.as_str(), kernel.patched.as_str()),
            ("6.1", "6.2")
        );
        let cpu = table.iter().find(|a| a.name == "system.cpu_model").unwrap();
        assert!(cpu.differs && !cpu.expected);
        assert!(table.iter().all(|a| a.name != "system.noise"));
        assert_eq!(
            differences(&b, &p),
            vec!["system.cpu_model differs: base EPYC vs patched Xeon"]
        );
        assert!(noise(&b).line.is_none(), "no stored check, no warning");
        assert_eq!(noise(&b).checked, 0);
    }

    fn with_monitors(name: &str, in_window: Vec<String>, counters: &[&str]) -> Side {
        let mut run = RunRecord::new(Kind::Unixbench, SystemInfo::default(), &());
        let sample = crate::monitor::Sample {
            in_window,
            counters: counters.iter().map(|k| (k.to_string(), 1.0)).collect(),
            ..Default::default()
        };
        run.monitors = vec![crate::record::monitors::Unit::new(
            &[("test", "context1".into())],
            String::new(),
            None,
            sample,
        )];
        Side::new(name, vec![("1".into(), run)])
    }

    #[test]
    fn sides_that_differ_in_what_ran_inside_the_window_are_warned_about() {
        let plain = with_monitors("base", Vec::new(), &["proc-vmstat.pgfault"]);
        let none = side("patched", "", "");
        assert!(
            differences(&plain, &none).is_empty(),
            "defaults vs --no-monitors"
        );
        let counted = with_monitors(
            "patched",
            vec!["perf-stat".into()],
            &["perf-stat.task-clock"],
        );
        let w = differences(&plain, &counted);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with(
                "what ran inside the timed window differs: base nothing vs patched perf-stat;"
            ),
            "{w:?}"
        );
        // A run of an earlier build: its perf-stat rows ran inside the window.
        let old = with_monitors("base", Vec::new(), &["perf-stat.task-clock"]);
        let w = differences(&old, &plain);
        assert!(
            w[0].contains("base perf-stat (an earlier build: perf-stat always inside) vs"),
            "{w:?}"
        );
    }

    #[test]
    fn perf_stat_counted_user_space_only_on_one_side_is_warned_about_once() {
        let stat = vec!["perf-stat".to_string()];
        let full = with_monitors(
            "base",
            stat.clone(),
            &["perf-stat.task-clock", "perf-stat.page-faults"],
        );
        let user = with_monitors(
            "patched",
            stat.clone(),
            &["perf-stat.task-clock", "perf-stat.page-faults:u"],
        );
        let w = differences(&full, &user);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with(
                "perf-stat counted differently: base full vs patched user space only (:u)"
            ) && w[0].contains("named :u"),
            "{w:?}"
        );
        let also_full = with_monitors("patched", stat, &["perf-stat.task-clock"]);
        assert!(differences(&full, &also_full).is_empty());
        // A side without perf-stat: the in-window line says it, not this one.
        let plain = with_monitors("base", Vec::new(), &["proc-vmstat.pgfault"]);
        let w = differences(&plain, &user);
        assert!(
            w.len() == 1 && w[0].starts_with("what ran inside the timed window"),
            "{w:?}"
        );
    }

    #[test]
    fn runs_measured_beside_another_are_warned_about_by_name() {
        let plain = |id: &str, beside: Option<&str>| {
            let mut run = RunRecord::new(Kind::Unixbench, SystemInfo::default(), &());
            if let Some(b) = beside {
                run.system
                    .extra
                    .insert(crate::sysinfo::MEASURED_BESIDE.to_string(), b.to_string());
            }
            (id.to_string(), run)
        };
        let base = Side::new("base", vec![plain("1", None), plain("2", None)]);
        let patched = Side::new("patched", vec![plain("3", None)]);
        assert!(differences(&base, &patched).is_empty());
        // Both sides overlapped, with different holders: one warning naming the runs, not a
        // difference of fingerprints.
        let base = Side::new(
            "base",
            vec![plain("1", Some("pid 7 (patchbench run)")), plain("2", None)],
        );
        let patched = Side::new("patched", vec![plain("3", Some("pid 9 (make)"))]);
        let w = differences(&base, &patched);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with(
                "2 run(s) measured beside another measurement on their machine \
                 (--allow-overlap): base 1, patched 3;"
            ),
            "{w:?}"
        );
    }
}
