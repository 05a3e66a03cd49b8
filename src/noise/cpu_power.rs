//! CPU clock and power probes: the cpufreq governor, the allowed and hardware frequency range,
//! turbo/boost, thermal throttling, the cpuidle driver and the power supply. A VM usually has
//! none of the cpufreq files; then each line says "not exposed".

use super::sysfs::{cpus_phrase, format_cpu_list, Root};
use super::{Finding, Kind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const CPU: &str = "/sys/devices/system/cpu";

/// Groups numbered values (per CPU, per policy) by value, each group written by `show`.
fn grouped(values: &[(usize, String)], show: impl Fn(&str, &[usize]) -> String) -> String {
    let mut by_value: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (n, v) in values {
        by_value.entry(v.as_str()).or_default().push(*n);
    }
    by_value
        .iter()
        .map(|(v, ns)| show(v, ns))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `performance on CPUs 0-3, powersave on CPUs 4-7`.
fn per_cpu_summary(values: &[(usize, String)]) -> String {
    grouped(values, |v, cpus| format!("{v} on {}", cpus_phrase(cpus)))
}

/// One cpufreq file of every CPU that has it.
fn cpufreq_values(root: &Root, file: &str) -> Vec<(usize, String)> {
    root.cpu_dirs()
        .into_iter()
        .filter_map(|c| {
            Some((
                c,
                root.read_trimmed(&format!("{CPU}/cpu{c}/cpufreq/{file}"))?,
            ))
        })
        .collect()
}

const NO_CPUFREQ: &str = "no /sys/devices/system/cpu/cpu*/cpufreq (usual in a VM)";

/// The scaling governor of every CPU; anything but `performance` lets the clock move.
pub fn governor(root: &Root) -> Finding {
    let (id, source) = ("governor", "cpufreq governor");
    let govs = cpufreq_values(root, "scaling_governor");
    let Some((first, _)) = govs.first() else {
        return Finding::not_exposed(id, source, Kind::Setting, NO_CPUFREQ);
    };
    let driver = root
        .read_trimmed(&format!("{CPU}/cpu{first}/cpufreq/scaling_driver"))
        .map(|d| format!(" ({d})"))
        .unwrap_or_default();
    let value = format!("{}{driver}", per_cpu_summary(&govs));
    if govs.iter().all(|(_, g)| g == "performance") {
        Finding::ok(id, source, Kind::Setting, value)
    } else {
        Finding::warn(
            id,
            source,
            Kind::Setting,
            value,
            "the clock follows the load; as root: cpupower frequency-set -g performance \
             (or echo performance | tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor)",
        )
    }
}

fn mhz_range(values: &[(usize, String)]) -> Option<(u64, u64)> {
    let khz: Vec<u64> = values.iter().filter_map(|(_, v)| v.parse().ok()).collect();
    Some((*khz.iter().min()? / 1000, *khz.iter().max()? / 1000))
}

fn show_range((lo, hi): (u64, u64)) -> String {
    if lo == hi {
        format!("{lo} MHz")
    } else {
        format!("{lo}-{hi} MHz")
    }
}

/// The frequency range the governor may use, and the hardware's.
pub fn frequency(root: &Root) -> Finding {
    let (id, source) = ("frequency", "CPU frequency");
    let lo = mhz_range(&cpufreq_values(root, "scaling_min_freq"));
    let hi = mhz_range(&cpufreq_values(root, "scaling_max_freq"));
    let (Some(lo), Some(hi)) = (lo, hi) else {
        return Finding::not_exposed(id, source, Kind::Setting, NO_CPUFREQ);
    };
    let hw = match (
        mhz_range(&cpufreq_values(root, "cpuinfo_min_freq")),
        mhz_range(&cpufreq_values(root, "cpuinfo_max_freq")),
    ) {
        (Some(a), Some(b)) => format!("; hardware min {}, max {}", show_range(a), show_range(b)),
        _ => String::new(),
    };
    Finding::ok(
        id,
        source,
        Kind::Setting,
        format!("min {}, max {}{hw}", show_range(lo), show_range(hi)),
    )
}

/// Turbo (intel_pstate) or boost (acpi-cpufreq, amd-pstate, per-policy on newer kernels).
pub fn boost(root: &Root) -> Finding {
    let (id, source) = ("boost", "turbo/boost");
    let why = "the clock then depends on temperature and on how many cores are busy";
    if let Some(v) = root.read_trimmed(&format!("{CPU}/intel_pstate/no_turbo")) {
        return if v == "0" {
            Finding::warn(
                id,
                source,
                Kind::Setting,
                format!("on (intel_pstate no_turbo=0): {why}"),
                "as root: echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo",
            )
        } else {
            Finding::ok(
                id,
                source,
                Kind::Setting,
                format!("off (intel_pstate no_turbo={v})"),
            )
        };
    }
    let global = root.read_trimmed(&format!("{CPU}/cpufreq/boost"));
    let policies: Vec<(usize, String)> = root
        .list(&format!("{CPU}/cpufreq"))
        .iter()
        .filter_map(|p| {
            let n = p.strip_prefix("policy")?.parse().ok()?;
            Some((n, root.read_trimmed(&format!("{CPU}/cpufreq/{p}/boost"))?))
        })
        .collect();
    let (on, where_, fix) = match (&global, policies.is_empty()) {
        (Some(g), _) => (
            g == "1",
            format!("cpufreq/boost={g}"),
            "as root: echo 0 > /sys/devices/system/cpu/cpufreq/boost",
        ),
        (None, false) => (
            policies.iter().any(|(_, v)| v == "1"),
            format!(
                "boost {}",
                grouped(&policies, |v, p| format!(
                    "={v} in policy {}",
                    format_cpu_list(p)
                ))
            ),
            "as root: echo 0 | tee /sys/devices/system/cpu/cpufreq/policy*/boost",
        ),
        (None, true) => {
            return Finding::not_exposed(
                id,
                source,
                Kind::Setting,
                "no intel_pstate/no_turbo or cpufreq boost file",
            )
        }
    };
    if on {
        Finding::warn(
            id,
            source,
            Kind::Setting,
            format!("on ({where_}): {why}"),
            fix,
        )
    } else {
        Finding::ok(id, source, Kind::Setting, format!("off ({where_})"))
    }
}

/// Thermal throttle events since boot: per-core counts summed, package counts once per
/// package.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThrottleCounts {
    pub core: u64,
    pub package: u64,
}

impl ThrottleCounts {
    pub fn total(&self) -> u64 {
        self.core + self.package
    }
}

/// Reads `cpu*/thermal_throttle/{core,package}_throttle_count`; None when not exposed.
pub fn read_throttle(root: &Root) -> Option<ThrottleCounts> {
    let mut core = None;
    let mut packages: BTreeMap<String, u64> = BTreeMap::new();
    for c in root.cpu_dirs() {
        let dir = format!("{CPU}/cpu{c}");
        let count = |f: &str| -> Option<u64> {
            root.read_trimmed(&format!("{dir}/thermal_throttle/{f}"))?
                .parse()
                .ok()
        };
        if let Some(n) = count("core_throttle_count") {
            *core.get_or_insert(0) += n;
        }
        if let Some(n) = count("package_throttle_count") {
            let pkg = root
                .read_trimmed(&format!("{dir}/topology/physical_package_id"))
                .unwrap_or_default();
            packages.insert(pkg, n);
        }
    }
    if core.is_none() && packages.is_empty() {
        return None;
    }
    Some(ThrottleCounts {
        core: core.unwrap_or(0),
        package: packages.values().sum(),
    })
}

/// Throttling during the sample is a warning; counts since boot are shown (they rise under
/// load, which an idle sample does not make; the per-pass monitor watches the run).
pub fn thermal(since_boot: Option<ThrottleCounts>, during: Option<u64>, window: f64) -> Finding {
    let (id, source) = ("thermal", "thermal throttling");
    let Some(t) = since_boot else {
        return Finding::not_exposed(
            id,
            source,
            Kind::Activity,
            "no /sys/devices/system/cpu/cpu*/thermal_throttle (usual in a VM)",
        );
    };
    let boot = format!(
        "{} core and {} package events since boot",
        t.core, t.package
    );
    match during {
        Some(n) if n > 0 => Finding::warn(
            id,
            source,
            Kind::Activity,
            format!("{n} events during the {window:.2} s sample; {boot}"),
            "let the machine cool, improve its cooling, or disable turbo",
        ),
        _ => Finding::ok(
            id,
            source,
            Kind::Activity,
            format!("none during the {window:.2} s sample; {boot}"),
        ),
    }
}

/// The cpuidle driver and governor, and the deepest idle state with its exit latency
/// (deep states make the wake-ups of pipe and context-switch tests slower and less even).
pub fn cpuidle(root: &Root) -> Finding {
    let (id, source) = ("cpuidle", "CPU idle states");
    let driver = root.read_trimmed(&format!("{CPU}/cpuidle/current_driver"));
    let Some(driver) = driver else {
        return Finding::not_exposed(
            id,
            source,
            Kind::Setting,
            "no /sys/devices/system/cpu/cpuidle",
        );
    };
    let governor = root
        .read_trimmed(&format!("{CPU}/cpuidle/current_governor_ro"))
        .or_else(|| root.read_trimmed(&format!("{CPU}/cpuidle/current_governor")))
        .unwrap_or_else(|| "unknown".into());
    let first = root.cpu_dirs().first().copied().unwrap_or(0);
    let states_dir = format!("{CPU}/cpu{first}/cpuidle");
    let deepest = root
        .list(&states_dir)
        .iter()
        .filter(|s| s.starts_with("state"))
        .filter(|s| {
            root.read_trimmed(&format!("{states_dir}/{s}/disable"))
                .is_none_or(|d| d == "0")
        })
        .filter_map(|s| {
            let name = root.read_trimmed(&format!("{states_dir}/{s}/name"))?;
            let latency: u64 = root
                .read_trimmed(&format!("{states_dir}/{s}/latency"))?
                .parse()
                .ok()?;
            Some((latency, name))
        })
        .max();
    let deepest = deepest
        .map(|(lat, name)| format!(", deepest enabled state {name} ({lat} us exit latency)"))
        .unwrap_or_default();
    Finding::ok(
        id,
        source,
        Kind::Setting,
        format!("driver {driver}, governor {governor}{deepest}"),
    )
}

/// On battery, laptops lower the clock and change power limits.
pub fn power_supply(root: &Root) -> Finding {
    let (id, source) = ("power", "power supply");
    let base = "/sys/class/power_supply";
    let mut mains_online = None;
    let mut discharging = false;
    let mut batteries = 0;
    for name in root.list(base) {
        let read = |f: &str| root.read_trimmed(&format!("{base}/{name}/{f}"));
        match read("type").as_deref() {
            Some("Mains") => {
                let online = read("online").as_deref() == Some("1");
                mains_online = Some(mains_online.unwrap_or(false) || online);
            }
            Some("Battery") => {
                batteries += 1;
                discharging |= read("status").as_deref() == Some("Discharging");
            }
            _ => {}
        }
    }
    if mains_online.is_none() && batteries == 0 {
        return Finding::not_exposed(
            id,
            source,
            Kind::Setting,
            "no mains or battery in /sys/class/power_supply (usual for servers and VMs)",
        );
    }
    if discharging || (mains_online == Some(false) && batteries > 0) {
        Finding::warn(
            id,
            source,
            Kind::Setting,
            "on battery: the CPU clock and power limits differ from mains power",
            "plug in the power cable",
        )
    } else {
        Finding::ok(id, source, Kind::Setting, "on mains power")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::sysfs::sample_root;
    use crate::noise::Status;

    /// A laptop with intel_pstate, in the formats of the kernel's cpufreq, intel_pstate,
    /// thermal_throttle, cpuidle and power_supply documentation.
    fn laptop(governor1: &str) -> Vec<(String, String)> {
        let mut f = Vec::new();
        for (c, gov) in [(0, "performance"), (1, governor1)] {
            let d = format!("/sys/devices/system/cpu/cpu{c}");
            for (file, v) in [
                ("cpufreq/scaling_governor", gov),
                ("cpufreq/scaling_driver", "intel_pstate"),
                ("cpufreq/scaling_min_freq", "800000"),
                ("cpufreq/scaling_max_freq", "4700000"),
                ("cpufreq/cpuinfo_min_freq", "800000"),
                ("cpufreq/cpuinfo_max_freq", "4700000"),
                ("thermal_throttle/core_throttle_count", "12"),
                ("thermal_throttle/package_throttle_count", "3"),
                ("topology/physical_package_id", "0"),
            ] {
                f.push((format!("{d}/{file}"), format!("{v}\n")));
            }
        }
        let idle = "/sys/devices/system/cpu/cpu0/cpuidle";
        for (s, name, lat, disable) in [
            ("state0", "POLL", "0", "0"),
            ("state1", "C1", "2", "0"),
            ("state2", "C6", "133", "0"),
            ("state3", "C10", "890", "1"),
        ] {
            f.push((format!("{idle}/{s}/name"), format!("{name}\n")));
            f.push((format!("{idle}/{s}/latency"), format!("{lat}\n")));
            f.push((format!("{idle}/{s}/disable"), format!("{disable}\n")));
        }
        for (p, v) in [
            ("/sys/devices/system/cpu/intel_pstate/no_turbo", "0"),
            (
                "/sys/devices/system/cpu/cpuidle/current_driver",
                "intel_idle",
            ),
            (
                "/sys/devices/system/cpu/cpuidle/current_governor_ro",
                "menu",
            ),
            ("/sys/class/power_supply/AC/type", "Mains"),
            ("/sys/class/power_supply/AC/online", "1"),
            ("/sys/class/power_supply/BAT0/type", "Battery"),
            ("/sys/class/power_supply/BAT0/status", "Charging"),
        ] {
            f.push((p.to_string(), format!("{v}\n")));
        }
        f
    }

    fn root_of(files: &[(String, String)]) -> (tempfile::TempDir, Root) {
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        sample_root(&refs)
    }

    #[test]
    fn governors_are_grouped_and_powersave_warns() {
        let (_d, root) = root_of(&laptop("powersave"));
        let g = governor(&root);
        assert_eq!(g.status, Status::Warn);
        assert_eq!(
            g.value,
            "performance on CPU 0, powersave on CPU 1 (intel_pstate)"
        );
        assert!(g
            .fix
            .unwrap()
            .contains("cpupower frequency-set -g performance"));
        let (_d, root) = root_of(&laptop("performance"));
        let g = governor(&root);
        assert_eq!(g.status, Status::Ok);
        assert_eq!(g.value, "performance on CPUs 0-1 (intel_pstate)");
    }

    #[test]
    fn frequency_turbo_idle_and_power_of_a_laptop() {
        let (_d, root) = root_of(&laptop("performance"));
        assert_eq!(
            frequency(&root).value,
            "min 800 MHz, max 4700 MHz; hardware min 800 MHz, max 4700 MHz"
        );
        let b = boost(&root);
        assert_eq!(b.status, Status::Warn);
        assert!(b.value.starts_with("on (intel_pstate no_turbo=0)"));
        let c = cpuidle(&root);
        assert_eq!(
            c.value,
            "driver intel_idle, governor menu, deepest enabled state C6 (133 us exit latency)"
        );
        assert_eq!(power_supply(&root).status, Status::Ok);
        let t = read_throttle(&root).unwrap();
        // Core counts add up over CPUs; the package count is one package's.
        assert_eq!((t.core, t.package), (24, 3));
        let f = thermal(Some(t), Some(0), 1.0);
        assert_eq!(f.status, Status::Ok);
        assert_eq!(
            f.value,
            "none during the 1.00 s sample; 24 core and 3 package events since boot"
        );
        assert_eq!(thermal(Some(t), Some(2), 1.0).status, Status::Warn);
    }

    #[test]
    fn acpi_boost_and_per_policy_boost() {
        let (_d, root) = sample_root(&[("/sys/devices/system/cpu/cpufreq/boost", "0\n")]);
        let b = boost(&root);
        assert_eq!(
            (b.status, b.value.as_str()),
            (Status::Ok, "off (cpufreq/boost=0)")
        );
        let (_d, root) = sample_root(&[
            ("/sys/devices/system/cpu/cpufreq/policy0/boost", "1\n"),
            ("/sys/devices/system/cpu/cpufreq/policy1/boost", "1\n"),
        ]);
        let b = boost(&root);
        assert_eq!(b.status, Status::Warn);
        assert!(b.value.contains("(boost =1 in policy 0-1)"), "{}", b.value);
    }

    #[test]
    fn on_battery_warns() {
        let (_d, root) = sample_root(&[
            ("/sys/class/power_supply/BAT0/type", "Battery\n"),
            ("/sys/class/power_supply/BAT0/status", "Discharging\n"),
        ]);
        assert_eq!(power_supply(&root).status, Status::Warn);
    }

    #[test]
    fn a_vm_without_cpufreq_is_not_exposed() {
        // This project's VM: cpu0, cpu1 and an empty cpufreq directory.
        let (_d, root) = sample_root(&[
            ("/sys/devices/system/cpu/cpu0/topology/core_id", "0\n"),
            ("/sys/devices/system/cpu/cpu1/topology/core_id", "1\n"),
            ("/sys/devices/system/cpu/online", "0-1\n"),
        ]);
        for f in [
            governor(&root),
            frequency(&root),
            boost(&root),
            cpuidle(&root),
            power_supply(&root),
            thermal(read_throttle(&root), None, 1.0),
        ] {
            assert_eq!(f.status, Status::NotExposed, "{f:?}");
            assert!(f.value.starts_with("no "), "{f:?}");
        }
    }
}
