//! Memory probes: swap in use and swapping during the sample, memory available, transparent
//! huge pages, and address-space layout randomisation.

use super::sysfs::Root;
use super::{Finding, Kind};

/// A `/proc/meminfo` value in bytes (the file says kB).
pub fn meminfo_bytes(meminfo: &str, key: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.split(':').next() == Some(key))?;
    let kb: u64 = line
        .split(':')
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// Pages swapped in and out since boot (`pswpin`, `pswpout` of `/proc/vmstat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwapCounts {
    pub pages_in: u64,
    pub pages_out: u64,
}

pub fn parse_vmstat_swaps(vmstat: &str) -> Option<SwapCounts> {
    let get = |k: &str| -> Option<u64> {
        vmstat.lines().find_map(|l| {
            let (key, v) = l.split_once(' ')?;
            (key == k).then(|| v.trim().parse().ok())?
        })
    };
    Some(SwapCounts {
        pages_in: get("pswpin")?,
        pages_out: get("pswpout")?,
    })
}

pub fn read_swaps(root: &Root) -> Option<SwapCounts> {
    parse_vmstat_swaps(&root.read("/proc/vmstat")?)
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / (1u64 << 20) as f64)
}

/// Swapping during the sample is a warning; swap merely in use is shown.
pub fn swap(root: &Root, before: Option<SwapCounts>, after: Option<SwapCounts>) -> Finding {
    let (id, source) = ("swap", "swap");
    let meminfo = root.read("/proc/meminfo").unwrap_or_default();
    let (Some(total), Some(free)) = (
        meminfo_bytes(&meminfo, "SwapTotal"),
        meminfo_bytes(&meminfo, "SwapFree"),
    ) else {
        return Finding::not_exposed(id, source, Kind::Activity, "no Swap lines in /proc/meminfo");
    };
    let used = if total == 0 {
        "no swap configured".to_string()
    } else {
        format!(
            "{} of {} in use",
            mib(total.saturating_sub(free)),
            mib(total)
        )
    };
    match (before, after) {
        (Some(b), Some(a)) => {
            let pin = a.pages_in.saturating_sub(b.pages_in);
            let pout = a.pages_out.saturating_sub(b.pages_out);
            if pin + pout > 0 {
                Finding::warn(
                    id,
                    source,
                    Kind::Activity,
                    format!("{used}; {pin} pages swapped in and {pout} out during the sample"),
                    "free memory (stop memory-hungry programs) before measuring",
                )
            } else {
                Finding::ok(
                    id,
                    source,
                    Kind::Activity,
                    format!("{used}; no swapping during the sample"),
                )
            }
        }
        _ => Finding::ok(
            id,
            source,
            Kind::Activity,
            format!("{used}; swapping not measured (no pswpin/pswpout in /proc/vmstat)"),
        ),
    }
}

/// Less than a tenth of memory available: the run will reclaim page cache or swap.
pub fn available(root: &Root) -> Finding {
    let (id, source) = ("memory", "available memory");
    let meminfo = root.read("/proc/meminfo").unwrap_or_default();
    let (Some(total), Some(avail)) = (
        meminfo_bytes(&meminfo, "MemTotal"),
        meminfo_bytes(&meminfo, "MemAvailable"),
    ) else {
        return Finding::not_exposed(
            id,
            source,
            Kind::Activity,
            "no MemTotal/MemAvailable in /proc/meminfo",
        );
    };
    let value = format!("{} of {}", gib(avail), gib(total));
    if avail * 10 < total {
        Finding::warn(
            id,
            source,
            Kind::Activity,
            format!("{value}: the run will reclaim memory"),
            "stop memory-hungry programs before measuring",
        )
    } else {
        Finding::ok(id, source, Kind::Activity, value)
    }
}

/// The bracketed choice of a sysfs selector file: `always [madvise] never` → `madvise`.
pub fn selected(text: &str) -> Option<&str> {
    let start = text.find('[')? + 1;
    let end = start + text.get(start..)?.find(']')?;
    text.get(start..end)
}

/// Transparent huge pages: the mode is recorded; `defrag=always` makes page faults stall on
/// compaction, which shows as outliers.
pub fn thp(root: &Root) -> Finding {
    let (id, source) = ("thp", "transparent huge pages");
    let base = "/sys/kernel/mm/transparent_hugepage";
    let Some(enabled) = root.read(&format!("{base}/enabled")) else {
        return Finding::not_exposed(
            id,
            source,
            Kind::Setting,
            "no /sys/kernel/mm/transparent_hugepage (kernel without THP)",
        );
    };
    let enabled = selected(&enabled).unwrap_or("unknown").to_string();
    let defrag = root
        .read(&format!("{base}/defrag"))
        .and_then(|d| selected(&d).map(str::to_string));
    let value = match &defrag {
        Some(d) => format!("enabled={enabled}, defrag={d}"),
        None => format!("enabled={enabled}"),
    };
    if enabled != "never" && defrag.as_deref() == Some("always") {
        Finding::warn(
            id,
            source,
            Kind::Setting,
            format!("{value}: page faults may stall on compaction"),
            "as root: echo madvise > /sys/kernel/mm/transparent_hugepage/defrag",
        )
    } else {
        Finding::ok(id, source, Kind::Setting, value)
    }
}

