//! What every executor does, and the pieces they share: the step request, the outcome, the
//! workload's command line (the measuring command with `--json FILE --no-store`, and the
//! scratch directory as its `--dir`), the shell wrapper that runs a side's setup command and
//! then execs the workload in the same process, reading the run back from its JSON, and
//! reading the kernel and boot a workload ran under.

use crate::error::Interrupted;
use crate::proc::signals::Signals;
use crate::record::campaign::spec::{CampaignSpec, ExecutorKind, SideSpec};
use crate::record::campaign::state::Step;
use crate::record::campaign::{BootInfo, GuestInfo, KernelInfo};
use crate::record::RunRecord;
use std::path::Path;

/// One step to run.
pub struct StepRequest<'a> {
    pub spec: &'a CampaignSpec,
    pub side: &'a SideSpec,
    pub step: &'a Step,
}

/// What a step measured, and where, as read back from where it ran.
#[derive(Debug)]
pub struct Measured {
    pub record: RunRecord,
    pub kernel: KernelInfo,
    pub guest: Option<GuestInfo>,
    pub boot: Option<BootInfo>,
    /// The scratch file system the workload got, described.
    pub scratch: Option<String>,
    /// The processes the step left running and ended (`NAME (pid N)`).
    pub leftovers: Vec<String>,
}

/// How a step ended.
#[derive(Debug)]
pub enum StepOutcome {
    Measured(Box<Measured>),
    /// The step failed: why, and the last lines its workload or guest printed.
    Failed {
        reason: String,
        console: String,
    },
    /// patchbench was interrupted; the step was stopped and is to be handed back.
    Interrupted(Interrupted),
}

impl StepOutcome {
    pub fn failed(reason: impl Into<String>, console: impl Into<String>) -> StepOutcome {
        StepOutcome::Failed {
            reason: reason.into(),
            console: console.into(),
        }
    }
}

/// Runs campaign steps somewhere.
pub trait Executor {
    fn kind(&self) -> ExecutorKind;

    /// Runs one step; `on_line` sees the console as it comes, and `on_tick` is called at
    /// least once a second while the step runs (a lab agent renews its lease there).
    fn run_step(
        &mut self,
        req: &StepRequest,
        signals: &Signals,
        on_line: &mut dyn FnMut(&str),
        on_tick: &mut dyn FnMut(),
    ) -> StepOutcome;

    /// Runs the two steps of a round at once (duet); None when this executor cannot.
    fn run_pair(
        &mut self,
        _reqs: [&StepRequest; 2],
        _signals: &Signals,
        _on_line: &mut dyn FnMut(&str),
        _on_tick: &mut dyn FnMut(),
    ) -> Option<[StepOutcome; 2]> {
        None
    }
}

/// The measuring command's arguments for a step: the workload as given, with `--json JSON
/// --no-store` (and `--dir DIR` for a scratch file system) at its end, or before its first
/// `--` (an `exec` workload's program and its arguments follow one: they are the program's).
/// Options that would write elsewhere were refused when the campaign started.
pub fn workload_args(spec: &CampaignSpec, json: &Path, dir: Option<&Path>) -> Vec<String> {
    let mut ours: Vec<String> = vec![
        "--json".into(),
        json.display().to_string(),
        "--no-store".into(),
    ];
    if let Some(d) = dir {
        ours.push("--dir".into());
        ours.push(d.display().to_string());
    }
    let at = own_words(&spec.workload);
    let mut args = spec.workload[..at].to_vec();
    args.extend(ours);
    args.extend_from_slice(&spec.workload[at..]);
    args
}

/// How many of the workload's first words are the measuring command's own: all of them, or
/// those before its first `--`.
pub fn own_words(workload: &[String]) -> usize {
    workload
        .iter()
        .position(|w| w == "--")
        .unwrap_or(workload.len())
}

/// Exit status of the step's shell when the side's setup command failed.
pub const SETUP_FAILED_EXIT: i32 = 125;

/// The line the step's shell prints once the setup command is over, right before it execs the
/// workload: a step that ends without it never reached the workload.
pub const SETUP_DONE: &str = "patchbench-step: setup done";

