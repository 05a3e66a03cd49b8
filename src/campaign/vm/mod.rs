//! The `vm` executor: each step boots its side's kernel in a fresh QEMU guest whose root is
//! the host's `/` (read-only over 9p), runs the side's setup and the workload there, and reads
//! the run back from a private result directory, with the kernel, command line and boot the
//! guest recorded from inside. A duet runs a round's two steps at once, each guest on its own
//! half of the CPU set, every measured pass started together at a barrier.
//!
//! - [`options`]: vCPUs, memory, CPU set, TCG, the QEMU program, with their defaults.
//! - [`checks`]: what is checked before anything starts (tools, accelerator, images, modules).
//! - [`accel`]: KVM when usable (not on a PVM host), else TCG only when allowed.
//! - [`host_tools`]: QEMU, a static busybox, `mkfs`, found on the host.
//! - [`cpus`]: default CPU sets, a duet's halves swapped per round, pinning QEMU.
//! - [`modules`]: which modules the guest loads, from `modules.dep`, decompressed.
//! - [`initramfs`], [`init_script`]: the per-side initramfs and its `/init`.
//! - [`step_script`]: the per-step script the guest runs.
//! - [`qemu`]: the QEMU command line.
//! - [`barrier`]: the host side of a duet's start barrier.
//! - [`readback`]: the step's outcome from the result directory and the console.
//!
//! Files live in one private directory (mode 0700) of the campaign process: the initramfs of
//! each side (built once), and per step a result directory (exported to the guest) removed
//! when the step has been read.

pub mod accel;
pub mod barrier;
pub mod checks;
pub mod cpus;
pub mod host_tools;
pub mod init_script;
pub mod initramfs;
pub mod modules;
pub mod options;
pub mod qemu;
pub mod readback;
pub mod sh_quote;
pub mod step_script;

use super::executor::{workload_args, Executor, StepOutcome, StepRequest};
use crate::error::Usage;
use crate::private_dir::PrivateDir;
use crate::proc::signals::Signals;
use crate::proc::supervise::{wait_all, Outcome, Supervised, Ticking};
use crate::record::campaign::spec::{CampaignSpec, ExecutorKind};
use crate::record::campaign::{add_run_warning, GuestInfo};
use crate::record::RunRecord;
use accel::Accel;
use checks::Checked;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs steps in QEMU guests.
pub struct Vm {
    dir: PrivateDir,
    checked: Checked,
    /// Each side's initramfs, once built.
    initramfs: HashMap<String, PathBuf>,
}

/// A guest ready to start (its command apart).
struct Prepared {
    result_dir: PathBuf,
    guest: GuestInfo,
    scratch: Option<String>,
}

impl Vm {
    /// Checks everything a `vm` campaign needs (`checks::check`; a problem is a
    /// [`Usage`] error, nothing started) and makes the private directory.
    pub fn new(spec: &CampaignSpec) -> anyhow::Result<Vm> {
        let checked = checks::check(spec).map_err(Usage)?;
        let dir = PrivateDir::create(&std::env::temp_dir(), "patchbench-vm-")
            .map_err(|e| anyhow::anyhow!("cannot make a private directory for the guests: {e}"))?;
        Ok(Vm {
            dir,
            checked,
            initramfs: HashMap::new(),
        })
    }

    /// The accelerator the guests run under.
    pub fn accel(&self) -> Accel {
        self.checked.accel
    }

    /// Removes the private directory.
    pub fn close(self) -> anyhow::Result<()> {
        self.dir.close()
    }

    fn initramfs_for(&mut self, spec: &CampaignSpec, side: &str) -> Result<PathBuf, String> {
        if let Some(p) = self.initramfs.get(side) {
            return Ok(p.clone());
        }
        let plan = self
            .checked
            .side(side)
            .ok_or_else(|| format!("no side called {side}"))?;
        let contents = initramfs::Contents {
            release: plan.kernel.release.clone(),
            busybox: self.checked.busybox.clone(),
            modules: plan.modules.clone(),
            modules_dir: plan.kernel.modules.clone(),
            scratch_fs: spec.scratch.as_ref().map(|s| s.fs.clone()),
            initrd: plan.kernel.initrd.clone(),
            // Canonical: the guest binds it back by this path inside the host's root.
            program_dir: spec
                .program
                .canonicalize()
                .unwrap_or_else(|_| spec.program.clone())
                .parent()
                .map(Path::to_path_buf),
        };
        let path = initramfs::build(self.dir.path(), side, &contents)?;
        self.initramfs.insert(side.to_string(), path.clone());
        Ok(path)
    }

