//! The campaign engine: runs the steps of a campaign (`crate::record::campaign` holds what a
//! campaign is and the state it keeps in the store) one after another, each with an executor,
//! storing each step's run the moment it ends, until the schedule is done. Commands parse
//! arguments, call [`flow`]'s functions (re-exported here) and print what they return; library
//! code drives campaigns the same way.
//!
//! - [`flow`]: from a spec to its end: the one choice of what runs the steps
//!   ([`runner_for`]), [`create`], [`run`], [`resume`], [`stop`], [`find`].
//! - [`agent`]: a lab box's worker loop (`patchbench agent`), beside the driver it runs.
//! - [`driver`]: the loop: claim the next step, run it, check it ran where it should, store it
//!   (or count its failure and retry it once), decide the rounds of `--until` after the pilot,
//!   stop on `campaign stop`, on a signal (the step handed back, resumable) or at the end.
//! - [`executor`]: what an executor does ("run this step, hand back a run or a failure with its
//!   console"), and the workload command line every executor runs.
//! - [`local`]: the running kernel; sides differ by their setup commands.
//! - [`kexec`]: bare metal: each step in a boot of its own, reached with kexec, resumed by a
//!   boot hook.
//! - [`vm`]: a fresh QEMU guest per step, booting the side's kernel on the host's root.
//! - [`scripted`]: an executor whose outcomes and timings a test gives, for tests of the
//!   driver and the flow without QEMU or a server.
//! - [`primary`]: which metric the schedule follows, its per-round ratios, and the `--until`
//!   decision (Stein's two-stage rule on the pilot's ratios).
//!
//! A step runs the measuring command as a program (`patchbench run ... --json FILE
//! --no-store`) inside whatever the executor provides; the engine never reaches into the
//! harnesses.

pub mod agent;
pub mod built;
pub mod driver;
pub mod executor;
pub mod flow;
pub mod kernel_image;
pub mod kexec;
pub mod local;
pub mod primary;
pub mod scripted;
pub mod vm;

#[cfg(test)]
mod tests;

pub use driver::End;
pub use flow::{
    agent_may_offer, check_host_before_build, create, default_executor, find, resume, run,
    run_by_one_process, runner_for, stop, By, Resumed, Runner, Stopped, Summary,
};
