//! Running kbuild: `make -C SRC O=OBJ ARCH=x86_64 -jN VAR=VALUE... TARGET...` under
//! supervision (its own process group, stopped on Ctrl-C or SIGTERM, dying with patchbench),
//! with the reproducible-build environment, every output line kept in a log, and a progress
//! line saying what is being compiled and for how long.
//!
//! A failure is described from the log: a full disk is said as such (free space, or another
//! `--cache`); otherwise the first compiler error, the log's last lines (printed above the
//! error) and where the whole log is. make itself deletes the target it was writing when it
//! fails or is stopped (kbuild sets `.DELETE_ON_ERROR`), so the object directory stays usable
//! for the next build.

use super::disk_full::{disk_full, full_or, is_disk_full, nearly_full, says_disk_full};
use crate::error::Usage;
use crate::proc::signals::Signals;
use crate::proc::supervise::{Ended, Supervised};
use crate::progress::Progress;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Lines of the log's end printed when a build fails.
pub const TAIL_SHOWN: usize = 15;

/// One make run.
pub struct Make<'a> {
    pub src: &'a Path,
    pub obj: &'a Path,
    pub jobs: usize,
    /// Make variables (`LOCALVERSION=...`).
    pub vars: Vec<(String, String)>,
    /// Environment (`KBUILD_BUILD_TIMESTAMP=...`).
    pub env: Vec<(String, String)>,
    pub targets: Vec<String>,
}

impl Make<'_> {
    /// The command.
    pub fn command(&self) -> Command {
        let mut c = Command::new("make");
        c.arg("-C")
            .arg(self.src)
            .arg(format!("O={}", self.obj.display()))
            .arg("ARCH=x86_64")
            .arg(format!("-j{}", self.jobs.max(1)));
        for (k, v) in &self.vars {
            c.arg(format!("{k}={v}"));
        }
        c.args(&self.targets);
        for (k, v) in &self.env {
            c.env(k, v);
        }
        // Messages in English (the error reading below), and nothing from the caller's
        // environment that kbuild would take as a setting.
        c.env("LC_ALL", "C");
        for var in [
            "ARCH",
            "CROSS_COMPILE",
            "KBUILD_OUTPUT",
            "KCFLAGS",
            "KCPPFLAGS",
            "KAFLAGS",
            "KBUILD_EXTRA_SYMBOLS",
            "INSTALL_MOD_PATH",
            "LOCALVERSION",
            "MAKEFLAGS",
            "MFLAGS",
            "MAKELEVEL",
            "O",
            "V",
            "W",
            "C",
        ] {
            if !self.vars.iter().any(|(k, _)| k == var) && !self.env.iter().any(|(k, _)| k == var) {
                c.env_remove(var);
            }
        }
        c
    }
}

/// What the progress line says of a kbuild output line: `CC kernel/sys.o`.
pub fn step_of(line: &str) -> Option<String> {
    let mut words = line.split_whitespace();
    let verb = words.next()?;
    let what = words.next()?;
    let is_verb = verb.len() <= 10
        && verb
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_' || c == '-')
        && verb.chars().any(|c| c.is_ascii_uppercase());
    (is_verb && line.starts_with("  ")).then(|| format!("{verb} {what}"))
}

/// The first line of a log that reads as an error, for the one-line message.
pub fn first_error(lines: &[String]) -> Option<&String> {
    lines
        .iter()
        .find(|l| l.contains(": error:") || l.contains(": fatal error:"))
        .or_else(|| lines.iter().find(|l| l.contains("*** ")))
}

/// A build that make itself failed (the code does not build: not a signal, a deadline or a
/// full disk), with its one-line message. The same key fails the same way every time, so the
/// cache keeps it ([`super::cache::Cache::failed_record`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Failed(pub String);

impl Failed {
    /// The failure as the one-line error the user sees (bad input: exit status 2).
    pub fn into_error(self) -> anyhow::Error {
        Usage(self.0).into()
    }
}

