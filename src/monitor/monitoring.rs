//! One harness's monitoring: what it was asked for (a [`Plan`]: the monitors, `--profile`,
//! `--profile-data DIR`), what it has said about monitors this machine lacks (once, before it
//! measures), and the windows it opens around its measured units. Every harness (`run`,
//! `aim7`, `scale`, `model`) goes through this, so the order of things at a window's edges is
//! the same everywhere: perf starts before the monitors' snapshot and is reaped after it (its
//! CPU time is in no unit's), a profile that fails never loses the window, and its reason is
//! said once and recorded in every window's `missing`.
//!
//! The perf data of a window is written in a private 0700 directory made for the run (inside
//! the command's `--dir`), folded at the window's end and removed, unless `--profile-data DIR`
//! asked to keep it: it is then moved into DIR (made if missing, never emptied) as
//! `<run>-<unit>-<n>.perf.data`, for `perf report -i` later.

use super::profile::{self, Recording};
use super::{Sample, Snapshot};
use crate::private_dir::PrivateDir;
use crate::progress::Progress;
use anyhow::Context;
use std::path::{Path, PathBuf};

/// What a command was asked to record around its units.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// The monitors (off with `--no-monitors`).
    pub monitors: bool,
    /// `--profile`: a perf profile of every window (needs the monitors).
    pub profile: bool,
    /// `--profile-data DIR`: keep each window's perf data there.
    pub profile_data: Option<PathBuf>,
    /// `--perf-stat`: the workload's inherited perf counters, which run inside the timed
    /// window (needs the monitors).
    pub perf_stat: bool,
}

impl Plan {
    /// The monitors alone (the default).
    pub fn monitors_only() -> Plan {
        Plan {
            monitors: true,
            ..Plan::default()
        }
    }
}

/// A harness's monitoring for one run.
pub struct Monitoring {
    plan: Plan,
    /// Why `--profile` takes no profile on this machine for this user (said once at the
    /// start, recorded in every window's `missing`).
    refused: Option<String>,
    /// Where perf writes (with `--profile`).
    scratch: Option<PrivateDir>,
    /// Names a kept data file after its run.
    run: String,
    /// Whether a failed profile has been said.
    said: bool,
    windows: u32,
}

/// An open window.
pub struct Window {
    recording: Option<Result<Recording, String>>,
    snapshot: Snapshot,
    data: Option<PathBuf>,
    unit: String,
}

impl Monitoring {
    /// Starts the run's monitoring: says once which monitors this machine lacks (and why),
    /// and with `--profile` makes the private directory perf writes in, inside `dir`, and
    /// says when kernel symbols are hidden. `run` names kept data files (the run's id).
    pub fn start(
        plan: &Plan,
        dir: &Path,
        run: &str,
        progress: &Progress,
    ) -> anyhow::Result<Monitoring> {
        if plan.monitors {
            for line in super::unavailable(plan.perf_stat) {
                progress.line(&format!("patchbench: monitor unavailable: {line}"));
            }
            if plan.perf_stat {
                if let Some(line) = super::task_events::user_space_only() {
                    progress.line(&format!("patchbench: {line}"));
                }
            }
        }
        let mut profiling = plan.monitors && plan.profile;
        let mut refused = None;
        if profiling {
            // One line with the one cause: a user who may not sample the whole machine gets
            // no perf started at all (and no line about symbols it would not have seen).
            if let Some(why) = profile::cannot_sample_machine(Path::new("/proc")) {
                progress.line(&format!("patchbench: {why}"));
                refused = Some(why);
                profiling = false;
            } else if let Some(why) = profile::kernel_symbols_hidden(Path::new("/proc")) {
                progress.line(&format!("patchbench: {why}"));
            }
        }
        let scratch = if profiling {
            Some(
                PrivateDir::create(dir, "patchbench-perf-").with_context(|| {
                    format!("cannot make a private directory in {}", dir.display())
                })?,
            )
        } else {
            None
        };
        if let (true, Some(keep)) = (profiling, &plan.profile_data) {
            std::fs::create_dir_all(keep)
                .with_context(|| format!("cannot make --profile-data {}", keep.display()))?;
        }
        Ok(Monitoring {
            plan: plan.clone(),
            refused,
            scratch,
            run: run
                .chars()
                .filter(|c| c.is_ascii_alphanumeric())
                .take(8)
                .collect(),
            said: false,
            windows: 0,
        })
    }