    /// Makes the step's result directory and script, and the pinned QEMU command.
    fn prepare(
        &mut self,
        req: &StepRequest,
        cpus: Vec<u32>,
        barrier: Option<PathBuf>,
    ) -> Result<(Prepared, Command), String> {
        let spec = req.spec;
        let initramfs = self.initramfs_for(spec, &req.side.name)?;
        let plan = self
            .checked
            .side(&req.side.name)
            .ok_or_else(|| format!("no side called {}", req.side.name))?;
        let result_dir = self
            .dir
            .path()
            .join(format!("step-{}-{}", req.step.id, req.step.attempts));
        if result_dir.exists() {
            std::fs::remove_dir_all(&result_dir)
                .map_err(|e| format!("cannot empty {}: {e}", result_dir.display()))?;
        }
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&result_dir)
                .map_err(|e| format!("cannot make {}: {e}", result_dir.display()))?;
        }
        let in_guest = Path::new(init_script::RESULT_MOUNT);
        let scratch_dir = spec
            .scratch
            .as_ref()
            .map(|_| Path::new(init_script::SCRATCH_MOUNT));
        let args = workload_args(spec, &in_guest.join(step_script::RESULT_FILE), scratch_dir);
        let script = step_script::StepScript {
            step_id: req.step.id,
            campaign: &spec.name,
            side: &req.side.name,
            round: req.step.round,
            setup: req.side.setup.as_deref(),
            program: &spec.program,
            args: &args,
            settle_s: spec.settle_s,
        };
        let script_path = result_dir.join(step_script::SCRIPT_FILE);
        std::fs::write(&script_path, script.render())
            .map_err(|e| format!("cannot write {}: {e}", script_path.display()))?;
        let options = &self.checked.options;
        // A RAM disk built into the kernel takes its size from the command line (a module
        // gets it from insmod, `checks::brd_args`); the side's words still come last.
        let mut words = match &spec.scratch {
            Some(s) if !plan.modules.iter().any(|(m, _)| m.name == "brd") => checks::brd_args(s)
                .split_whitespace()
                .map(|w| format!("brd.{w}"))
                .collect(),
            _ => Vec::new(),
        };
        words.extend(req.side.cmdline.iter().cloned());
        let guest = qemu::Guest {
            qemu: &self.checked.qemu,
            accel: self.checked.accel,
            vcpus: options.vcpus,
            memory_mib: options.memory_mib,
            kernel: &plan.kernel.image,
            initramfs: &initramfs,
            step_id: req.step.id,
            side_words: &words,
            result_dir: &result_dir,
            barrier,
        };
        let argv = guest.argv();
        let mut command = Command::new(&argv[0]);
        command.args(&argv[1..]);
        cpus::pin(&mut command, &cpus)?;
        let prepared = Prepared {
            result_dir,
            guest: GuestInfo {
                accelerator: self.checked.accel.as_str().to_string(),
                qemu_command: argv,
                vcpus: options.vcpus,
                memory_mib: options.memory_mib,
                cpus,
            },
            scratch: spec
                .scratch
                .as_ref()
                .map(|s| format!("{s} on /dev/ram0 (brd) in the guest")),
        };
        Ok((prepared, command))
    }

    /// Warnings every run of this executor carries.
    fn warnings(&self) -> Vec<String> {
        match (self.checked.accel, &self.checked.accel_note) {
            (Accel::Tcg, note) => vec![format!(
                "measured under TCG, QEMU's emulator{}: the numbers time an emulated CPU, \
                 not the kernel",
                note.as_ref()
                    .map(|n| format!(" (KVM: {n})"))
                    .unwrap_or_default()
            )],
            (Accel::Kvm, _) => Vec::new(),
        }
    }

    /// Reads a finished guest back and removes its result directory.
    fn finish(&self, req: &StepRequest, prepared: Prepared, out: Outcome) -> StepOutcome {
        let warnings = self.warnings();
        let outcome = readback::outcome(
            &prepared.result_dir,
            out,
            readback::Context {
                step_id: req.step.id,
                timeout_s: req.spec.step_timeout_s,
                has_setup: req.side.setup.is_some(),
                guest: prepared.guest,
                scratch: prepared.scratch,
                warnings: &warnings,
            },
        );
        let _ = std::fs::remove_dir_all(&prepared.result_dir);
        // The image this machine booted (a lab box boots its own build of the side).
        match (outcome, self.checked.side(&req.side.name)) {
            (StepOutcome::Measured(mut m), Some(plan)) => {
                m.kernel.image = Some(plan.kernel.image.display().to_string());
                m.kernel.image_sha256 = Some(plan.kernel.sha256.clone());
                StepOutcome::Measured(m)
            }
            (other, _) => other,
        }
    }
}

