//! Noise sources: what on this machine can move a benchmark's numbers besides the change
//! being measured. One probe per source, grouped by family (one file each); each gives one
//! [`Finding`]: `ok`, `warn` (with the measured value and how to fix it) or `not exposed` (the
//! kernel does not show it here, as cpufreq in a VM). Nothing here changes a setting.
//!
//! - `patchbench check` (`crate::commands::check`) prints the findings; exit status 1 with
//!   warnings.
//! - [`snapshot`] is the same check, silent, for the start of a measuring command; the run
//!   stores it in its fingerprint ([`crate::sysinfo::SystemInfo::noise`]).
//! - [`activity`] is the per-pass monitor a harness runs around each pass.
//! - Which of a stored report's warnings apply to a run (the file tests' directory only where
//!   the run wrote there) is `crate::compare::meaning`'s rule; [`settings`] gives a report's
//!   settings for comparing the sides.
//!
//! The probes read through a [`sysfs::Root`], so tests run them on sample trees in the
//! kernel's formats. Sampled sources (other processes, steal, pressure, swapping,
//! throttling) compare counters read before and after a short sleep.

pub mod activity;
pub mod cgroup;
pub mod clocksource;
pub mod cpu_power;
pub mod cpu_snapshot;
pub mod load;
pub mod memory;
pub mod storage;
pub mod sysfs;
pub mod topology;
pub mod window_cpu;

use activity::{Activity, MonitorSettings};
use cpu_snapshot::CpuSnapshot;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use sysfs::Root;

/// The `schema` of a [`NoiseReport`] (`check --format json` and the stored copy).
pub const SCHEMA: &str = "patchbench.check/1";

/// `patchbench check`'s default sample.
pub const CHECK_SAMPLE: Duration = Duration::from_secs(1);

/// The sample a measuring command takes before it starts: 0.25 s is under 0.5 % of a
/// `--quick` run and enough to see a busy neighbour (one tick is 4 % of a CPU at 100 Hz);
/// what happens during the run itself is the per-pass monitor's job.
pub const RUN_SAMPLE: Duration = Duration::from_millis(250);

/// The verdict on one noise source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    Warn,
    NotExposed,
}

impl Status {
    /// The word the table prints: `ok`, `warn`, `not exposed`.
    pub fn word(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::NotExposed => "not exposed",
        }
    }
}

/// Whether a source is a setting of the machine (the same on every run until someone
/// changes it: compare can diff it between sides) or activity measured during the sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Setting,
    Activity,
}

/// One noise source's line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable key (`governor`, `steal`, …).
    pub id: String,
    /// What the table calls it (`cpufreq governor`).
    pub source: String,
    pub kind: Kind,
    pub status: Status,
    /// The measured value; for `not exposed`, what is missing.
    pub value: String,
    /// How to fix a warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Finding {
    pub fn ok(id: &str, source: &str, kind: Kind, value: impl Into<String>) -> Finding {
        Finding {
            id: id.into(),
            source: source.into(),
            kind,
            status: Status::Ok,
            value: value.into(),
            fix: None,
        }
    }

    pub fn warn(
        id: &str,
        source: &str,
        kind: Kind,
        value: impl Into<String>,
        fix: impl Into<String>,
    ) -> Finding {
        Finding {
            status: Status::Warn,
            fix: Some(fix.into()),
            ..Finding::ok(id, source, kind, value)
        }
    }

    pub fn not_exposed(id: &str, source: &str, kind: Kind, missing: impl Into<String>) -> Finding {
        Finding {
            status: Status::NotExposed,
            ..Finding::ok(id, source, kind, missing)
        }
    }
}

/// Every finding of one check, and the activity sampled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoiseReport {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The sample asked for, s.
    pub sample_secs: f64,
    /// The directory the file tests would use.
    pub dir: String,
    pub findings: Vec<Finding>,
    /// What the sample saw (steal, other processes, throttling), as the per-pass monitor
    /// reports it.
    #[serde(default)]
    pub activity: Option<Activity>,
}

