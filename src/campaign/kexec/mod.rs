//! The `kexec` executor: the campaign on bare metal. Each step runs in a boot of its own,
//! reached with kexec from the boot before it; the campaign's state lives in the store on a
//! persistent disk, and the boot hook (`campaign resume --boot`, a systemd unit written by
//! `campaign install-hook`) does each boot's part.
//!
//! - [`cmdline`]: the words a step's boot carries (`patchbench.campaign=NAME
//!   patchbench.step=ID patchbench.via=kexec`) and reading them back.
//! - [`preflight`]: what is checked before anything changes (CAP_SYS_BOOT, kexec disabled,
//!   lockdown and signatures, initrd and modules, the kernel to return to, a store that
//!   survives a reboot).
//! - [`load`]: loading a kernel (`kexec_file_load`, kexec-tools) and jumping to it, each only
//!   with an [`load::Authority`].
//! - [`machine`]: the machine a boot acts on (this boot's kernel, what runs its step, loading
//!   and jumping), one interface a test can fake.
//! - [`boot`]: what one boot does: check it is the expected step's, run it, store it, go on.
//! - [`hook`]: the systemd unit that runs the hook once per boot.
//! - [`flow`]: what the commands call: the checks before a start, the first reboot, a
//!   `resume` by hand, a boot's part; the store a kexec campaign needs (a file).
//! - [`modules`]: a built kernel's modules installed in `/lib/modules` (never over another's).
//!
//! The step itself runs exactly as the local executor runs one ([`Kexec`] wraps it); only the
//! boot it runs in differs.

pub mod boot;
pub mod cmdline;
pub mod flow;
pub mod hook;
pub mod load;
pub mod machine;
pub mod modules;
pub mod preflight;

use super::executor::{Executor, StepOutcome, StepRequest};
use crate::proc::signals::Signals;
use crate::record::campaign::spec::ExecutorKind;
use crate::record::campaign::KernelInfo;

/// Runs the step of this boot on the running kernel, recording how the boot came about.
pub struct Kexec {
    /// What runs the step here: the local executor ([`machine::Machine::step_executor`]).
    local: Box<dyn Executor>,
    via: String,
    kernel: KernelInfo,
}

impl Kexec {
    /// `local` runs the step; `via`: `kexec` or `firmware`, as this boot's command line says;
    /// `kernel`: this boot's kernel as its [`machine::Machine`] reads it (on a real machine
    /// what the local executor reads too: the same boot's `uname` and `/proc/cmdline`),
    /// recorded with each run and checked against the side's.
    pub fn new(local: Box<dyn Executor>, via: &str, kernel: KernelInfo) -> Kexec {
        Kexec {
            local,
            via: via.to_string(),
            kernel,
        }
    }

    /// Ends the step executor (the local one removes its private directory).
    pub fn close(self) {
        drop(self.local);
    }
}

impl Executor for Kexec {
    fn kind(&self) -> ExecutorKind {
        ExecutorKind::Kexec
    }

    fn run_step(
        &mut self,
        req: &StepRequest,
        signals: &Signals,
        on_line: &mut dyn FnMut(&str),
        on_tick: &mut dyn FnMut(),
    ) -> StepOutcome {
        match self.local.run_step(req, signals, on_line, on_tick) {
            StepOutcome::Measured(mut m) => {
                if let Some(b) = m.boot.as_mut() {
                    b.via = self.via.clone();
                }
                m.kernel = self.kernel.clone();
                StepOutcome::Measured(m)
            }
            other => other,
        }
    }
}