fn deadline(spec: &CampaignSpec) -> Instant {
    Instant::now() + Duration::from_secs_f64(spec.step_timeout_s.max(1.0))
}

/// The warning for a duet run whose workload uses more CPUs than its guest has: the two guests
/// then compete for the host's CPUs, and a pair's ratio measures that fight.
pub fn duet_fitness(record: &RunRecord, vcpus: u32) -> Option<String> {
    let n = most_tasks(record).filter(|&n| n > u64::from(vcpus))?;
    Some(format!(
        "not fit for duet: the workload runs up to {n} copies or tasks in a guest of {vcpus} \
         vCPU(s), so the two guests compete for CPUs"
    ))
}

/// The most copies or tasks a run used at once (its metrics' `copies`, `tasks`, `load` or
/// `threads`).
pub fn most_tasks(record: &RunRecord) -> Option<u64> {
    record
        .metrics
        .iter()
        .flat_map(|m| {
            ["copies", "tasks", "load", "threads"]
                .iter()
                .filter_map(|k| m.params.get(*k)?.parse::<u64>().ok())
        })
        .max()
}

impl Executor for Vm {
    fn kind(&self) -> ExecutorKind {
        ExecutorKind::Vm
    }

    fn run_step(
        &mut self,
        req: &StepRequest,
        signals: &Signals,
        on_line: &mut dyn FnMut(&str),
        on_tick: &mut dyn FnMut(),
    ) -> StepOutcome {
        let _measuring = match hold_measurement_lock(signals, on_line, on_tick) {
            Ok(h) => h,
            Err(outcome) => return outcome,
        };
        let cpus = self.checked.options.cpus.clone();
        let (prepared, command) = match self.prepare(req, cpus, None) {
            Ok(p) => p,
            Err(e) => return StepOutcome::failed(format!("cannot prepare the guest: {e}"), ""),
        };
        let child = match Supervised::spawn(command) {
            Ok(c) => c,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&prepared.result_dir);
                return StepOutcome::failed(
                    format!("cannot start {}: {e}", self.checked.qemu.display()),
                    "",
                );
            }
        };
        let out = child.wait(
            signals,
            Some(deadline(req.spec)),
            &mut |l| {
                on_line(l);
                true
            },
            on_tick,
        );
        self.finish(req, prepared, out)
    }

    fn run_pair(
        &mut self,
        reqs: [&StepRequest; 2],
        signals: &Signals,
        on_line: &mut dyn FnMut(&str),
        on_tick: &mut dyn FnMut(),
    ) -> Option<[StepOutcome; 2]> {
        Some(self.duet(reqs, signals, on_line, on_tick))
    }
}

