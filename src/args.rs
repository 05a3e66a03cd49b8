//! Value parsers and path checks for command-line arguments, shared by the commands: seconds,
//! percentages, fractions, sizes and task lists, and the checks that a `--dir` or an output
//! file is usable before anything starts. Each refusal is one line saying what is wrong and how
//! to fix it (exit status 2).

use crate::error::usage;
use std::path::{Component, Path, PathBuf};

/// The shortest duration accepted: 0.1 s, the resolution of the times UnixBench's report prints
/// (`%.1f`; shorter passes show as "0.0 s"). Much shorter passes measure start-up instead of
/// the workload: with the debug build on a loaded 2-CPU machine, Process Creation gave 255 lps
/// at 0.0001 s against 1,751 at 0.1 s and 2,107 at 1 s.
pub const MIN_DURATION: f64 = 0.1;
/// The longest duration accepted: one day.
pub const MAX_DURATION: f64 = 86400.0;

/// Parses a duration in seconds (fractions allowed) from [`MIN_DURATION`] to [`MAX_DURATION`].
pub fn parse_duration(s: &str) -> Result<f64, String> {
    let d: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds; give e.g. --duration 2"))?;
    if !(MIN_DURATION..=MAX_DURATION).contains(&d) {
        return Err(format!(
            "a duration must be from {MIN_DURATION} to {MAX_DURATION} seconds (shorter \
             measures start-up, not the workload), got {}",
            s.trim()
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

/// The smallest and largest half-width `campaign start --until` takes, in %: below 0.01 % no
/// machine's spread lets a campaign get (it would plan millions of rounds), above 50 % the
/// interval says nothing.
pub const UNTIL_PCT: (f64, f64) = (0.01, 50.0);

/// `--until PCT` of a campaign: a percentage from 0.01 to 50.
pub fn parse_until(s: &str) -> Result<f64, String> {
    let p: f64 = s
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("{s:?} is not a percentage; give e.g. --until 1"))?;
    let (lo, hi) = UNTIL_PCT;
    if !(lo..=hi).contains(&p) {
        return Err(format!(
            "give a half-width from {lo} to {hi} percent (e.g. --until 1; below {lo} % no \
             machine is quiet enough to get there in any number of rounds)"
        ));
    }
    Ok(p)
}

/// The most characters a label may have.
pub const MAX_LABEL_CHARS: usize = 200;

/// Why `label` cannot name runs, or None when it can: empty, longer than
/// [`MAX_LABEL_CHARS`], with a control character (a newline, an escape sequence: a label is
/// printed in tables and reports, where it would forge lines or drive the terminal), or with a
/// comma (`compare` separates runs with commas).
pub fn label_problem(label: &str) -> Option<String> {
    let shown = crate::safe_text::field(label);
    if label.trim().is_empty() {
        return Some("a label must not be empty; give e.g. --label base".into());
    }
    if label.chars().count() > MAX_LABEL_CHARS {
        return Some(format!(
            "label {shown} is longer than {MAX_LABEL_CHARS} characters; give a shorter one"
        ));
    }
    if label.chars().any(crate::safe_text::is_unsafe) {
        return Some(format!(
            "label {shown} contains a control character (a newline, a tab, an escape \
             sequence); labels are printed in tables and reports, so give plain text"
        ));
    }
    if label.contains(',') {
        return Some(format!(
            "label {shown} contains a comma, which `patchbench compare` reads as a list of \
             runs; give e.g. base-v2"
        ));
    }
    None
}

/// A lab tag or box name: 1-64 characters of letters, digits, `.`, `_`, `-`, not starting with
/// `#` (a free place of a lab campaign is written `#N`) nor `-`.
pub fn parse_tag(s: &str) -> Result<String, String> {
    let ok = !s.is_empty()
        && s.len() <= 64
        && !s.starts_with('-')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(s.to_string())
    } else {
        Err(format!(
            "{} is not a tag or box name: use 1-64 letters, digits, '.', '_' or '-' (e.g. \
             rack-2)",
            crate::safe_text::field_cut(&format!("{s:?}"), 80)
        ))
    }
}

/// A label for runs (`--label`, a campaign's NAME): see [`label_problem`] for what is
/// refused.
pub fn parse_label(s: &str) -> Result<String, String> {
    match label_problem(s) {
        Some(why) => Err(why),
        None => Ok(s.to_string()),
    }
}

/// The largest noise band or regression limit: a drop of 100 % is a drop to zero, so a band
/// or limit beyond it means nothing (and `1e308` printed 300-digit numbers).
pub const MAX_BAND_PCT: f64 = 100.0;
/// The largest change a plan is asked for (a tenfold improvement).
pub const MAX_PLAN_PCT: f64 = 1000.0;

/// A percentage from 0 to `max` (`2`, `2%`), shown escaped and cut when refused.
fn pct_up_to(s: &str, max: f64) -> Result<f64, String> {
    match s.trim().trim_end_matches('%').parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=max).contains(&v) => Ok(v),
        Ok(v) if v.is_finite() && v > max => Err(format!(
            "{} is above {max}%; give a percentage from 0 to {max}, e.g. 2",
            crate::safe_text::field(s.trim())
        )),
        _ => Err(format!(
            "{} is not a percentage; give e.g. 2 or 2%",
            crate::safe_text::field(&format!("{s:?}"))
        )),
    }
}