    /// Opens a window around the unit `unit` (a short name: `syscall-1`, `page_fault1-2-
    /// processes`), or None without monitors. Call it outside the timed region: with
    /// `--profile` it waits the moment perf takes to start.
    pub fn open(&mut self, unit: &str) -> Option<Window> {
        if !self.plan.monitors {
            return None;
        }
        self.windows += 1;
        let data = self.scratch.as_ref().map(|d| {
            d.path()
                .join(format!("{}-{}.perf.data", safe(unit), self.windows))
        });
        Some(Window {
            recording: data.as_deref().map(Recording::start),
            snapshot: Snapshot::take(self.plan.perf_stat),
            data,
            unit: safe(unit),
        })
    }

    /// Closes a window: the monitors' readings, with the profile's shares when one was
    /// taken, else its reason in `missing` (said once).
    pub fn close(&mut self, w: Window, progress: &Progress) -> Sample {
        let mut sample = w.snapshot.end();
        if let Some(why) = &self.refused {
            sample.missing.push(why.clone());
        }
        let Some(recording) = w.recording else {
            return sample;
        };
        // perf record ran machine-wide through the window once it started, whatever became
        // of its data.
        if recording.is_ok() {
            sample.in_window.push(super::PERF_RECORD.to_string());
        }
        match recording.and_then(Recording::stop) {
            Ok(stopped) => match stopped.fold() {
                Ok(shares) => {
                    sample.profile = shares;
                    sample.profile_windows = 1;
                }
                Err(why) => self.missing(&mut sample, why, progress),
            },
            Err(why) => self.missing(&mut sample, why, progress),
        }
        if let Some(data) = &w.data {
            self.keep_or_remove(data, &w.unit, &mut sample, progress);
        }
        sample
    }

    fn missing(&mut self, sample: &mut Sample, why: String, progress: &Progress) {
        if !self.said {
            progress.line(&format!("patchbench: {why}"));
            self.said = true;
        }
        if !sample.missing.contains(&why) {
            sample.missing.push(why);
        }
    }

    /// Moves a window's perf data into `--profile-data` (never over a file there), else
    /// removes it.
    fn keep_or_remove(
        &mut self,
        data: &Path,
        unit: &str,
        sample: &mut Sample,
        progress: &Progress,
    ) {
        let Some(keep) = &self.plan.profile_data else {
            let _ = std::fs::remove_file(data);
            return;
        };
        if !data.exists() {
            return;
        }
        let dest = free_name(keep, &format!("{}-{unit}-{}", self.run, self.windows));
        match move_file(data, &dest) {
            Ok(()) => sample.profile_data.push(dest.display().to_string()),
            Err(e) => {
                let _ = std::fs::remove_file(data);
                progress.line(&format!(
                    "patchbench: warning: the perf data of {unit} cannot be kept in {}: {e}",
                    keep.display()
                ));
            }
        }
    }

    /// Removes the private directory (at the run's end; a drop removes it too).
    pub fn finish(self) -> anyhow::Result<()> {
        match self.scratch {
            Some(d) => d.close(),
            None => Ok(()),
        }
    }
}

/// A unit's name as a file name: letters, digits, `-`, `_` and `.`; others become `_`.
fn safe(unit: &str) -> String {
    unit.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `dir/<stem>.perf.data`, or with `.2`, `.3`, ... when that is taken.
fn free_name(dir: &Path, stem: &str) -> PathBuf {
    let mut p = dir.join(format!("{stem}.perf.data"));
    let mut n = 2;
    while p.symlink_metadata().is_ok() {
        p = dir.join(format!("{stem}.{n}.perf.data"));
        n += 1;
    }
    p
}

/// Renames `from` to `to`, or copies it (another file system) and removes `from`.
fn move_file(from: &Path, to: &Path) -> std::io::Result<()> {
    if std::fs::rename(from, to).is_ok() {
        return Ok(());
    }
    let mut src = std::fs::File::open(from)?;
    let mut dst = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)?;
    std::io::copy(&mut src, &mut dst)?;
    std::fs::remove_file(from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_monitors_no_window_opens_and_nothing_is_made() {
        let dir = tempfile::tempdir().unwrap();
        let plan = Plan {
            monitors: false,
            profile: true,
            profile_data: None,
            perf_stat: true,
        };
        let mut m = Monitoring::start(&plan, dir.path(), "r", &Progress::hidden()).unwrap();
        assert!(m.open("x").is_none());
        m.finish().unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_kept_name_never_replaces_a_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a-b-1.perf.data"), "mine").unwrap();
        let p = free_name(dir.path(), "a-b-1");
        assert_eq!(p, dir.path().join("a-b-1.2.perf.data"));
        assert_eq!(safe("page_fault1 2/processes"), "page_fault1_2_processes");
    }
}