impl Vm {
    /// Runs a round's two steps at once: base on one half of the CPU set, patched on the
    /// other (which half is drawn per round), started together at every barrier.
    fn duet(
        &mut self,
        reqs: [&StepRequest; 2],
        signals: &Signals,
        on_line: &mut dyn FnMut(&str),
        on_tick: &mut dyn FnMut(),
    ) -> [StepOutcome; 2] {
        let _measuring = match hold_measurement_lock(signals, on_line, on_tick) {
            Ok(h) => h,
            Err(outcome) => {
                let second = match &outcome {
                    StepOutcome::Interrupted(i) => StepOutcome::Interrupted(i.clone()),
                    _ => StepOutcome::failed("the measurement lock cannot be taken", ""),
                };
                return [outcome, second];
            }
        };
        let spec = reqs[0].spec;
        let halves = cpus::duet_sets(&self.checked.options.cpus, spec.seed, reqs[0].step.round);
        let half_of = |side: &str| {
            if side == crate::record::campaign::spec::SIDES[0] {
                halves[0].clone()
            } else {
                halves[1].clone()
            }
        };
        let both_failed = |why: String| {
            [
                StepOutcome::failed(why.clone(), ""),
                StepOutcome::failed(why, ""),
            ]
        };
        let sockets: Vec<PathBuf> = reqs
            .iter()
            .map(|r| self.dir.path().join(format!("barrier-{}.sock", r.step.id)))
            .collect();
        let mut barrier = match barrier::Barrier::listen(&sockets) {
            Ok(b) => b,
            Err(e) => return both_failed(format!("duet barrier: {e}")),
        };
        let mut prepared = Vec::new();
        let mut commands = Vec::new();
        for (i, req) in reqs.iter().enumerate() {
            let sock = barrier.socket(i).to_path_buf();
            match self.prepare(req, half_of(&req.side.name), Some(sock)) {
                Ok((p, c)) => {
                    prepared.push(p);
                    commands.push(c);
                }
                Err(e) => {
                    remove_result_dirs(&prepared);
                    return both_failed(format!("cannot prepare the guests: {e}"));
                }
            }
        }
        let mut children = Vec::new();
        for command in commands {
            match Supervised::spawn(command) {
                Ok(c) => children.push(c),
                Err(e) => {
                    // Dropping a started guest kills it.
                    drop(children);
                    remove_result_dirs(&prepared);
                    return both_failed(format!(
                        "cannot start {}: {e}",
                        self.checked.qemu.display()
                    ));
                }
            }
        }
        let names = [reqs[0].side.name.clone(), reqs[1].side.name.clone()];
        let outs = wait_all(
            children,
            signals,
            Some(deadline(spec)),
            &mut |i, line| {
                on_line(&format!("{}: {line}", names[i]));
                true
            },
            &mut Ticking {
                inner: &mut barrier,
                tick: on_tick,
            },
        );
        let released = barrier.released;
        on_line(&format!(
            "duet: the guests were released together {released} time(s)"
        ));
        drop(barrier);
        let vcpus = self.checked.options.vcpus;
        let mut results = Vec::new();
        for ((req, p), out) in reqs.iter().zip(prepared).zip(outs) {
            let mut outcome = self.finish(req, p, out);
            if let StepOutcome::Measured(m) = &mut outcome {
                m.record.extra.insert(
                    "duet_barrier_releases".to_string(),
                    serde_json::Value::from(released),
                );
                if let Some(w) = duet_fitness(&m.record, vcpus) {
                    add_run_warning(&mut m.record, w);
                }
            }
            results.push(outcome);
        }
        let second = results
            .pop()
            .unwrap_or_else(|| StepOutcome::failed("lost", ""));
        let first = results
            .pop()
            .unwrap_or_else(|| StepOutcome::failed("lost", ""));
        [first, second]
    }
}

fn remove_result_dirs(prepared: &[Prepared]) {
    for p in prepared {
        let _ = std::fs::remove_dir_all(&p.result_dir);
    }
}

/// The host's measurement lock for a step's guest (`crate::proc::measure_lock`): the guest
/// measures on this machine's CPUs, so no other measurement of this machine runs beside it.
/// Waiting says whom for once and ends on an interruption (the step is then handed back).
fn hold_measurement_lock(
    signals: &Signals,
    on_line: &mut dyn FnMut(&str),
    on_tick: &mut dyn FnMut(),
) -> Result<crate::proc::measure_lock::Held, StepOutcome> {
    // `on_tick` while waiting: an agent's step keeps its lease alive (a wait longer than the
    // lease would otherwise hand the step to another box).
    match crate::proc::measure_lock::hold_while(on_line, &mut || {
        on_tick();
        signals.sleep(std::time::Duration::from_millis(100))
    }) {
        Ok(Ok(held)) => Ok(held),
        Ok(Err(i)) => Err(StepOutcome::Interrupted(i)),
        Err(e) => Err(StepOutcome::failed(format!("{e:#}"), "")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Direction, Metric};

    #[test]
    fn a_duet_workload_with_more_tasks_than_vcpus_is_not_fit() {
        let mut r = RunRecord::new(
            crate::record::Kind::Unixbench,
            Default::default(),
            &std::collections::BTreeMap::<String, String>::new(),
        );
        let metric = |copies: &str| {
            Metric::new(
                "unixbench.score",
                &[("copies", copies.to_string()), ("test", "pipe".into())],
                "",
                "",
                Direction::HigherIsBetter,
                1.0,
                vec![],
            )
        };
        r.metrics = vec![metric("1")];
        assert_eq!(duet_fitness(&r, 1), None);
        r.metrics.push(metric("2"));
        let w = duet_fitness(&r, 1).unwrap();
        assert!(
            w.contains("not fit for duet") && w.contains("2 copies"),
            "{w}"
        );
        assert_eq!(duet_fitness(&r, 2), None);
    }
}
