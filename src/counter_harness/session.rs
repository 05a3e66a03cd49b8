//! What `scale` and `model` share around the harness: the sampling plan of a point, and the
//! session (the private working directory and the signal handlers) that every point runs in.
//! A point's idle share is taken around all of it, set-up to clean-up, as will-it-scale's
//! runtest.py takes it around the whole test binary.

use crate::counter_harness::placement::Placement;
use crate::counter_harness::{self as harness, Mode, Outcome, RunSpec, Workload};
use crate::proc::signals::Signals;
use anyhow::{Context, Result};
use std::path::Path;
use std::time::Duration;

/// The sampling plan of one point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    pub interval: Duration,
    pub warmup: usize,
    pub samples: usize,
}

impl Plan {
    /// Samples of `interval` (never longer than the duration) covering the warm-up and the
    /// measured duration.
    pub fn new(interval: f64, warmup: f64, duration: f64) -> Plan {
        let interval = interval.min(duration);
        Plan {
            interval: Duration::from_secs_f64(interval),
            warmup: (warmup / interval).round() as usize,
            samples: ((duration / interval).round() as usize).max(1),
        }
    }

    /// One point of this plan.
    pub fn spec<'a>(
        &self,
        tasks: usize,
        mode: Mode,
        placement: &'a Placement,
        counters: bool,
    ) -> RunSpec<'a> {
        RunSpec {
            tasks,
            mode,
            placement,
            interval: self.interval,
            warmup: self.warmup,
            samples: self.samples,
            counters,
            until: None,
            max_extra: 0,
        }
    }

    /// `5 × 1.000 s samples after 6 warm-up samples`, for the run's first line.
    pub fn describe(&self) -> String {
        format!(
            "{} × {:.3} s samples after {} warm-up samples",
            self.samples,
            self.interval.as_secs_f64(),
            self.warmup
        )
    }
}

/// A started session: the private directory and the signal handlers.
pub struct Session {
    pub dir: crate::private_dir::PrivateDir,
    pub interrupt: Signals,
}

impl Session {
    /// Installs the signal handlers and makes the private directory (mode 0700) in `dir`,
    /// which the command has checked.
    pub fn start(dir: &Path) -> Result<Session> {
        // Handlers first, so a signal from here on still leads to the cleanup. SIGCHLD wakes
        // the driver's sleep too, so a task that dies is seen at once.
        let interrupt =
            Signals::install_waking_on_child_exit().context("cannot install signal handlers")?;
        let private = crate::private_dir::PrivateDir::create(dir, "patchbench-")
            .with_context(|| format!("cannot create a working directory in {}", dir.display()))?;
        Ok(Session {
            dir: private,
            interrupt,
        })
    }

    /// Runs one point with its files directly in the private directory (so a task's file is
    /// `/tmp/patchbench-XXXXXX/wis-XXXXXX`, one level deeper than will-it-scale's
    /// `/tmp/willitscale.XXXXXX`), and empties the directory afterwards, so 128 MiB test
    /// files do not pile up across points. The outcome's idle share covers all of it.
    pub fn run(&self, work: &dyn Workload, spec: &RunSpec<'_>) -> Result<Outcome> {
        let before = harness::cpu_times();
        let outcome = harness::run(work, spec, self.dir.path(), &self.interrupt);
        let emptied = self.empty();
        let after = harness::cpu_times();
        let mut outcome = outcome?;
        emptied?;
        if let (Some(a), Some(b)) = (before, after) {
            outcome.idle_percent = harness::idle_percent(&a, &b);
        }
        Ok(outcome)
    }

    /// Removes everything inside the private directory (all of it made by this run), keeping
    /// the directory itself.
    pub fn empty(&self) -> Result<()> {
        let dir = self.dir.path();
        let cannot = || format!("cannot empty the working directory {}", dir.display());
        for entry in std::fs::read_dir(dir).with_context(cannot)? {
            let entry = entry.with_context(cannot)?;
            let removed = if entry.file_type().with_context(cannot)?.is_dir() {
                std::fs::remove_dir_all(entry.path())
            } else {
                std::fs::remove_file(entry.path())
            };
            removed.with_context(|| format!("cannot remove {}", entry.path().display()))?;
        }
        Ok(())
    }

    /// Removes the private directory; an error if a signal arrived meanwhile.
    pub fn finish(self) -> Result<()> {
        self.dir
            .close()
            .context("cannot remove the working directory")?;
        Ok(self.interrupt.check()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_counts_samples_of_the_interval() {
        let p = Plan::new(1.0, 6.0, 5.0);
        assert_eq!((p.warmup, p.samples), (6, 5));
        // A duration below one interval shortens the interval.
        let p = Plan::new(1.0, 0.0, 0.5);
        assert_eq!(
            (p.interval, p.warmup, p.samples),
            (Duration::from_millis(500), 0, 1)
        );
        let p = Plan::new(0.1, 0.2, 0.5);
        assert_eq!((p.warmup, p.samples), (2, 5));
    }
}