/// Runs `make` to its end, appending its output to `log`. `what` names the build in the
/// progress line and in messages; `cache` names the disk in a full-disk message. The inner
/// error is a failure of the code to build; the outer one everything else (interrupted, past
/// its deadline, a full disk, a log that cannot be written).
pub fn run(
    m: &Make,
    log: &Path,
    what: &str,
    cache: &Path,
    progress: &Progress,
    signals: &Signals,
) -> anyhow::Result<Result<(), Failed>> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| {
            full_or(
                cache,
                e,
                &format!("cannot write the build log {}", log.display()),
            )
        })?;
    let command = m.command();
    let _ = writeln!(file, "$ {command:?}");
    let child = Supervised::spawn(command).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            anyhow::Error::from(Usage(
                "make is not installed: install it (apt-get install make)".to_string(),
            ))
        } else {
            anyhow::anyhow!("cannot start make: {e}")
        }
    })?;
    let started = Instant::now();
    let mut errors: Vec<String> = Vec::new();
    let mut full = false;
    let mut log_failed: Option<std::io::Error> = None;
    let step = std::cell::RefCell::new(String::from("starting"));
    let show = |step: &str| {
        progress.show(&format!(
            "building {what}: {step} ({})",
            crate::clock::human_secs(started.elapsed().as_secs_f64())
        ))
    };
    let out = child.wait(
        signals,
        None,
        &mut |line| {
            if log_failed.is_none() {
                if let Err(e) = writeln!(file, "{line}") {
                    log_failed = Some(e);
                }
            }
            if says_disk_full(line) {
                full = true;
            }
            if errors.len() < 200 && (line.contains("error") || line.contains("*** ")) {
                errors.push(line.to_string());
            }
            if let Some(s) = step_of(line) {
                *step.borrow_mut() = s;
            }
            show(&step.borrow());
            true
        },
        &mut || show(&step.borrow()),
    );
    let _ = file.flush();
    match out.ended {
        Ended::Exited { success: true, .. } => {
            if let Some(e) = log_failed {
                return Err(full_or(cache, e, "cannot write the build log"));
            }
            Ok(Ok(()))
        }
        Ended::Interrupted(i) => {
            let _ = writeln!(file, "(stopped by {})", i.name);
            Err(i.into())
        }
        Ended::TimedOut => Err(anyhow::anyhow!("make ran past its deadline")),
        Ended::Exited { how, .. } => {
            if full || log_failed.as_ref().is_some_and(is_disk_full) || nearly_full(m.obj) {
                return Err(disk_full(cache, &format!("make {how}")));
            }
            let shown = out.tail.len().saturating_sub(TAIL_SHOWN);
            for l in &out.tail[shown..] {
                progress.line(&format!("  | {l}"));
            }
            let first = first_error(&errors)
                .map(|l| format!(": {}", crate::safe_text::field_cut(l.trim(), 200)))
                .unwrap_or_default();
            Ok(Err(Failed(format!(
                "the kernel build ({what}) failed, make {how}{first}; the whole log is {}",
                log.display()
            ))))
        }
    }
}

/// Where kbuild puts what a build gives, below its object directory.
pub fn outputs(obj: &Path) -> [(PathBuf, &'static str); 4] {
    [
        (obj.join("arch/x86/boot/bzImage"), "bzImage"),
        (obj.join("System.map"), "System.map"),
        (obj.join("vmlinux"), "vmlinux"),
        (obj.join(".config"), ".config"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kbuild_lines_become_steps_and_errors_are_found() {
        assert_eq!(
            step_of("  CC      kernel/sys.o").as_deref(),
            Some("CC kernel/sys.o")
        );
        assert_eq!(
            step_of("  LD [M]  fs/ext4/ext4.ko").as_deref(),
            Some("LD [M]")
        );
        assert_eq!(step_of("make[1]: Entering directory '/x'"), None);
        assert_eq!(step_of("kernel/sys.c:12:1: error: x"), None);
        let log: Vec<String> = [
            "  CC      kernel/sys.o",
            "../kernel/sys.c:950:9: error: expected ';' before '}' token",
            "make[3]: *** [../scripts/Makefile.build:250: kernel/sys.o] Error 1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert!(first_error(&log).unwrap().contains("expected ';'"));
        let m = Make {
            src: Path::new("/s"),
            obj: Path::new("/s/o"),
            jobs: 2,
            vars: vec![("LOCALVERSION".into(), "-pbx".into())],
            env: vec![("KBUILD_BUILD_USER".into(), "patchbench".into())],
            targets: vec!["olddefconfig".into()],
        };
        let c = m.command();
        let args: Vec<String> = c
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            [
                "-C",
                "/s",
                "O=/s/o",
                "ARCH=x86_64",
                "-j2",
                "LOCALVERSION=-pbx",
                "olddefconfig"
            ]
        );
    }
}
