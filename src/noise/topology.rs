//! Where copies can run: SMT, isolated CPUs (`isolcpus`), `nohz_full` CPUs, and the CPUs this
//! process may use (taskset, cpusets). patchbench does not pin copies, so CPUs it may not use
//! or that the scheduler keeps free change how many copies share a CPU.

use super::sysfs::{cmdline_value, cpus_phrase, format_cpu_list, parse_cpu_list, Root};
use super::{Finding, Kind};

const CPU: &str = "/sys/devices/system/cpu";

/// Online CPUs from `/sys/devices/system/cpu/online` (None when not exposed).
pub fn online(root: &Root) -> Option<Vec<usize>> {
    Some(parse_cpu_list(&root.read(&format!("{CPU}/online"))?)).filter(|c| !c.is_empty())
}

/// SMT (hyper-threading): `smt/control`, else the sibling lists of the topology.
pub fn smt(root: &Root) -> Finding {
    let (id, source) = ("smt", "SMT (hyper-threads)");
    let siblings = root
        .cpu_dirs()
        .iter()
        .filter_map(|c| {
            root.read(&format!("{CPU}/cpu{c}/topology/thread_siblings_list"))
                .map(|s| parse_cpu_list(&s).len())
        })
        .max();
    let per_core = siblings
        .filter(|&n| n > 1)
        .map(|n| format!(" ({n} threads per core: copies on sibling threads share a core)"))
        .unwrap_or_default();
    let value = match root.read_trimmed(&format!("{CPU}/smt/control")).as_deref() {
        Some("on") => format!("on{per_core}"),
        Some("off") | Some("forceoff") => "off".to_string(),
        Some("notsupported") => "not supported by this CPU (or not shown to this VM)".to_string(),
        Some("notimplemented") => "not implemented for this architecture".to_string(),
        Some(other) => format!("{other}{per_core}"),
        None => match siblings {
            Some(1) => "off (one thread per core)".to_string(),
            Some(_) => format!("on{per_core}"),
            None => {
                return Finding::not_exposed(
                    id,
                    source,
                    Kind::Setting,
                    "no smt/control or topology/thread_siblings_list",
                )
            }
        },
    };
    Finding::ok(id, source, Kind::Setting, value)
}

/// Isolated CPUs: the scheduler places no task there unless pinned, so a run of as many
/// copies as CPUs squeezes onto the others, unless patchbench itself runs pinned to them.
pub fn isolated(root: &Root, allowed: Option<&[usize]>) -> Finding {
    let (id, source) = ("isolcpus", "isolated CPUs");
    let sysfs = root.read(&format!("{CPU}/isolated"));
    let cmdline = root.read("/proc/cmdline").unwrap_or_default();
    let boot = cmdline_value(&cmdline, "isolcpus");
    let cpus = match (&sysfs, boot) {
        (Some(s), _) => parse_cpu_list(s),
        (None, Some(b)) => parse_cpu_list(b),
        (None, None) if !cmdline.is_empty() => Vec::new(),
        (None, None) => {
            return Finding::not_exposed(
                id,
                source,
                Kind::Setting,
                "no /sys/devices/system/cpu/isolated or /proc/cmdline",
            )
        }
    };
    if cpus.is_empty() {
        return Finding::ok(id, source, Kind::Setting, "none");
    }
    let boot = boot.map(|b| format!(" (isolcpus={b})")).unwrap_or_default();
    let value = format!("{}{boot}", cpus_phrase(&cpus));
    match allowed {
        Some(a) if !a.is_empty() && a.iter().all(|c| cpus.contains(c)) => Finding::ok(
            id,
            source,
            Kind::Setting,
            format!("{value}; patchbench runs pinned to them"),
        ),
        _ => Finding::warn(
            id,
            source,
            Kind::Setting,
            format!("{value}: copies are not placed there unless pinned"),
            format!(
                "run patchbench pinned to them (taskset -c {} patchbench ...) or give \
                 --copies no more than the other CPUs",
                format_cpu_list(&cpus)
            ),
        ),
    }
}

/// `nohz_full` CPUs (no scheduler tick while one task runs): a setting to record.
pub fn nohz_full(root: &Root) -> Finding {
    let (id, source) = ("nohz_full", "nohz_full CPUs");
    let sysfs = root.read(&format!("{CPU}/nohz_full"));
    let cmdline = root.read("/proc/cmdline");
    let boot = cmdline
        .as_deref()
        .and_then(|c| cmdline_value(c, "nohz_full"));
    let cpus = match (&sysfs, boot, &cmdline) {
        (Some(s), _, _) => parse_cpu_list(s),
        (None, Some(b), _) => parse_cpu_list(b),
        // The file exists only in kernels built with NO_HZ_FULL: without it and without
        // the boot parameter, there are none.
        (None, None, Some(_)) => Vec::new(),
        (None, None, None) => {
            return Finding::not_exposed(
                id,
                source,
                Kind::Setting,
                "no /sys/devices/system/cpu/nohz_full or /proc/cmdline",
            )
        }
    };
    let value = if cpus.is_empty() {
        "none".to_string()
    } else {
        cpus_phrase(&cpus)
    };
    Finding::ok(id, source, Kind::Setting, value)
}

/// The CPUs this process may run on (`sched_getaffinity`), or None if unknown.
pub fn current_affinity() -> Option<Vec<usize>> {
    let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).ok()?;
    Some(
        (0..nix::sched::CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect(),
    )
}

