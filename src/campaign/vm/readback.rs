//! What became of a guest, read back from its result directory and its console once QEMU has
//! ended: the run the workload wrote, with the kernel, command line and boot the guest
//! recorded from inside; or why the step failed, in words: a guest that panicked (the panic's
//! line), one that never reached the workload (the init's own line, e.g. a module or mount
//! that failed, or nothing at all when the kernel ran another init), one that stopped in the
//! middle, a workload or setup command that failed, a guest that ran another step's command
//! line, a timeout, or QEMU itself failing.

use super::init_script::SAYS;
use super::qemu::STEP_WORD;
use super::step_script::{
    BOOT_ID_FILE, CMDLINE_FILE, EXIT_FILE, RELEASE_FILE, RESULT_FILE, UPTIME_FILE,
};
use crate::campaign::executor::{read_result, Measured, StepOutcome, SETUP_FAILED_EXIT};
use crate::proc::supervise::{Ended, Outcome};
use crate::record::campaign::{add_run_warning, BootInfo, GuestInfo, KernelInfo};
use std::path::Path;

/// What the reading needs besides the result directory and QEMU's end.
pub struct Context<'a> {
    pub step_id: i64,
    pub timeout_s: f64,
    pub has_setup: bool,
    pub guest: GuestInfo,
    pub scratch: Option<String>,
    /// Warnings for the run (`crate::record::campaign::run_warnings`).
    pub warnings: &'a [String],
}

fn read(dir: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(name))
        .ok()
        .map(|s| s.trim().to_string())
}

/// The console's line that says most about a guest that went away: a kernel panic, else the
/// init's last word.
fn telling_line(console: &[String]) -> Option<String> {
    console
        .iter()
        .find(|l| l.contains("Kernel panic"))
        .or_else(|| console.iter().rev().find(|l| l.contains(SAYS)))
        .map(|l| l.trim().to_string())
}

