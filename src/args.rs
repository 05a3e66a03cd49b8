//! Value parsers and path checks for command-line arguments, shared by the commands: seconds,
//! percentages, fractions, sizes and task lists, and the checks that a `--dir` or an output
//! file is usable before anything starts. Each refusal is one line saying what is wrong and how
//! to fix it (exit status 2).

use crate::error::usage;
use std::path::{Path, PathBuf};

/// Parses a positive duration in seconds (fractions allowed).
pub fn parse_duration(s: &str) -> Result<f64, String> {
    let d: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds; give e.g. --duration 2"))?;
    if !d.is_finite() || d <= 0.0 || d > 86400.0 {
        return Err(format!(
            "duration must be between 0 and 86400 seconds, got {s}"
        ));
    }
    Ok(d)
}

/// Like [`parse_duration`], and `0` for none.
pub fn parse_duration_or_zero(s: &str) -> Result<f64, String> {
    if s.trim() == "0" {
        return Ok(0.0);
    }
    parse_duration(s)
}

/// A percentage strictly between 0 and 100 (`1`, `1%`).
pub fn parse_precision(s: &str) -> Result<f64, String> {
    let p: f64 = s
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("{s:?} is not a percentage; give e.g. --precision 1"))?;
    if !(p > 0.0 && p < 100.0) {
        return Err(format!(
            "precision must be between 0 and 100 percent, got {s}"
        ));
    }
    Ok(p)
}

/// A non-negative percentage (`2`, `2%`).
pub fn parse_pct(s: &str) -> Result<f64, String> {
    match s.trim().trim_end_matches('%').parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a percentage; give e.g. 2 or 2%")),
    }
}

/// A sampling time in seconds, 0.05 to 60 (`check --sample`).
pub fn parse_sample_secs(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds; give e.g. --sample 1"))?;
    if !(0.05..=60.0).contains(&v) {
        return Err(format!(
            "--sample must be between 0.05 and 60 seconds, got {s}"
        ));
    }
    Ok(v)
}

/// A fraction strictly between 0 and 1.
pub fn parse_fraction(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(format!("{s:?} must be between 0 and 1 (e.g. 0.05)")),
    }
}

/// A size in KiB: `1024`, `1024k`, `1M`.
pub fn parse_kib(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('M' | 'm') => (&t[..t.len() - 1], 1024),
        Some('K' | 'k') => (&t[..t.len() - 1], 1),
        _ => (t, 1),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a size; give KiB like 1024, or 1M"))?;
    n.checked_mul(mult)
        .filter(|&v| v <= 1 << 30)
        .ok_or_else(|| format!("{s:?} is too large (at most 1024G)"))
}

/// The most tasks one harness point may have (will-it-scale's limit).
pub const MAX_TASKS: usize = 2048;

/// A parsed `--tasks` list, in the order given, without duplicates.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskList(pub Vec<usize>);