impl NoiseReport {
    pub fn warnings(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.status == Status::Warn)
    }

    /// 0 when nothing warns, 1 otherwise.
    pub fn exit_status(&self) -> i32 {
        i32::from(self.warnings().next().is_some())
    }
}

/// The counters a sample compares, read at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    pub cpu: CpuSnapshot,
    pub swaps: Option<memory::SwapCounts>,
    pub cgroup_throttled: Option<u64>,
    pub pressure_us: Option<u64>,
}

impl Counters {
    /// Reads them; CPU pressure just before `/proc/stat`, so that the window measured in
    /// CPU ticks is also the pressure's.
    pub fn read(root: &Root) -> Counters {
        let pressure_us = load::read_pressure(root);
        Counters {
            cpu: CpuSnapshot::read(root),
            pressure_us,
            swaps: memory::read_swaps(root),
            cgroup_throttled: cgroup::read_throttled(root),
        }
    }
}

/// What only the running system can say (syscalls, the directory's filesystem).
#[derive(Debug, Clone, Default)]
pub struct Live {
    /// CPUs this process may run on.
    pub affinity: Option<Vec<usize>>,
    pub fs: Option<crate::fsinfo::FsInfo>,
    pub rotational: Option<bool>,
}

impl Live {
    pub fn read(dir: &Path) -> Live {
        let fs = crate::fsinfo::collect(dir);
        let device = std::fs::canonicalize(&fs.source)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| fs.source.clone());
        Live {
            affinity: topology::current_affinity(),
            rotational: storage::rotational(&Root::system(), &device),
            fs: Some(fs),
        }
    }
}

/// Checks the running system: reads the counters, sleeps `sample`, reads them again, and
/// judges every source. Never fails: what cannot be read is "not exposed".
pub fn snapshot(dir: &Path, sample: Duration) -> NoiseReport {
    let root = Root::system();
    let before = Counters::read(&root);
    std::thread::sleep(sample);
    let after = Counters::read(&root);
    let settings = MonitorSettings::default();
    assess(&root, &before, &after, &Live::read(dir), &settings, sample)
}

/// Judges every source from counters read before and after the sample. Pure over `root`
/// and its arguments, so tests give it sample trees.
pub fn assess(
    root: &Root,
    before: &Counters,
    after: &Counters,
    live: &Live,
    settings: &MonitorSettings,
    sample: Duration,
) -> NoiseReport {
    let a = activity::activity(&before.cpu, &after.cpu, settings);
    let online = topology::online(root);
    let cpus = online.as_ref().map(Vec::len).unwrap_or(after.cpu.cpus);
    let usable = live.affinity.as_ref().map(Vec::len).unwrap_or(cpus);
    let throttled = match (before.cgroup_throttled, after.cgroup_throttled) {
        (Some(b), Some(a)) => Some(a.saturating_sub(b)),
        _ => None,
    };
    let sampled = (a.total_ticks > 0).then_some(&a);
    let mut findings = vec![
        load::load_average(root, cpus, sampled),
        activity::others_finding(&a),
        activity::steal_finding(&a),
        load::pressure(before.pressure_us, after.pressure_us, a.window_secs),
        memory::swap(root, before.swaps, after.swaps),
        memory::available(root),
        cpu_power::thermal(after.cpu.throttle, a.throttle_events, a.window_secs),
        cpu_power::governor(root),
        cpu_power::frequency(root),
        cpu_power::boost(root),
        topology::smt(root),
        topology::isolated(root, live.affinity.as_deref()),
        topology::nohz_full(root),
        topology::affinity(live.affinity.as_deref(), online.as_deref()),
        cgroup::finding(root, usable, throttled),
        cpu_power::cpuidle(root),
        clocksource::clocksource(root),
        cpu_power::power_supply(root),
        memory::thp(root),
        memory::aslr(root),
    ];
    let dir = match &live.fs {
        Some(fs) => {
            findings.push(storage::directory(fs, live.rotational));
            fs.dir.clone()
        }
        None => String::new(),
    };
    NoiseReport {
        schema: SCHEMA.to_string(),
        sample_secs: sample.as_secs_f64(),
        dir,
        findings,
        activity: Some(a),
    }
}

