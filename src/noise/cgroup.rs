//! A CPU limit on this process's cgroup (a container's `--cpus`, a systemd `CPUQuota=`): a
//! quota below the CPUs the copies use makes the kernel stop them every period, which looks
//! like a slow system. Reads cgroup v2 `cpu.max` or v1 `cpu.cfs_quota_us`/`cpu.cfs_period_us`
//! at every level from the process's cgroup up to the mount, and `cpu.stat`'s
//! `nr_throttled` to see throttling during the sample.

use super::sysfs::Root;
use super::{Finding, Kind};
use crate::fsinfo::parse_mount;

/// Where this process's CPU controller lives.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuCgroup {
    /// 1 or 2.
    pub version: u8,
    /// The kernel path of the mount (`/sys/fs/cgroup/cpu`, `/sys/fs/cgroup`).
    pub mount_point: String,
    /// The kernel path of this process's cgroup directory under it.
    pub dir: String,
}

/// `/proc/self/cgroup`: (controllers, path) per line.
pub fn parse_proc_cgroup(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, ':');
            let _id = f.next()?;
            Some((f.next()?.to_string(), f.next()?.to_string()))
        })
        .collect()
}

/// Finds the CPU controller: a v1 hierarchy listing `cpu`, else the unified (v2) one.
pub fn locate(root: &Root) -> Option<CpuCgroup> {
    let groups = parse_proc_cgroup(&root.read("/proc/self/cgroup")?);
    let mounts: Vec<_> = root
        .read("/proc/self/mountinfo")?
        .lines()
        .filter_map(parse_mount)
        .collect();
    let v1 = groups
        .iter()
        .find(|(c, _)| c.split(',').any(|c| c == "cpu"))
        .and_then(|(_, path)| {
            let m = mounts.iter().find(|m| {
                m.fs_type == "cgroup" && m.super_options.split(',').any(|o| o == "cpu")
            })?;
            Some((1u8, m.mount_point.clone(), path.clone()))
        });
    let v2 = || {
        let (_, path) = groups.iter().find(|(c, _)| c.is_empty())?;
        let m = mounts.iter().find(|m| m.fs_type == "cgroup2")?;
        // Without the cpu controller enabled there is no cpu.max to read.
        let controllers = root.read(&format!("{}/cgroup.controllers", m.mount_point))?;
        controllers
            .split_whitespace()
            .any(|c| c == "cpu")
            .then(|| (2u8, m.mount_point.clone(), path.clone()))
    };
    let (version, mount_point, path) = v1.or_else(v2)?;
    let joined = format!("{}/{}", mount_point, path.trim_start_matches('/'));
    let joined = joined.trim_end_matches('/').to_string();
    // In a container without a cgroup namespace the path names the host's hierarchy, which
    // is mounted as the container's root: fall back to the mount itself.
    let dir = if root.exists(&joined) {
        joined
    } else {
        mount_point.clone()
    };
    Some(CpuCgroup {
        version,
        mount_point,
        dir,
    })
}

/// v2 `cpu.max` (`max 100000`, `150000 100000`): the limit in CPUs, None when unlimited.
pub fn parse_cpu_max(text: &str) -> Option<f64> {
    let mut f = text.split_whitespace();
    let quota: f64 = f.next()?.parse().ok()?;
    let period: f64 = f.next().unwrap_or("100000").parse().ok()?;
    (quota > 0.0 && period > 0.0).then(|| quota / period)
}

/// v1 quota and period in µs (`-1` for no quota): the limit in CPUs.
pub fn parse_cfs_quota(quota: &str, period: &str) -> Option<f64> {
    let q: f64 = quota.trim().parse().ok()?;
    let p: f64 = period.trim().parse().ok()?;
    (q > 0.0 && p > 0.0).then(|| q / p)
}

/// `nr_throttled` from `cpu.stat`.
pub fn parse_nr_throttled(cpu_stat: &str) -> Option<u64> {
    cpu_stat
        .lines()
        .find_map(|l| l.strip_prefix("nr_throttled ")?.trim().parse().ok())
}

/// The tightest limit from the process's cgroup up to the mount, with the file it is in.
pub fn limit(root: &Root, cg: &CpuCgroup) -> Option<(f64, String)> {
    let mut best: Option<(f64, String)> = None;
    let mut dir = cg.dir.clone();
    loop {
        let found = if cg.version == 2 {
            let file = format!("{dir}/cpu.max");
            root.read(&file)
                .and_then(|t| parse_cpu_max(&t))
                .map(|l| (l, file))
        } else {
            let file = format!("{dir}/cpu.cfs_quota_us");
            match (
                root.read(&file),
                root.read(&format!("{dir}/cpu.cfs_period_us")),
            ) {
                (Some(q), Some(p)) => parse_cfs_quota(&q, &p).map(|l| (l, file)),
                _ => None,
            }
        };
        if let Some((l, file)) = found {
            if best.as_ref().is_none_or(|(b, _)| l < *b) {
                best = Some((l, file));
            }
        }
        if dir.len() <= cg.mount_point.len() {
            return best;
        }
        match dir.rfind('/') {
            Some(i) if i >= cg.mount_point.len() => dir.truncate(i),
            _ => return best,
        }
    }
}

