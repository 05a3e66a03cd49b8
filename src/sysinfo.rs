//! The system fingerprint stored with every result: kernel, CPU, memory, shell, libc, and the
//! patchbench build. Read from `uname(2)`, `/proc` and the build script; never fails (a value
//! that cannot be read is recorded as "unknown").

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Everything about the machine and software that can change a benchmark's score.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct SystemInfo {
    pub hostname: String,
    /// `uname -s` (`Linux`).
    pub os: String,
    /// `uname -r`: the kernel release, the thing a base-vs-patched comparison varies.
    pub kernel_release: String,
    /// `uname -v`: build number and date of the kernel.
    pub kernel_version: String,
    /// `uname -m`.
    pub machine: String,
    pub cpu_model: String,
    /// Online CPUs (`sysconf(_SC_NPROCESSORS_ONLN)`).
    pub cpus: u32,
    pub memory_bytes: u64,
    /// Where `/bin/sh` resolves to (dash and bash give different shell-test scores).
    pub bin_sh: String,
    pub libc: String,
    /// The locale the shell tests ran under.
    pub lang: String,
    /// cpufreq governor of CPU 0, when the kernel exposes one.
    #[serde(default)]
    pub cpufreq_governor: Option<String>,
    pub patchbench_version: String,
    pub patchbench_commit: String,
    pub rustc: String,
    /// `release` or `debug`: a debug build's numbers are not comparable.
    pub build_profile: String,
    /// The noise check taken as the run started (`patchbench check`'s findings and the
    /// sampled activity); absent in older files, imports and commands that do not take it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<crate::noise::NoiseReport>,
    /// Anything else worth keeping (filesystems of directories used, …).
    #[serde(default)]
    pub extra: BTreeMap<String, String>,
}

const UNKNOWN: &str = "unknown";

/// The key in [`SystemInfo::extra`] of a run measured beside another measurement on its
/// machine (`--allow-overlap`): whom it overlapped (`pid 123 (patchbench run), started ...`).
pub const MEASURED_BESIDE: &str = "measured_beside";

impl SystemInfo {
    /// Reads the fingerprint of the machine this process runs on.
    pub fn collect() -> SystemInfo {
        let uts = nix::sys::utsname::uname().ok();
        let field = |f: fn(&nix::sys::utsname::UtsName) -> &std::ffi::OsStr| -> String {
            uts.as_ref()
                .map(|u| f(u).to_string_lossy().into_owned())
                .unwrap_or_else(|| UNKNOWN.to_string())
        };
        SystemInfo {
            hostname: field(|u| u.nodename()),
            os: field(|u| u.sysname()),
            kernel_release: field(|u| u.release()),
            kernel_version: field(|u| u.version()),
            machine: field(|u| u.machine()),
            cpu_model: cpu_model().unwrap_or_else(|| UNKNOWN.to_string()),
            cpus: online_cpus(),
            memory_bytes: memory_bytes().unwrap_or(0),
            bin_sh: std::fs::canonicalize("/bin/sh")
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| UNKNOWN.to_string()),
            libc: libc_version(),
            lang: std::env::var("LC_ALL")
                .ok()
                .filter(|s| !s.is_empty())
                .or_else(|| std::env::var("LANG").ok())
                .unwrap_or_else(|| "C".to_string()),
            cpufreq_governor: std::fs::read_to_string(
                "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            )
            .ok()
            .map(|s| s.trim().to_string()),
            patchbench_version: env!("CARGO_PKG_VERSION").to_string(),
            patchbench_commit: env!("PATCHBENCH_GIT_COMMIT").to_string(),
            rustc: env!("PATCHBENCH_RUSTC").to_string(),
            build_profile: env!("PATCHBENCH_PROFILE").to_string(),
            extra: cpu_extra(),
            noise: None,
        }
    }
}