/// A stored report's settings (id → value), for `compare` to diff between the sides.
pub fn settings(report: &NoiseReport) -> BTreeMap<String, String> {
    report
        .findings
        .iter()
        .filter(|f| f.kind == Kind::Setting)
        .map(|f| (f.id.clone(), f.value.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysfs::sample_root;

    #[test]
    fn an_empty_tree_gives_not_exposed_everywhere_and_no_panic() {
        let (_d, root) = sample_root(&[]);
        let before = Counters::read(&root);
        let after = Counters::read(&root);
        let r = assess(
            &root,
            &before,
            &after,
            &Live::default(),
            &MonitorSettings::default(),
            Duration::from_millis(200),
        );
        assert_eq!(r.findings.len(), 20);
        for f in &r.findings {
            assert_eq!(f.status, Status::NotExposed, "{f:?}");
        }
        assert_eq!(r.exit_status(), 0);
        assert_eq!(r.warnings().count(), 0);
    }

    #[test]
    fn snapshot_of_this_machine_round_trips_through_json() {
        let r = snapshot(&std::env::temp_dir(), Duration::from_millis(50));
        assert_eq!(r.schema, SCHEMA);
        let ids: Vec<&str> = r.findings.iter().map(|f| f.id.as_str()).collect();
        for id in [
            "load", "others", "steal", "governor", "boost", "smt", "isolcpus", "swap", "thp",
            "aslr", "thermal", "dir",
        ] {
            assert!(ids.contains(&id), "{id} missing from {ids:?}");
        }
        // /proc/stat is on every Linux: the sample saw time pass.
        let a = r.activity.as_ref().unwrap();
        assert!(a.total_ticks > 0 && a.cpus >= 1, "{a:?}");
        for f in r.warnings() {
            assert!(f.fix.as_deref().is_some_and(|x| !x.is_empty()), "{f:?}");
        }
        let text = serde_json::to_string(&r).unwrap();
        let back: NoiseReport = serde_json::from_str(&text).unwrap();
        // Floats may come back a last digit off; the findings are text.
        assert_eq!(back.findings, r.findings);
        assert_eq!(back.activity.unwrap().busiest.len(), a.busiest.len());
        assert!(text.contains("\"status\":\"ok\"") || text.contains("\"status\":\"warn\""));
    }

    #[test]
    fn warnings_and_settings_of_a_stored_report() {
        let r = NoiseReport {
            schema: SCHEMA.into(),
            sample_secs: 0.25,
            dir: "/tmp".into(),
            findings: vec![
                Finding::warn(
                    "governor",
                    "cpufreq governor",
                    Kind::Setting,
                    "powersave on CPUs 0-7",
                    "x",
                ),
                Finding::ok("smt", "SMT (hyper-threads)", Kind::Setting, "off"),
                Finding::warn(
                    "steal",
                    "hypervisor steal",
                    Kind::Activity,
                    "4.0% of CPU time",
                    "y",
                ),
            ],
            activity: None,
        };
        let lines: Vec<String> = r
            .warnings()
            .map(|f| format!("{}: {}", f.source, f.value))
            .collect();
        assert_eq!(
            lines,
            [
                "cpufreq governor: powersave on CPUs 0-7",
                "hypervisor steal: 4.0% of CPU time"
            ]
        );
        let s = settings(&r);
        assert_eq!(s.len(), 2);
        assert_eq!(s["smt"], "off");
        assert_eq!(r.exit_status(), 1);
    }
}
