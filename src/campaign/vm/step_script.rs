//! The script a guest runs for one step, written by the host into the step's result directory
//! and run by the guest's init with the host's root as `/`: it records what the guest is
//! (`uname -r`, `/proc/cmdline`, the boot id) in the result directory, waits the campaign's
//! settle time, records the seconds since boot (its presence says the guest reached the
//! workload), and then runs the side's setup command and the workload in one shell
//! (`crate::campaign::executor::setup_script`), whose exit status is the step's.

use super::init_script::RESULT_MOUNT;
use super::sh_quote::quote;
use crate::campaign::executor::setup_script;
use std::path::Path;

/// Files the step writes in the result directory.
pub const RELEASE_FILE: &str = "release";
pub const CMDLINE_FILE: &str = "cmdline";
pub const BOOT_ID_FILE: &str = "boot_id";
pub const UPTIME_FILE: &str = "uptime";
pub const EXIT_FILE: &str = "exit_status";
pub const RESULT_FILE: &str = "result.json";
pub const SCRIPT_FILE: &str = "step.sh";

/// The step's PATH (a vm guest's; a kexec box's boot hook has systemd's default, the same on
/// Debian 12's systemd 252): where `crate::exec::tool::check_for_step` looks for an `exec`
/// workload's program before any build or boot.
pub const STEP_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// What a step's script runs.
pub struct StepScript<'a> {
    pub step_id: i64,
    pub campaign: &'a str,
    pub side: &'a str,
    pub round: u32,
    pub setup: Option<&'a str>,
    pub program: &'a Path,
    /// The workload's arguments (after the program).
    pub args: &'a [String],
    pub settle_s: f64,
}

impl StepScript<'_> {
    /// The script's text.
    pub fn render(&self) -> String {
        let mut words = vec![
            "exec".to_string(),
            "/bin/sh".to_string(),
            "-c".to_string(),
            quote(&setup_script(self.setup)),
            "patchbench-step".to_string(),
            quote(&self.program.display().to_string()),
        ];
        words.extend(self.args.iter().map(|a| quote(a)));
        let settle = if self.settle_s > 0.0 {
            format!("sleep {:.3}\n", self.settle_s)
        } else {
            String::new()
        };
        format!(
            "# patchbench: campaign {campaign}, round {round}, side {side}, step {id}\n\
             R={RESULT_MOUNT}\n\
             export HOME=/root TMPDIR=/tmp LC_ALL=C \
             PATH={STEP_PATH}\n\
             export PATCHBENCH_CAMPAIGN={qcampaign} PATCHBENCH_SIDE={qside} PATCHBENCH_ROUND={round}\n\
             cd /tmp || exit 126\n\
             uname -r > \"$R/{RELEASE_FILE}\"\n\
             cat /proc/cmdline > \"$R/{CMDLINE_FILE}\"\n\
             cat /proc/sys/kernel/random/boot_id > \"$R/{BOOT_ID_FILE}\"\n\
             {settle}\
             read -r up _ < /proc/uptime && echo \"$up\" > \"$R/{UPTIME_FILE}\"\n\
             {run}\n",
            campaign = self.campaign.replace('\n', " "),
            side = self.side.replace('\n', " "),
            round = self.round,
            id = self.step_id,
            qcampaign = quote(self.campaign),
            qside = quote(self.side),
            run = words.join(" "),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_runs_the_setup_and_the_workload_with_every_argument_intact() {
        let script = StepScript {
            step_id: 7,
            campaign: "c'1",
            side: "base",
            round: 2,
            setup: Some("echo setup ran"),
            program: Path::new("/bin/echo"),
            args: &["a b".to_string(), "it's".to_string(), "$X".to_string()],
            settle_s: 0.0,
        }
        .render();
        // Run it with the result directory redirected to a temporary one.
        let d = tempfile::tempdir().unwrap();
        let text = script.replace(
            &format!("R={RESULT_MOUNT}"),
            &format!("R={}", quote(&d.path().display().to_string())),
        );
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(text)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!(
                "setup ran\n{}\na b it's $X\n",
                crate::campaign::executor::SETUP_DONE
            )
        );
        for f in [RELEASE_FILE, CMDLINE_FILE, BOOT_ID_FILE, UPTIME_FILE] {
            let text = std::fs::read_to_string(d.path().join(f)).unwrap();
            assert!(!text.trim().is_empty(), "{f}");
        }
    }
}