/// UnixBench's descriptions of the x86 CPU flags it reports (unixbench.md §3.4).
const FLAG_NAMES: &[(&str, &str)] = &[
    ("pae", "Physical Address Ext"),
    ("sep", "SYSENTER/SYSEXIT"),
    ("syscall", "SYSCALL/SYSRET"),
    ("mmx", "MMX"),
    ("mmxext", "AMD MMX"),
    ("cxmmx", "Cyrix MMX"),
    ("xmm", "Streaming SIMD"),
    ("xmm2", "Streaming SIMD-2"),
    ("xmm3", "Streaming SIMD-3"),
    ("ht", "Hyper-Threading"),
    ("ia64", "IA-64 processor"),
    ("lm", "x86-64"),
    ("vmx", "Intel virtualization"),
    ("svm", "AMD virtualization"),
];

/// BogoMIPS and the described CPU flags of the first CPU, and the OS name, for the report.
fn cpu_extra() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Ok(text) = std::fs::read_to_string("/proc/cpuinfo") {
        let value = |key: &str| {
            text.lines()
                .find(|l| {
                    l.split(':')
                        .next()
                        .map(str::trim)
                        .is_some_and(|k| k.eq_ignore_ascii_case(key))
                })
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        };
        if let Some(b) = value("bogomips") {
            out.insert("bogomips".to_string(), b);
        }
        if let Some(flags) = value("flags").or_else(|| value("Features")) {
            let have: Vec<&str> = flags.split_whitespace().collect();
            let described: Vec<&str> = FLAG_NAMES
                .iter()
                .filter(|(f, _)| have.contains(f))
                .map(|(_, d)| *d)
                .collect();
            out.insert("cpu_flags".to_string(), described.join(", "));
        }
    }
    let os = if cfg!(target_os = "linux") {
        "GNU/Linux"
    } else {
        std::env::consts::OS
    };
    out.insert("os_name".to_string(), os.to_string());
    out
}

/// True when process `pid` of this host is gone: no such process, or only its zombie left
/// (it has exited; its parent, or init, has not reaped it yet).
pub fn process_gone(pid: i32) -> bool {
    if matches!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None),
        Err(nix::errno::Errno::ESRCH)
    ) {
        return true;
    }
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let rest = &s[s.rfind(')')? + 1..];
            rest.split_whitespace()
                .next()
                .map(|st| st == "Z" || st == "X")
        })
        .unwrap_or(false)
}

/// This machine's host name (`uname -n`), or `unknown`.
pub fn hostname() -> String {
    nix::sys::utsname::uname()
        .map(|u| u.nodename().to_string_lossy().into_owned())
        .unwrap_or_else(|_| UNKNOWN.to_string())
}

/// Number of online CPUs, at least 1.
pub fn online_cpus() -> u32 {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n < 1 {
        1
    } else {
        n as u32
    }
}

fn cpu_model() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .find(|l| {
            l.starts_with("model name") || l.starts_with("Processor") || l.starts_with("cpu model")
        })
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

fn memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn libc_version() -> String {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: gnu_get_libc_version returns a pointer to a static NUL-terminated string.
        let v = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
        format!("glibc {}", v.to_string_lossy())
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        UNKNOWN.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collect_fills_the_basics() {
        let s = SystemInfo::collect();
        assert!(s.cpus >= 1);
        assert!(!s.kernel_release.is_empty());
        assert!(s.memory_bytes > 0);
        assert_eq!(s.patchbench_version, env!("CARGO_PKG_VERSION"));
    }

    #[test]
    fn a_fingerprint_without_a_noise_report_still_reads() {
        let mut old = serde_json::to_value(SystemInfo::collect()).unwrap();
        assert!(old.get("noise").is_none(), "None is not written");
        old.as_object_mut().unwrap().remove("cpufreq_governor");
        let back: SystemInfo = serde_json::from_value(old).unwrap();
        assert_eq!(back.noise, None);
    }
}
