//! The machine a kexec campaign's boot acts on, as one interface: which kernel and command
//! line this boot is, what runs a step on it, loading the next kernel and jumping to it.
//! [`ThisMachine`] is the real one (`uname` and `/proc/cmdline`, the local executor,
//! [`super::load`]'s `kexec_file_load` and reboot). A boot's part ([`super::boot::BootRun`])
//! reaches the machine only through it, so a test's fake can record the loads and jumps, play
//! the next boot itself and script the steps, running a chain of boots and its failures
//! through the same code without rebooting anything (`tests/campaign_kexec.rs`).

use super::load::{self, Authority, Loader};
use crate::campaign::executor::{this_kernel, Executor};
use crate::campaign::local::Local;
use crate::record::campaign::spec::BootTarget;
use crate::record::campaign::KernelInfo;

/// What a kexec campaign's boot needs of the machine it runs on.
pub trait Machine {
    /// This boot's kernel: its release and its command line.
    fn kernel(&self) -> KernelInfo;
    /// What runs a step on this boot's kernel (the local executor; [`super::Kexec`] wraps
    /// it).
    fn step_executor(&mut self) -> anyhow::Result<Box<dyn Executor>>;
    /// Loads `target` as the kernel the next kexec boots ([`load::load`]).
    fn load(&mut self, target: &BootTarget, auth: &Authority) -> Result<Loader, String>;
    /// Jumps to the loaded kernel ([`load::jump`]): returns only on failure, or once the
    /// shutdown is under way.
    fn jump(&mut self, auth: &Authority) -> Result<(), String>;
    /// Unloads the loaded kernel after a jump failed ([`load::unload`]).
    fn unload(&mut self) -> Result<(), String>;
}

/// The machine this process runs on.
#[derive(Debug, Clone, Copy, Default)]
pub struct ThisMachine;

impl Machine for ThisMachine {
    fn kernel(&self) -> KernelInfo {
        this_kernel()
    }

    fn step_executor(&mut self) -> anyhow::Result<Box<dyn Executor>> {
        Ok(Box::new(Local::new()?))
    }

    fn load(&mut self, target: &BootTarget, auth: &Authority) -> Result<Loader, String> {
        load::load(target, auth)
    }

    fn jump(&mut self, auth: &Authority) -> Result<(), String> {
        load::jump(auth)
    }

    fn unload(&mut self) -> Result<(), String> {
        load::unload()
    }
}