/// The step's outcome.
pub fn outcome(dir: &Path, qemu: Outcome, ctx: Context) -> StepOutcome {
    let console = qemu.tail_text();
    let telling = telling_line(&qemu.tail);
    let how = match qemu.ended {
        Ended::Interrupted(i) => return StepOutcome::Interrupted(i),
        Ended::TimedOut => {
            let last = telling
                .map(|l| format!("; last word: {l}"))
                .unwrap_or_default();
            return StepOutcome::failed(
                format!(
                    "the guest did not finish within the step's {:.0} s limit and was stopped \
                     (a hang, or a boot slower than the limit allows){last}",
                    ctx.timeout_s
                ),
                console,
            );
        }
        Ended::Exited { success, how, .. } => (success, how),
    };
    if !how.0 {
        return StepOutcome::failed(format!("QEMU {}", how.1), console);
    }
    let panicked = telling.as_deref().filter(|l| l.contains("Kernel panic"));
    if read(dir, UPTIME_FILE).is_none() {
        let reason = match (&panicked, &telling) {
            (Some(p), _) => format!("the guest kernel panicked before the workload: {p}"),
            (None, Some(l)) => format!("the guest never reached the workload: {l}"),
            (None, None) => "the guest never reached the workload (it powered off without \
                             running the step: another init ran, or the console said why)"
                .to_string(),
        };
        return StepOutcome::failed(reason, console);
    }
    let Some(status) = read(dir, EXIT_FILE) else {
        let why = panicked
            .map(|p| format!(": {p}"))
            .unwrap_or_else(|| " without an exit status".to_string());
        return StepOutcome::failed(
            format!("the guest stopped during the workload{why}"),
            console,
        );
    };
    match status.parse::<i32>() {
        Ok(0) => {}
        Ok(SETUP_FAILED_EXIT) if ctx.has_setup => {
            return StepOutcome::failed("the side's setup command failed in the guest", console)
        }
        Ok(c) => {
            return StepOutcome::failed(format!("the workload exited with status {c}"), console)
        }
        Err(_) => {
            return StepOutcome::failed(
                format!("the guest wrote an unreadable exit status {status:?}"),
                console,
            )
        }
    }
    let cmdline = read(dir, CMDLINE_FILE).unwrap_or_default();
    let ours = format!("{STEP_WORD}={}", ctx.step_id);
    if !cmdline.split_whitespace().any(|w| w == ours) {
        return StepOutcome::failed(
            format!("the guest's command line {cmdline:?} does not carry this step's {ours}"),
            console,
        );
    }
    let mut record = match read_result(&dir.join(RESULT_FILE)) {
        Ok(r) => r,
        Err(reason) => return StepOutcome::failed(reason, console),
    };
    for w in ctx.warnings {
        add_run_warning(&mut record, w.clone());
    }
    let since_boot_s = read(dir, UPTIME_FILE)
        .and_then(|u| u.parse().ok())
        .unwrap_or(0.0);
    StepOutcome::Measured(Box::new(Measured {
        record,
        kernel: KernelInfo {
            release: read(dir, RELEASE_FILE).unwrap_or_default(),
            cmdline,
            ..KernelInfo::default()
        },
        guest: Some(ctx.guest),
        boot: Some(BootInfo {
            boot_id: read(dir, BOOT_ID_FILE).unwrap_or_default(),
            since_boot_s,
            via: "qemu".to_string(),
        }),
        scratch: ctx.scratch,
        leftovers: Vec::new(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exited() -> Outcome {
        Outcome {
            ended: Ended::Exited {
                success: true,
                code: Some(0),
                how: "exited with status 0".into(),
            },
            tail: vec!["[    1.0] booting".into()],
        }
    }

    fn ctx() -> Context<'static> {
        Context {
            step_id: 3,
            timeout_s: 60.0,
            has_setup: false,
            guest: GuestInfo::default(),
            scratch: None,
            warnings: &[],
        }
    }

    fn reason(o: StepOutcome) -> String {
        match o {
            StepOutcome::Failed { reason, .. } => reason,
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn a_guest_that_never_ran_the_step_says_why() {
        let d = tempfile::tempdir().unwrap();
        let mut q = exited();
        q.tail
            .push("[    9.1] Kernel panic - not syncing: No working init found.".into());
        let r = reason(outcome(d.path(), q, ctx()));
        assert!(
            r.contains("panicked before the workload") && r.contains("No working init"),
            "{r}"
        );
        let mut q = exited();
        q.tail
            .push(format!("{SAYS} cannot mount the host's root over 9p"));
        let r = reason(outcome(d.path(), q, ctx()));
        assert!(
            r.contains("never reached the workload") && r.contains("9p"),
            "{r}"
        );
        let r = reason(outcome(d.path(), exited(), ctx()));
        assert!(r.contains("never reached the workload"), "{r}");
        let q = Outcome {
            ended: Ended::TimedOut,
            tail: vec![],
        };
        assert!(reason(outcome(d.path(), q, ctx())).contains("60 s limit"));
    }

    #[test]
    fn a_guest_that_stopped_or_failed_in_the_workload_says_so() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(UPTIME_FILE), "4.5\n").unwrap();
        let r = reason(outcome(d.path(), exited(), ctx()));
        assert!(r.contains("stopped during the workload"), "{r}");
        std::fs::write(d.path().join(EXIT_FILE), "3\n").unwrap();
        let r = reason(outcome(d.path(), exited(), ctx()));
        assert!(r.contains("status 3"), "{r}");
        std::fs::write(d.path().join(EXIT_FILE), "0\n").unwrap();
        std::fs::write(
            d.path().join(CMDLINE_FILE),
            "console=ttyS0 patchbench.step=4\n",
        )
        .unwrap();
        let r = reason(outcome(d.path(), exited(), ctx()));
        assert!(r.contains("patchbench.step=3"), "{r}");
        std::fs::write(
            d.path().join(CMDLINE_FILE),
            "console=ttyS0 patchbench.step=3\n",
        )
        .unwrap();
        let r = reason(outcome(d.path(), exited(), ctx()));
        assert!(r.contains("wrote no result"), "{r}");
    }
}
