//! The `local` executor: every step runs on the running kernel, as a supervised child of this
//! process (`crate::proc::supervise`): `sh -c` runs the side's setup command and execs the
//! workload, which writes its JSON into a private directory (mode 0700) of this campaign
//! process. The step owns everything its setup and workload start (`crate::proc::contain`: a
//! cgroup of its own where the kernel offers one, this process their subreaper): it waits for
//! the workload only, then ends what is left and names it in the step's record. With `--scratch ext4:SIZE` each step gets a fresh ext4 made on a sparse file in
//! that directory and mounted through a loop device, given to the workload as its `--dir`
//! (root only), unmounted after the step.

use super::executor::{
    read_result, setup_script, this_boot, this_kernel, workload_args, Executor, Measured,
    StepOutcome, StepRequest, SETUP_DONE,
};
use crate::private_dir::PrivateDir;
use crate::proc::contain::Contained;
use crate::proc::signals::Signals;
use crate::proc::supervise::{Ended, Supervised};
use crate::record::campaign::spec::{ExecutorKind, Scratch};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs steps on this machine's running kernel.
pub struct Local {
    dir: PrivateDir,
}

impl Local {
    /// Makes the private directory the steps' results (and scratch images) go to.
    pub fn new() -> anyhow::Result<Local> {
        let dir = PrivateDir::create(&std::env::temp_dir(), "patchbench-campaign-")
            .map_err(|e| anyhow::anyhow!("cannot make a private directory for the steps: {e}"))?;
        Ok(Local { dir })
    }

    /// Removes the private directory.
    pub fn close(self) -> anyhow::Result<()> {
        self.dir.close()
    }
}

impl Executor for Local {
    fn kind(&self) -> ExecutorKind {
        ExecutorKind::Local
    }

    fn run_step(
        &mut self,
        req: &StepRequest,
        signals: &Signals,
        on_line: &mut dyn FnMut(&str),
        on_tick: &mut dyn FnMut(),
    ) -> StepOutcome {
        let json = self.dir.path().join(format!("step-{}.json", req.step.id));
        let _ = std::fs::remove_file(&json);
        let scratch = match &req.spec.scratch {
            Some(s) => match ScratchFs::make(self.dir.path(), s) {
                Ok(fs) => Some(fs),
                Err(e) => return StepOutcome::failed(format!("scratch file system: {e}"), ""),
            },
            None => None,
        };
        if req.spec.settle_s > 0.0 {
            if let Err(i) = signals.sleep(Duration::from_secs_f64(req.spec.settle_s)) {
                return StepOutcome::Interrupted(i);
            }
        }
        let args = workload_args(req.spec, &json, scratch.as_ref().map(|s| s.mount.as_path()));
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(setup_script(req.side.setup.as_deref()))
            .arg("patchbench-step")
            .arg(&req.spec.program)
            .args(&args)
            .env("PATCHBENCH_CAMPAIGN", &req.spec.name)
            .env("PATCHBENCH_SIDE", &req.side.name)
            .env("PATCHBENCH_ROUND", req.step.round.to_string());
        let kernel = this_kernel();
        let boot = this_boot("unknown");
        let contained = Contained::new();
        let (mark, value) = contained.mark();
        cmd.env(mark, value);
        let child = match Supervised::spawn_joining(cmd, contained.join_fd()) {
            Ok(c) => c,
            Err(e) => {
                return StepOutcome::failed(format!("cannot start the workload: {e}"), "");
            }
        };
        let deadline = Instant::now() + Duration::from_secs_f64(req.spec.step_timeout_s);
        let mut reached_workload = false;
        let out = child.wait(
            signals,
            Some(deadline),
            &mut |l| {
                if l == SETUP_DONE {
                    reached_workload = true;
                } else {
                    on_line(l);
                }
                true
            },
            on_tick,
        );
        // The workload is over: what its setup or it left running goes now.
        let leftovers = contained.end_rest();
        drop(contained);
        let described = scratch.as_ref().map(|s| s.describe());
        if let Some(fs) = scratch {
            if let Err(e) = fs.remove() {
                on_line(&format!("patchbench: warning: scratch file system: {e}"));
            }
        }
        let console = out.tail_text();
        match out.ended {
            Ended::Interrupted(i) => StepOutcome::Interrupted(i),
            Ended::TimedOut => StepOutcome::failed(
                format!(
                    "the step took longer than its {:.0} s limit and was stopped",
                    req.spec.step_timeout_s
                ),
                console,
            ),
            Ended::Exited { how, .. } if !reached_workload => StepOutcome::failed(
                if req.side.setup.is_some() {
                    format!("the side's setup command failed (the step's shell {how})")
                } else {
                    format!("the step's shell {how} before the workload started")
                },
                console,
            ),
            Ended::Exited {
                success: false,
                how,
                ..
            } => StepOutcome::failed(format!("the workload {how}"), console),
            Ended::Exited { .. } => match read_result(&json) {
                Ok(record) => {
                    let _ = std::fs::remove_file(&json);
                    StepOutcome::Measured(Box::new(Measured {
                        record,
                        kernel,
                        guest: None,
                        boot: Some(boot),
                        scratch: described,
                        leftovers,
                    }))
                }
                Err(reason) => StepOutcome::failed(reason, console),
            },
        }
    }
}

/// A fresh file system on a loop device, mounted in the private directory.
struct ScratchFs {
    image: PathBuf,
    mount: PathBuf,
    spec: Scratch,
}

impl ScratchFs {
    /// Makes the file system at the same place for every step (the workload's `--dir` is part
    /// of its recorded settings, which should not differ between steps).
    fn make(dir: &Path, spec: &Scratch) -> Result<ScratchFs, String> {
        let image = dir.join("scratch.img");
        let mount = dir.join("scratch");
        let file =
            std::fs::File::create(&image).map_err(|e| format!("{}: {e}", image.display()))?;
        file.set_len(spec.bytes)
            .map_err(|e| format!("cannot size {}: {e}", image.display()))?;
        drop(file);
        run_tool(
            Command::new(format!("mkfs.{}", spec.fs))
                .args(["-q", "-F"])
                .arg(&image),
        )?;
        std::fs::create_dir(&mount).map_err(|e| format!("{}: {e}", mount.display()))?;
        if let Err(e) = run_tool(
            Command::new("mount")
                .args(["-o", "loop"])
                .arg(&image)
                .arg(&mount),
        ) {
            let _ = std::fs::remove_dir(&mount);
            let _ = std::fs::remove_file(&image);
            return Err(e);
        }
        Ok(ScratchFs {
            image,
            mount,
            spec: spec.clone(),
        })
    }

    fn describe(&self) -> String {
        format!("{} on a loop device", self.spec)
    }

    fn remove(self) -> Result<(), String> {
        run_tool(Command::new("umount").arg(&self.mount))?;
        std::fs::remove_dir(&self.mount).map_err(|e| format!("{}: {e}", self.mount.display()))?;
        std::fs::remove_file(&self.image).map_err(|e| format!("{}: {e}", self.image.display()))
    }
}

/// Runs a system tool; an error names it with its output.
fn run_tool(cmd: &mut Command) -> Result<(), String> {
    let name = cmd.get_program().to_string_lossy().into_owned();
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {name}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&out.stderr);
    Err(format!("{name} failed ({}): {}", out.status, text.trim()))
}