/// Parses `1,2,4`, `1-N`, `2-4,8`; N is the number of online CPUs.
pub fn parse_task_list(s: &str) -> Result<TaskList, String> {
    let cpus = crate::sysinfo::online_cpus().max(1) as usize;
    let number = |t: &str| -> Result<usize, String> {
        let t = t.trim();
        let n = if t.eq_ignore_ascii_case("n") {
            cpus
        } else {
            t.parse()
                .map_err(|_| format!("{t:?} is not a task count; give e.g. 1,2,4 or 1-N"))?
        };
        if n == 0 {
            return Err("task counts must be at least 1 (e.g. --tasks 1,2)".into());
        }
        if n > MAX_TASKS {
            return Err(format!("at most {MAX_TASKS} tasks per point, got {n}"));
        }
        Ok(n)
    };
    let mut out = Vec::new();
    for part in s.split(',').filter(|p| !p.trim().is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => {
                let n = number(part)?;
                (n, n)
            }
        };
        if lo > hi {
            return Err(format!("range {part:?} runs backwards; write it low-high"));
        }
        for n in lo..=hi {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    if out.is_empty() {
        return Err("no task counts given; e.g. --tasks 1,2".into());
    }
    Ok(TaskList(out))
}

/// Rejects a `--dir` that is missing, not a directory, a symlink or not writable.
pub fn check_dir(dir: &Path) -> anyhow::Result<()> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(_) => {
            return usage(format!(
                "--dir {}: no such directory; create it or choose another with --dir",
                dir.display()
            ))
        }
    };
    if meta.file_type().is_symlink() {
        return usage(format!(
            "--dir {}: is a symbolic link; give the real directory it points to",
            dir.display()
        ));
    }
    if !meta.is_dir() {
        return usage(format!("--dir {}: not a directory", dir.display()));
    }
    if nix::unistd::access(
        dir,
        nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK,
    )
    .is_err()
    {
        return usage(format!(
            "--dir {}: not writable by this user; choose a writable directory with --dir",
            dir.display()
        ));
    }
    Ok(())
}

/// Rejects an output path whose directory is missing or not writable, or that names a
/// directory.
pub fn check_output(what: &str, path: &Path) -> anyhow::Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if path.is_dir() {
        return usage(format!(
            "{what} {}: is a directory; give a file name",
            path.display()
        ));
    }
    if !parent.is_dir() {
        return usage(format!(
            "{what} {}: directory {} does not exist; create it or write elsewhere",
            path.display(),
            parent.display()
        ));
    }
    let w = nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK;
    if nix::unistd::access(&parent, w).is_err() {
        return usage(format!(
            "{what} {}: directory {} is not writable; write elsewhere",
            path.display(),
            parent.display()
        ));
    }
    if path.exists() && nix::unistd::access(path, nix::unistd::AccessFlags::W_OK).is_err() {
        return usage(format!(
            "{what} {}: file is not writable; write elsewhere",
            path.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_kib() {
        assert_eq!(parse_kib("1M"), Ok(1024));
        assert_eq!(parse_kib("10M"), Ok(10240));
        assert_eq!(parse_kib("16"), Ok(16));
        assert_eq!(parse_kib("16k"), Ok(16));
        assert!(parse_kib("x").is_err());
    }

    #[test]
    fn task_lists_expand_ranges_in_order() {
        assert_eq!(parse_task_list("1,2,4").unwrap().0, vec![1, 2, 4]);
        assert_eq!(parse_task_list("2-4,8,3").unwrap().0, vec![2, 3, 4, 8]);
        let n = crate::sysinfo::online_cpus().max(1) as usize;
        assert_eq!(
            parse_task_list("1-N").unwrap().0,
            (1..=n).collect::<Vec<_>>()
        );
        assert!(parse_task_list("0").unwrap_err().contains("at least 1"));
        assert!(parse_task_list("4-2").is_err());
        assert!(parse_task_list("x").is_err());
        assert!(parse_task_list("5000").is_err());
    }

    #[test]
    fn sample_times_are_between_a_twentieth_and_sixty_seconds() {
        assert_eq!(parse_sample_secs("0.2"), Ok(0.2));
        assert_eq!(parse_sample_secs(" 60 "), Ok(60.0));
        assert!(parse_sample_secs("0")
            .unwrap_err()
            .contains("between 0.05 and 60"));
        assert!(parse_sample_secs("61").is_err());
        assert!(parse_sample_secs("soon")
            .unwrap_err()
            .contains("--sample 1"));
    }

    #[test]
    fn durations_are_positive_seconds() {
        assert_eq!(parse_duration("2"), Ok(2.0));
        assert!(parse_duration("0").is_err());
        assert_eq!(parse_duration_or_zero("0"), Ok(0.0));
        assert!(parse_duration("90000").is_err());
        assert!(parse_duration("soon").unwrap_err().contains("not a number"));
    }
}