/// Throttled periods of this process's cgroup so far.
pub fn read_throttled(root: &Root) -> Option<u64> {
    let cg = locate(root)?;
    parse_nr_throttled(&root.read(&format!("{}/cpu.stat", cg.dir))?)
}

/// The CPU limit against the CPUs copies may use; throttling during the sample.
pub fn finding(root: &Root, usable_cpus: usize, throttled_during: Option<u64>) -> Finding {
    let (id, source) = ("cgroup_cpu", "cgroup CPU limit");
    let Some(cg) = locate(root) else {
        return Finding::not_exposed(
            id,
            source,
            Kind::Setting,
            "no cpu controller in /proc/self/cgroup and /proc/self/mountinfo",
        );
    };
    let throttled = match throttled_during {
        Some(n) if n > 0 => format!("; throttled in {n} periods during the sample"),
        _ => String::new(),
    };
    match limit(root, &cg) {
        Some((cpus, file)) if cpus < usable_cpus as f64 || !throttled.is_empty() => Finding::warn(
            id,
            source,
            Kind::Setting,
            format!("{cpus:.2} CPUs ({file}) for {usable_cpus} usable CPUs{throttled}"),
            format!(
                "raise the quota (a container's --cpus, systemd CPUQuota=) or give \
                     --copies no more than {}",
                cpus.floor().max(1.0)
            ),
        ),
        Some((cpus, file)) => Finding::ok(
            id,
            source,
            Kind::Setting,
            format!("{cpus:.2} CPUs ({file})"),
        ),
        None if !throttled.is_empty() => Finding::warn(
            id,
            source,
            Kind::Setting,
            format!("no quota set{throttled}"),
            "find the cgroup that limits it (systemd-cgls) and raise its quota",
        ),
        None => Finding::ok(
            id,
            source,
            Kind::Setting,
            format!("none (cgroup v{} {})", cg.version, cg.dir),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::sysfs::sample_root;
    use crate::noise::Status;

    /// This project's VM: cgroup v1 with the cpu controller, and an unlimited quota.
    const VM_CGROUP: &str =
        "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/79f7\n1:cpu:/\n0::/\n";
    const VM_MOUNTS: &str = "\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const V1_STAT: &str =
        "nr_periods 0\nnr_throttled 0\nthrottled_time 0\nnr_bursts 0\nburst_time 0\n";

    #[test]
    fn this_vm_has_no_quota() {
        let (_d, root) = sample_root(&[
            ("/proc/self/cgroup", VM_CGROUP),
            ("/proc/self/mountinfo", VM_MOUNTS),
            ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n"),
            ("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n"),
            ("/sys/fs/cgroup/cpu/cpu.stat", V1_STAT),
        ]);
        let cg = locate(&root).unwrap();
        assert_eq!((cg.version, cg.dir.as_str()), (1, "/sys/fs/cgroup/cpu"));
        assert_eq!(read_throttled(&root), Some(0));
        let f = finding(&root, 2, Some(0));
        assert_eq!(
            (f.status, f.value.as_str()),
            (Status::Ok, "none (cgroup v1 /sys/fs/cgroup/cpu)")
        );
    }

    #[test]
    fn a_container_quota_under_the_cpus_warns() {
        // cgroup v2 as systemd and docker set it up: 1.5 CPUs on the container, none above.
        let (_d, root) = sample_root(&[
            ("/proc/self/cgroup", "0::/system.slice/docker-ab12.scope\n"),
            (
                "/proc/self/mountinfo",
                "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
            ),
            ("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n"),
            ("/sys/fs/cgroup/system.slice/cpu.max", "max 100000\n"),
            ("/sys/fs/cgroup/system.slice/docker-ab12.scope/cpu.max", "150000 100000\n"),
            (
                "/sys/fs/cgroup/system.slice/docker-ab12.scope/cpu.stat",
                "usage_usec 1000\nuser_usec 600\nsystem_usec 400\nnr_periods 40\nnr_throttled 7\nthrottled_usec 9000\n",
            ),
        ]);
        let f = finding(&root, 4, Some(3));
        assert_eq!(f.status, Status::Warn);
        assert_eq!(
            f.value,
            "1.50 CPUs (/sys/fs/cgroup/system.slice/docker-ab12.scope/cpu.max) for 4 usable \
             CPUs; throttled in 3 periods during the sample"
        );
        assert!(f.fix.unwrap().contains("--copies no more than 1"));
        assert_eq!(read_throttled(&root), Some(7));
        // A quota at or above the CPUs, not throttled: fine.
        assert_eq!(finding(&root, 1, Some(0)).status, Status::Ok);
    }

    #[test]
    fn quota_formats() {
        assert_eq!(parse_cpu_max("max 100000\n"), None);
        assert_eq!(parse_cpu_max("200000 100000\n"), Some(2.0));
        assert_eq!(parse_cfs_quota("-1\n", "100000\n"), None);
        assert_eq!(parse_cfs_quota("50000\n", "100000\n"), Some(0.5));
        assert_eq!(parse_nr_throttled(V1_STAT), Some(0));
        assert_eq!(parse_nr_throttled("garbage"), None);
    }

    #[test]
    fn no_cgroup_files_is_not_exposed() {
        let (_d, root) = sample_root(&[]);
        assert_eq!(finding(&root, 2, None).status, Status::NotExposed);
    }
}