/// The `sh -c` script that runs `setup` in the shell itself (so what it does to its own
/// process, such as joining a cgroup, holds for the workload), says [`SETUP_DONE`], and then
/// execs the workload, given as the script's arguments.
pub fn setup_script(setup: Option<&str>) -> String {
    match setup {
        None => format!("echo '{SETUP_DONE}'\nexec \"$@\""),
        Some(s) => format!(
            "{{\n{s}\n}} || {{ echo \"patchbench: the setup command failed (status $?)\" >&2; \
             exit {SETUP_FAILED_EXIT}; }}\necho '{SETUP_DONE}'\nexec \"$@\""
        ),
    }
}

/// Reads the run a step's workload wrote; a failure says why.
pub fn read_result(json: &Path) -> Result<RunRecord, String> {
    let text = std::fs::read_to_string(json)
        .map_err(|e| format!("the workload wrote no result ({}: {e})", json.display()))?;
    let record = RunRecord::from_json(&text).map_err(|e| {
        format!(
            "the workload's result {} is unreadable: {e}",
            json.display()
        )
    })?;
    if record.incomplete {
        return Err(format!(
            "the workload's run is incomplete: {}",
            record.error.as_deref().unwrap_or("no reason given")
        ));
    }
    if record.metrics.is_empty() {
        return Err("the workload's run has no results".to_string());
    }
    Ok(record)
}

/// The running kernel as a step sees it: `uname -r` and `/proc/cmdline`.
pub fn this_kernel() -> KernelInfo {
    KernelInfo {
        release: nix::sys::utsname::uname()
            .map(|u| u.release().to_string_lossy().into_owned())
            .unwrap_or_default(),
        image: None,
        image_sha256: None,
        cmdline: std::fs::read_to_string("/proc/cmdline")
            .map(|s| s.trim().to_string())
            .unwrap_or_default(),
        cmdline_words: Vec::new(),
    }
}

/// This boot: its id and the seconds since it, with how it came about.
pub fn this_boot(via: &str) -> BootInfo {
    let uptime = std::fs::read_to_string("/proc/uptime")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0);
    BootInfo {
        boot_id: crate::record::campaign::state::boot_id(),
        since_boot_s: uptime,
        via: via.to_string(),
    }
}

/// Checks that a step ran under the kernel and command line its side asked for; the error
/// names both.
pub fn check_kernel(side: &SideSpec, seen: &KernelInfo) -> Result<(), String> {
    if let Some(k) = &side.kernel {
        if seen.release != k.release {
            return Err(format!(
                "the {} side expected kernel {} but the step ran on {}",
                side.name, k.release, seen.release
            ));
        }
    }
    let words: Vec<&str> = seen.cmdline.split_whitespace().collect();
    let missing: Vec<&str> = side
        .cmdline
        .iter()
        .map(String::as_str)
        .filter(|w| !words.contains(w))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the {} side expected {} on the kernel command line, but it was {:?}",
            side.name,
            missing.join(" "),
            crate::record::campaign::redact_cmdline(&seen.cmdline)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setup_runs_in_the_shell_that_execs_the_workload() {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(setup_script(Some("echo $$ > \"$PB_T\"")))
            .arg("step")
            .args(["sh", "-c", "echo $$"])
            .env(
                "PB_T",
                std::env::temp_dir().join(format!("pb-setup-{}", std::process::id())),
            )
            .output()
            .unwrap();
        let file = std::env::temp_dir().join(format!("pb-setup-{}", std::process::id()));
        let setup_pid = std::fs::read_to_string(&file).unwrap();
        let _ = std::fs::remove_file(&file);
        let printed = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            printed.lines().collect::<Vec<_>>(),
            [SETUP_DONE, setup_pid.trim()]
        );
        let failed = std::process::Command::new("sh")
            .arg("-c")
            .arg(setup_script(Some("false")))
            .arg("step")
            .arg("true")
            .status()
            .unwrap();
        assert_eq!(failed.code(), Some(SETUP_FAILED_EXIT));
    }

    #[test]
    fn a_missing_word_or_another_kernel_is_named() {
        let side = SideSpec {
            name: "patched".into(),
            kernel: None,
            cmdline: vec!["pti=on".into()],
            setup: None,
            build: None,
        };
        let seen = KernelInfo {
            release: "6.1.0".into(),
            cmdline: "console=ttyS0 pti=off".into(),
            ..KernelInfo::default()
        };
        let e = check_kernel(&side, &seen).unwrap_err();
        assert!(e.contains("pti=on") && e.contains("pti=off"), "{e}");
        let ok = KernelInfo {
            cmdline: "console=ttyS0 pti=on".into(),
            ..seen
        };
        assert!(check_kernel(&side, &ok).is_ok());
    }
}
