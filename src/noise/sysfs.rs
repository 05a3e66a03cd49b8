//! Reading `/proc` and `/sys` for the noise probes: a [`Root`] that is `/` on a real system and
//! a directory of sample files in tests, so every probe runs the same code against both; and
//! the kernel's CPU-list format (`0-3,8-11`) used by `isolated`, `nohz_full`, `online` and the
//! topology files.

use std::path::{Path, PathBuf};

/// Where the probes find `/proc` and `/sys`.
#[derive(Debug, Clone)]
pub struct Root(PathBuf);

impl Root {
    /// The running system.
    pub fn system() -> Root {
        Root(PathBuf::from("/"))
    }

    /// A directory holding files at the paths the kernel uses (`<dir>/proc/stat`, …).
    pub fn at(dir: &Path) -> Root {
        Root(dir.to_path_buf())
    }

    /// Whether this is the running system (probes that ask the kernel directly, such as CPU
    /// affinity, only run then).
    pub fn is_system(&self) -> bool {
        self.0 == Path::new("/")
    }

    /// The real path of a kernel path such as `/proc/stat`.
    pub fn path(&self, kernel_path: &str) -> PathBuf {
        self.0.join(kernel_path.trim_start_matches('/'))
    }

    /// The file's text, or None when it is missing or unreadable (not exposed on this
    /// kernel, or not readable by this user).
    pub fn read(&self, kernel_path: &str) -> Option<String> {
        std::fs::read_to_string(self.path(kernel_path)).ok()
    }

    /// The file's text, trimmed.
    pub fn read_trimmed(&self, kernel_path: &str) -> Option<String> {
        self.read(kernel_path).map(|s| s.trim().to_string())
    }

    /// Whether the path exists.
    pub fn exists(&self, kernel_path: &str) -> bool {
        self.path(kernel_path).exists()
    }

    /// Names of the entries of a directory, sorted; empty when it is missing.
    pub fn list(&self, kernel_dir: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(kernel_dir))
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    /// The numbers N of `/sys/devices/system/cpu/cpuN` directories, ascending.
    pub fn cpu_dirs(&self) -> Vec<usize> {
        let mut cpus: Vec<usize> = self
            .list("/sys/devices/system/cpu")
            .iter()
            .filter_map(|n| n.strip_prefix("cpu")?.parse().ok())
            .collect();
        cpus.sort_unstable();
        cpus
    }
}

/// Parses a kernel CPU list (`0-3,8,10-11`; empty or `(null)` for none). Items that are not
/// CPU numbers, such as isolcpus' `domain,managed_irq` flags, are skipped; `a-b:g/s` groups
/// (used `g` of every `s`) are expanded.
pub fn parse_cpu_list(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for item in text.trim().split(',').map(str::trim) {
        let (range, groups) = match item.split_once(':') {
            Some((r, g)) => (r, g.split_once('/')),
            None => (item, None),
        };
        let (lo, hi) = match range.split_once('-') {
            Some((a, b)) => (a.parse::<usize>(), b.parse::<usize>()),
            None => (range.parse::<usize>(), range.parse::<usize>()),
        };
        let (Ok(lo), Ok(hi)) = (lo, hi) else { continue };
        if hi < lo || hi - lo > 1 << 16 {
            continue;
        }
        let (used, stride) = match groups {
            Some((g, s)) => match (g.parse::<usize>(), s.parse::<usize>()) {
                (Ok(g), Ok(s)) if s > 0 && g > 0 => (g, s),
                _ => continue,
            },
            None => (1, 1),
        };
        for cpu in lo..=hi {
            if (cpu - lo) % stride < used {
                out.push(cpu);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Writes CPUs back in the kernel's compact form: `0-3,8`.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if end == start {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// `CPU 3` or `CPUs 0-3,8`.
pub fn cpus_phrase(cpus: &[usize]) -> String {
    let s = if cpus.len() == 1 { "" } else { "s" };
    format!("CPU{s} {}", format_cpu_list(cpus))
}

/// The value of `key=` on a kernel command line (the last one wins, as in the kernel).
pub fn cmdline_value<'a>(cmdline: &'a str, key: &str) -> Option<&'a str> {
    cmdline
        .split_whitespace()
        .take_while(|w| *w != "--")
        .filter_map(|w| w.strip_prefix(key)?.strip_prefix('='))
        .last()
}

/// Test aid: a temporary directory holding the given kernel files, and a [`Root`] on it.
#[cfg(test)]
pub fn sample_root(files: &[(&str, &str)]) -> (tempfile::TempDir, Root) {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, text) in files {
        let p = dir.path().join(path.trim_start_matches('/'));
        std::fs::create_dir_all(p.parent().expect("a kernel path has a parent")).expect("mkdir");
        std::fs::write(&p, text).expect("write sample");
    }
    let root = Root::at(dir.path());
    (dir, root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_in_every_kernel_form() {
        assert_eq!(parse_cpu_list("0-1\n"), vec![0, 1]);
        assert_eq!(parse_cpu_list("0-3,8,10-11"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list(""), Vec::<usize>::new());
        assert_eq!(parse_cpu_list("(null)\n"), Vec::<usize>::new());
        assert_eq!(parse_cpu_list("domain,managed_irq,2-3"), vec![2, 3]);
        assert_eq!(parse_cpu_list("0-7:2/4"), vec![0, 1, 4, 5]);
        assert_eq!(parse_cpu_list("5-2"), Vec::<usize>::new());
    }

    #[test]
    fn cpu_lists_format_compactly() {
        assert_eq!(format_cpu_list(&[3, 0, 1, 2, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(format_cpu_list(&[5]), "5");
        assert_eq!(format_cpu_list(&[]), "");
        assert_eq!(cpus_phrase(&[2]), "CPU 2");
        assert_eq!(cpus_phrase(&[0, 1]), "CPUs 0-1");
    }

    #[test]
    fn cmdline_values_stop_at_the_init_arguments() {
        let line = "BOOT_IMAGE=/vmlinuz isolcpus=nohz,2-3 quiet nohz_full=2-3 -- isolcpus=9";
        assert_eq!(cmdline_value(line, "isolcpus"), Some("nohz,2-3"));
        assert_eq!(cmdline_value(line, "nohz_full"), Some("2-3"));
        assert_eq!(cmdline_value(line, "rcu_nocbs"), None);
        assert_eq!(cmdline_value("isolcpusx=1", "isolcpus"), None);
    }

    #[test]
    fn missing_files_read_as_none() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::at(dir.path());
        assert_eq!(root.read("/proc/stat"), None);
        assert!(root.list("/sys/devices/system/cpu").is_empty());
        assert!(root.cpu_dirs().is_empty());
        assert!(!root.is_system());
        assert!(Root::system().is_system());
    }
}