/// Fewer allowed CPUs than online ones (taskset, a cpuset): copies beyond them share CPUs.
pub fn affinity(allowed: Option<&[usize]>, online: Option<&[usize]>) -> Finding {
    let (id, source) = ("affinity", "CPU affinity");
    let (Some(allowed), Some(online)) = (allowed, online) else {
        return Finding::not_exposed(
            id,
            source,
            Kind::Setting,
            "sched_getaffinity or /sys/devices/system/cpu/online unavailable",
        );
    };
    let value = format!(
        "may run on {} ({} of {} online)",
        cpus_phrase(allowed),
        allowed.len(),
        online.len()
    );
    if allowed.len() < online.len() {
        Finding::warn(
            id,
            source,
            Kind::Setting,
            value,
            format!(
                "run without taskset or cpuset limits, or give --copies no more than {}",
                allowed.len()
            ),
        )
    } else {
        Finding::ok(id, source, Kind::Setting, value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::sysfs::sample_root;
    use crate::noise::Status;

    /// This project's VM, copied from its /sys and /proc.
    const VM_CMDLINE: &str = "mitigations=auto,no_guest_host,no_guest_guest console=ttyS0 quiet \
        reboot=k panic=1 nomodule psi=1 rdinit=/process_api -- --firecracker-init --addr 0.0.0.0:2024\n";

    #[test]
    fn this_vm_has_no_smt_and_nothing_isolated() {
        let (_d, root) = sample_root(&[
            ("/sys/devices/system/cpu/smt/control", "notsupported\n"),
            ("/sys/devices/system/cpu/isolated", "\n"),
            ("/sys/devices/system/cpu/online", "0-1\n"),
            (
                "/sys/devices/system/cpu/cpu0/topology/thread_siblings_list",
                "0\n",
            ),
            (
                "/sys/devices/system/cpu/cpu1/topology/thread_siblings_list",
                "1\n",
            ),
            ("/proc/cmdline", VM_CMDLINE),
        ]);
        let s = smt(&root);
        assert_eq!(
            (s.status, s.value.as_str()),
            (
                Status::Ok,
                "not supported by this CPU (or not shown to this VM)"
            )
        );
        assert_eq!(isolated(&root, Some(&[0, 1])).value, "none");
        // No nohz_full file (kernel without NO_HZ_FULL) and no boot parameter: none.
        assert_eq!(nohz_full(&root).value, "none");
        assert_eq!(online(&root), Some(vec![0, 1]));
    }

    #[test]
    fn smt_on_from_control_or_from_siblings() {
        let (_d, root) = sample_root(&[
            ("/sys/devices/system/cpu/smt/control", "on\n"),
            (
                "/sys/devices/system/cpu/cpu0/topology/thread_siblings_list",
                "0,4\n",
            ),
        ]);
        assert!(smt(&root).value.starts_with("on (2 threads per core"));
        let (_d, root) = sample_root(&[(
            "/sys/devices/system/cpu/cpu0/topology/thread_siblings_list",
            "0-1\n",
        )]);
        assert!(smt(&root).value.starts_with("on (2 threads"));
    }

    #[test]
    fn isolated_cpus_warn_unless_pinned_to_them() {
        let (_d, root) = sample_root(&[
            ("/sys/devices/system/cpu/isolated", "2-3\n"),
            ("/sys/devices/system/cpu/nohz_full", "2-3\n"),
            (
                "/proc/cmdline",
                "BOOT_IMAGE=/vmlinuz isolcpus=domain,managed_irq,2-3 nohz_full=2-3\n",
            ),
        ]);
        let f = isolated(&root, Some(&[0, 1, 2, 3]));
        assert_eq!(f.status, Status::Warn);
        assert!(f
            .value
            .starts_with("CPUs 2-3 (isolcpus=domain,managed_irq,2-3)"));
        assert!(f.fix.unwrap().contains("taskset -c 2-3"));
        assert_eq!(isolated(&root, Some(&[2, 3])).status, Status::Ok);
        assert_eq!(nohz_full(&root).value, "CPUs 2-3");
        // A kernel with NO_HZ_FULL but none configured writes "(null)".
        let (_d, root) = sample_root(&[("/sys/devices/system/cpu/nohz_full", "(null)\n")]);
        assert_eq!(nohz_full(&root).value, "none");
    }

    #[test]
    fn affinity_narrower_than_online_warns() {
        assert_eq!(affinity(Some(&[0, 1]), Some(&[0, 1])).status, Status::Ok);
        let f = affinity(Some(&[1]), Some(&[0, 1, 2, 3]));
        assert_eq!(f.status, Status::Warn);
        assert_eq!(f.value, "may run on CPU 1 (1 of 4 online)");
        assert_eq!(affinity(None, Some(&[0])).status, Status::NotExposed);
        assert!(current_affinity().is_some_and(|a| !a.is_empty()));
    }

    #[test]
    fn nothing_readable_is_not_exposed() {
        let (_d, root) = sample_root(&[]);
        assert_eq!(smt(&root).status, Status::NotExposed);
        assert_eq!(isolated(&root, None).status, Status::NotExposed);
        assert_eq!(nohz_full(&root).status, Status::NotExposed);
        assert_eq!(online(&root), None);
    }
}