/// A percentage from 0 to [`MAX_BAND_PCT`] (`2`, `2%`): a noise band or a regression limit.
pub fn parse_pct(s: &str) -> Result<f64, String> {
    pct_up_to(s, MAX_BAND_PCT)
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

/// A percentage above 0 and at most [`MAX_PLAN_PCT`] (`1`, `2%`): a change to plan for.
pub fn parse_positive_pct(s: &str) -> Result<f64, String> {
    match pct_up_to(s, MAX_PLAN_PCT)? {
        v if v > 0.0 => Ok(v),
        _ => Err(format!(
            "{}: give a change above 0, e.g. 1 or 2%",
            crate::safe_text::field(&format!("{s:?}"))
        )),
    }
}

/// A fraction strictly between 0 and 1.
pub fn parse_fraction(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(format!("{s:?} must be between 0 and 1 (e.g. 0.05)")),
    }
}

/// A size in KiB: `1024`, `1024k`, `1M`, read as an AIM workfile's FILESIZE/POOLSIZE lines
/// are (the one parser of both).
pub fn parse_kib(s: &str) -> Result<u64, String> {
    crate::aim7::workfile::parse_kib(s)
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

/// Resolves a `--dir` to the real directory to work in, and checks that this user may create
/// files there. Refuses a path that is missing, not a directory, or itself a symbolic link
/// (also written as `link/` or `link/.`); links among its parent directories (a home reached
/// through a link) are resolved. Every message names the real directory.
#[must_use = "work in the real directory it returns"]
pub fn check_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    let real = check_real_dir(dir)?;
    if nix::unistd::access(
        &real,
        nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK,
    )
    .is_err()
    {
        return usage(format!(
            "--dir {}: not writable by this user; choose a writable directory with --dir",
            real.display()
        ));
    }
    Ok(real)
}

/// Resolves a `--dir` to its real path (every symbolic link among its parents followed, `.`
/// and `..` resolved). Refuses a path that is missing or not a directory, and one whose last
/// component is itself a symbolic link, however it is written (`link`, `link/`, `link/.`): the
/// message gives the real directory to name instead.
#[must_use = "work in the real directory it returns"]
pub fn check_real_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    let shown = dir.display();
    let real = match std::fs::canonicalize(dir) {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return usage(format!(
                "--dir {shown}: no such directory; create it or choose another with --dir"
            ))
        }
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
            return usage(format!("--dir {shown}: not a directory"))
        }
        Err(e) => {
            return usage(format!(
                "--dir {shown}: cannot be looked up ({e}); choose another with --dir"
            ))
        }
    };
    if !real.is_dir() {
        return usage(format!("--dir {}: not a directory", real.display()));
    }
    // `components()` drops trailing slashes and `.`, so `link/.` ends in `link`; a symlink
    // check on the rebuilt path does not follow that last link.
    let last_is_name = matches!(dir.components().next_back(), Some(Component::Normal(_)));
    let named: PathBuf = dir.components().collect();
    if last_is_name && std::fs::symlink_metadata(&named).is_ok_and(|m| m.file_type().is_symlink()) {
        return usage(format!(
            "--dir {shown}: is a symbolic link; give the real directory: --dir {}",
            real.display()
        ));
    }
    Ok(real)
}