/// ASLR. With the run as the unit, randomisation is what we want: each run gets its own
/// layout, so a lucky layout averages out instead of looking like a kernel effect.
pub fn aslr(root: &Root) -> Finding {
    let (id, source) = ("aslr", "ASLR");
    match root
        .read_trimmed("/proc/sys/kernel/randomize_va_space")
        .as_deref()
    {
        Some("2") => Finding::ok(id, source, Kind::Setting, "full randomization (2)"),
        Some("1") => Finding::ok(
            id,
            source,
            Kind::Setting,
            "stack, mmap and vDSO randomized, heap not (1)",
        ),
        Some("0") => Finding::warn(
            id,
            source,
            Kind::Setting,
            "off (0): every run gets the same memory layout, so a layout effect looks like \
             a kernel effect",
            "as root: echo 2 > /proc/sys/kernel/randomize_va_space",
        ),
        Some(other) => Finding::ok(
            id,
            source,
            Kind::Setting,
            format!("randomize_va_space={other}"),
        ),
        None => Finding::not_exposed(
            id,
            source,
            Kind::Setting,
            "no /proc/sys/kernel/randomize_va_space",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::sysfs::sample_root;
    use crate::noise::Status;

    /// The head of this project's VM's /proc/meminfo.
    const MEMINFO: &str = "\
MemTotal:       24683584 kB
MemFree:        12612236 kB
MemAvailable:   23356420 kB
Buffers:           35832 kB
Cached:         10708932 kB
SwapCached:            0 kB
SwapTotal:             0 kB
SwapFree:              0 kB
Zswap:                 0 kB
";
    const VMSTAT: &str =
        "nr_free_pages 1860623\nnr_zone_inactive_anon 3161\npswpin 0\npswpout 0\npgfault 991\n";

    #[test]
    fn this_vm_has_no_swap_and_plenty_of_memory() {
        let (_d, root) = sample_root(&[
            ("/proc/meminfo", MEMINFO),
            ("/proc/vmstat", VMSTAT),
            (
                "/sys/kernel/mm/transparent_hugepage/enabled",
                "always [madvise] never\n",
            ),
            (
                "/sys/kernel/mm/transparent_hugepage/defrag",
                "always defer defer+madvise [madvise] never\n",
            ),
            ("/proc/sys/kernel/randomize_va_space", "2\n"),
        ]);
        let s = read_swaps(&root);
        assert_eq!(
            s,
            Some(SwapCounts {
                pages_in: 0,
                pages_out: 0
            })
        );
        let f = swap(&root, s, s);
        assert_eq!(
            (f.status, f.value.as_str()),
            (
                Status::Ok,
                "no swap configured; no swapping during the sample"
            )
        );
        let a = available(&root);
        assert_eq!(
            (a.status, a.value.as_str()),
            (Status::Ok, "22.3 GiB of 23.5 GiB")
        );
        let t = thp(&root);
        assert_eq!(
            (t.status, t.value.as_str()),
            (Status::Ok, "enabled=madvise, defrag=madvise")
        );
        assert_eq!(aslr(&root).value, "full randomization (2)");
    }

    #[test]
    fn swapping_low_memory_thp_defrag_and_no_aslr_warn() {
        let meminfo = "MemTotal: 8000000 kB\nMemAvailable: 500000 kB\nSwapTotal: 2097148 kB\nSwapFree: 1048574 kB\n";
        let (_d, root) = sample_root(&[
            ("/proc/meminfo", meminfo),
            (
                "/sys/kernel/mm/transparent_hugepage/enabled",
                "[always] madvise never\n",
            ),
            (
                "/sys/kernel/mm/transparent_hugepage/defrag",
                "[always] defer defer+madvise madvise never\n",
            ),
            ("/proc/sys/kernel/randomize_va_space", "0\n"),
        ]);
        let b = SwapCounts {
            pages_in: 10,
            pages_out: 20,
        };
        let a = SwapCounts {
            pages_in: 14,
            pages_out: 20,
        };
        let f = swap(&root, Some(b), Some(a));
        assert_eq!(f.status, Status::Warn);
        assert_eq!(
            f.value,
            "1024 MiB of 2048 MiB in use; 4 pages swapped in and 0 out during the sample"
        );
        assert_eq!(available(&root).status, Status::Warn);
        assert_eq!(thp(&root).status, Status::Warn);
        assert_eq!(aslr(&root).status, Status::Warn);
    }

    #[test]
    fn missing_files_are_not_exposed() {
        let (_d, root) = sample_root(&[]);
        for f in [
            swap(&root, None, None),
            available(&root),
            thp(&root),
            aslr(&root),
        ] {
            assert_eq!(f.status, Status::NotExposed, "{f:?}");
        }
        assert_eq!(selected("no brackets"), None);
    }
}
