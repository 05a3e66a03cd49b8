//! The guest settings of a `vm` campaign from its command line: vCPUs, memory, the host CPUs
//! every QEMU thread is bound to, TCG allowed or not, and the QEMU program, with defaults that
//! suit a benchmark rather than "every host CPU" (see [`super::cpus`]: 2 vCPUs, 1 on a host
//! with fewer than 4 CPUs, on the last CPUs this process may use; 2 GiB, less on a host with
//! little free memory), checked
//! (CPUs this process may use, enough of them for a duet's two disjoint halves).

use super::cpus;
use crate::record::campaign::spec::VmOptions;
use std::path::PathBuf;

/// The default QEMU program (looked up in `PATH`).
pub const DEFAULT_QEMU: &str = "qemu-system-x86_64";
/// Default guest memory, MiB.
pub const DEFAULT_MEMORY_MIB: u64 = 2048;
/// The least memory a guest gets, MiB.
pub const MIN_MEMORY_MIB: u64 = 256;

/// What the command line said (None: the default).
#[derive(Debug, Clone, Default)]
pub struct Given {
    pub vcpus: Option<u32>,
    pub memory_mib: Option<u64>,
    pub cpus: Option<Vec<u32>>,
    pub allow_tcg: bool,
    pub qemu: Option<PathBuf>,
    pub duet: bool,
}

/// The guest settings, defaults filled in; a bad value is the one-line error to show.
pub fn resolve(given: &Given) -> Result<VmOptions, String> {
    resolve_on(given, &cpus::allowed(), mem_available_mib())
}

fn resolve_on(
    given: &Given,
    allowed: &[u32],
    available_mib: Option<u64>,
) -> Result<VmOptions, String> {
    let list = |c: &[u32]| {
        crate::noise::sysfs::format_cpu_list(&c.iter().map(|&x| x as usize).collect::<Vec<_>>())
    };
    if let Some(c) = &given.cpus {
        if c.is_empty() {
            return Err("--cpus: give at least one CPU, e.g. --cpus 2-3".to_string());
        }
        let foreign: Vec<u32> = c.iter().copied().filter(|x| !allowed.contains(x)).collect();
        if !foreign.is_empty() {
            return Err(format!(
                "--cpus: CPU {} is not one this process may run on (it may use {})",
                list(&foreign),
                list(allowed)
            ));
        }
    }
    let pool = given.cpus.as_deref().unwrap_or(allowed);
    if given.duet && pool.len() < 2 {
        return Err(format!(
            "--duet needs two disjoint CPU sets, but only CPU {} {} available; give --cpus with \
             at least 2 CPUs",
            list(pool),
            if pool.len() == 1 { "is" } else { "are" }
        ));
    }
    let vcpus = match given.vcpus {
        Some(0) => return Err("--vcpus: a guest needs at least 1 vCPU".to_string()),
        Some(v) => v,
        None => cpus::default_vcpus(pool.len()),
    };
    let cpus = match &given.cpus {
        Some(c) => {
            let mut c = c.clone();
            c.sort_unstable();
            c.dedup();
            c
        }
        None => cpus::default_cpus(allowed, vcpus, given.duet),
    };
    let guests = if given.duet { 2 } else { 1 };
    let memory_mib = match given.memory_mib {
        Some(m) if m < MIN_MEMORY_MIB => {
            return Err(format!(
                "--memory: a guest needs at least {MIN_MEMORY_MIB} MiB"
            ))
        }
        Some(m) => m,
        None => available_mib
            .map(|a| (a / 2 / guests).clamp(MIN_MEMORY_MIB, DEFAULT_MEMORY_MIB))
            .unwrap_or(DEFAULT_MEMORY_MIB),
    };
    Ok(VmOptions {
        vcpus,
        memory_mib,
        cpus,
        allow_tcg: given.allow_tcg,
        qemu: given
            .qemu
            .clone()
            .unwrap_or_else(|| PathBuf::from(DEFAULT_QEMU)),
    })
}

/// `MemAvailable` of `/proc/meminfo`, MiB.
fn mem_available_mib() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_small_and_pinned_to_cpus_this_process_may_use() {
        let o = resolve_on(&Given::default(), &[0, 1, 2, 3], Some(64 * 1024)).unwrap();
        assert_eq!(
            (o.vcpus, o.memory_mib, o.cpus.clone()),
            (2, 2048, vec![2, 3])
        );
        assert_eq!(o.qemu, PathBuf::from(DEFAULT_QEMU));
        assert!(!o.allow_tcg);
        let small = resolve_on(&Given::default(), &[0], Some(1000)).unwrap();
        assert_eq!(
            (small.vcpus, small.memory_mib, small.cpus),
            (1, 500, vec![0])
        );
        let duet = Given {
            duet: true,
            ..Given::default()
        };
        let d = resolve_on(&duet, &[0, 1], Some(64 * 1024)).unwrap();
        assert_eq!((d.vcpus, d.cpus), (1, vec![0, 1]));
    }

    #[test]
    fn bad_values_are_named() {
        let e = resolve_on(
            &Given {
                cpus: Some(vec![5]),
                ..Given::default()
            },
            &[0, 1],
            None,
        )
        .unwrap_err();
        assert!(e.contains("CPU 5") && e.contains("0-1"), "{e}");
        let e = resolve_on(
            &Given {
                duet: true,
                cpus: Some(vec![1]),
                ..Given::default()
            },
            &[0, 1],
            None,
        )
        .unwrap_err();
        assert!(e.contains("--duet"), "{e}");
        let e = resolve_on(
            &Given {
                vcpus: Some(0),
                ..Given::default()
            },
            &[0, 1],
            None,
        )
        .unwrap_err();
        assert!(e.contains("--vcpus"), "{e}");
        let e = resolve_on(
            &Given {
                memory_mib: Some(16),
                ..Given::default()
            },
            &[0, 1],
            None,
        )
        .unwrap_err();
        assert!(e.contains("--memory"), "{e}");
    }
}