/// Checks an output path before any work, as the writer will decide it
/// (`crate::record::output_file::target`): a regular or new file (replaced atomically; a
/// symbolic link is followed), a FIFO or character device (written in place), or `-`
/// (standard output). A directory, a block device, anything else, or a path that cannot be
/// written is refused with one line.
pub fn check_output(what: &str, path: &Path) -> anyhow::Result<()> {
    crate::record::output_file::target(what, path).map(|_| ())
}

/// Kernel interface filesystems: no storage, nowhere to put a workload's files.
const VIRTUAL_FS: &[&str] = &[
    "proc",
    "sysfs",
    "cgroup",
    "cgroup2",
    "debugfs",
    "tracefs",
    "securityfs",
    "pstore",
    "bpf",
    "configfs",
    "efivarfs",
    "selinuxfs",
    "fusectl",
    "binfmt_misc",
    "devpts",
    "mqueue",
];

/// Rejects a --dir that is unusable: missing, itself a symlink, read-only, a kernel interface
/// such as /proc, or full. Returns the real directory to work in (links among its parents
/// resolved) and its filesystem.
pub fn check_work_dir(dir: &Path) -> anyhow::Result<(PathBuf, crate::fsinfo::FsInfo)> {
    let dir = check_real_dir(dir)?;
    let info = crate::fsinfo::collect(&dir);
    if VIRTUAL_FS.contains(&info.fs_type.as_str()) {
        return usage(format!(
            "--dir {}: this is a {} filesystem, the kernel's interface, not storage for files; \
             choose a directory on a disk or tmpfs with --dir",
            dir.display(),
            info.fs_type
        ));
    }
    if info.read_only {
        return usage(format!(
            "--dir {}: the filesystem is mounted read-only; choose a writable directory",
            dir.display()
        ));
    }
    let dir = check_dir(&dir)?;
    if let Ok(v) = nix::sys::statvfs::statvfs(&dir) {
        // A filesystem without a size (ramfs) never runs out; only a sized one can be full.
        let no_inodes = v.files() > 0 && v.files_available() == 0;
        if (v.blocks() > 0 && v.blocks_available() == 0) || no_inodes {
            return usage(format!(
                "--dir {}: the filesystem is full (no free {}); free some space or choose another --dir",
                dir.display(),
                if no_inodes { "inodes" } else { "blocks" }
            ));
        }
    }
    Ok((dir, info))
}

/// `3600`, `90s`, `90m`, `8h`, `2d` as seconds.
pub fn parse_span(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('s') => (&t[..t.len() - 1], 1.0),
        Some('m') => (&t[..t.len() - 1], 60.0),
        Some('h') => (&t[..t.len() - 1], 3600.0),
        Some('d') => (&t[..t.len() - 1], 86400.0),
        _ => (t, 1.0),
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v * mult <= 366.0 * 86400.0 => Ok(v * mult),
        _ => Err(format!(
            "{s:?} is not a time span; give seconds or a number with s, m, h or d (e.g. 8h)"
        )),
    }
}

/// `ext4:1G` as a campaign's scratch file system.
pub fn parse_scratch(s: &str) -> Result<crate::record::campaign::spec::Scratch, String> {
    let (fs, size) = s
        .split_once(':')
        .ok_or_else(|| format!("{s:?}: give FS:SIZE, e.g. ext4:1G"))?;
    if fs != "ext4" {
        return Err(format!(
            "scratch file system {fs:?} is not supported; use ext4 (e.g. ext4:1G)"
        ));
    }
    let kib = crate::args::parse_kib(size)?;
    if !(16 * 1024..=1 << 30).contains(&kib) {
        return Err(format!(
            "a scratch file system must be from 16M to 1T, got {size}"
        ));
    }
    Ok(crate::record::campaign::spec::Scratch {
        fs: fs.to_string(),
        bytes: kib * 1024,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_and_scratch_parse() {
        assert_eq!(parse_span("90m"), Ok(5400.0));
        assert_eq!(parse_span("8h"), Ok(28800.0));
        assert_eq!(parse_span("3600"), Ok(3600.0));
        assert!(parse_span("soon").is_err() && parse_span("-1h").is_err());
        let s = parse_scratch("ext4:64M").unwrap();
        assert_eq!(s.bytes, 64 << 20);
        assert!(parse_scratch("xfs:1G").is_err() && parse_scratch("ext4").is_err());
        assert!(parse_scratch("ext4:1k").is_err());
    }

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
    fn a_dir_that_is_a_link_is_refused_and_linked_parents_are_resolved() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        std::fs::create_dir_all(real.join("sub")).unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let canonical = std::fs::canonicalize(&real).unwrap();
        for spelling in ["link", "link/", "link/.", "link/./"] {
            let e = check_dir(&tmp.path().join(spelling))
                .unwrap_err()
                .to_string();
            assert!(e.contains("is a symbolic link"), "{spelling}: {e}");
            assert!(
                e.contains(&canonical.display().to_string()),
                "{spelling}: {e}"
            );
        }
        // A link among the parents is followed: the real path is what the run works in.
        assert_eq!(check_dir(&link.join("sub")).unwrap(), canonical.join("sub"));
        assert_eq!(
            check_dir(&link.join("sub/")).unwrap(),
            canonical.join("sub")
        );
        assert_eq!(check_dir(&link.join("sub/..")).unwrap(), canonical);
        assert_eq!(check_dir(&real).unwrap(), canonical);
        let e = check_dir(&tmp.path().join("none")).unwrap_err().to_string();
        assert!(e.contains("no such directory"), "{e}");
        std::fs::write(tmp.path().join("file"), "").unwrap();
        for f in ["file", "file/"] {
            let e = check_dir(&tmp.path().join(f)).unwrap_err().to_string();
            assert!(e.contains("not a directory"), "{f}: {e}");
        }
    }

    #[test]
    fn percentages_are_bounded() {
        assert_eq!(parse_pct("1"), Ok(1.0));
        assert_eq!(parse_pct("100%"), Ok(100.0));
        assert_eq!(parse_pct("0"), Ok(0.0));
        let e = parse_pct("1e308").unwrap_err();
        assert!(e.contains("above 100%"), "{e}");
        assert!(e.len() < 100, "{e}");
        assert!(parse_pct("-1").is_err());
        assert!(parse_pct("inf").is_err());
        assert!(parse_pct("nan").is_err());
        assert_eq!(parse_positive_pct("200"), Ok(200.0));
        assert!(parse_positive_pct("1e308")
            .unwrap_err()
            .contains("above 1000%"));
        assert!(parse_positive_pct("0").is_err());
    }

    #[test]
    fn labels_with_control_characters_or_commas_are_refused() {
        assert_eq!(parse_label("base"), Ok("base".to_string()));
        assert_eq!(
            parse_label("patched v2 (rc1)"),
            Ok("patched v2 (rc1)".into())
        );
        let forged = parse_label("base\nverdict: everything improved +50%").unwrap_err();
        assert!(forged.contains("control character"), "{forged}");
        assert!(forged.contains("base\\nverdict"), "shown escaped: {forged}");
        assert!(!forged.contains('\n'));
        for bad in ["\x1b[2J", "a\tb", "a\rb", "x\u{202e}y", "\x7f"] {
            assert!(parse_label(bad).is_err(), "{bad:?}");
        }
        assert!(parse_label("a,b").unwrap_err().contains("comma"));
        assert!(parse_label("").is_err());
        assert!(parse_label("  ").is_err());
        assert!(parse_label(&"l".repeat(MAX_LABEL_CHARS)).is_ok());
        let long = parse_label(&"l".repeat(100_000)).unwrap_err();
        assert!(long.chars().count() < 400, "the refusal is short: {long}");
    }

    #[test]
    fn durations_are_positive_seconds() {
        assert_eq!(parse_duration("2"), Ok(2.0));
        assert!(parse_duration("0").is_err());
        assert_eq!(parse_duration("0.1"), Ok(MIN_DURATION));
        assert!(parse_duration("0.0001").unwrap_err().contains("from 0.1"));
        assert_eq!(parse_duration_or_zero("0"), Ok(0.0));
        assert!(parse_duration("90000").is_err());
        assert!(parse_duration("soon").unwrap_err().contains("not a number"));
    }
}

/// `--why N|all`: how many rows of the second table ("what changed with it") to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WhyRows(pub Option<usize>);

/// Parses `--why`: a whole number of rows (0 shows none), or `all`.
pub fn parse_why(s: &str) -> Result<WhyRows, String> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("all") {
        return Ok(WhyRows(None));
    }
    t.parse::<usize>().map(|n| WhyRows(Some(n))).map_err(|_| {
        format!("{t:?} is not a number of rows; give a whole number (e.g. 20) or `all`")
    })
}
