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
//! - [`side_kernel`]: which kernel a side boots, and with what.
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
pub mod side_kernel;
pub mod vm;

#[cfg(test)]
mod tests;

pub use driver::End;
pub use flow::{
    agent_may_offer, check_host_before_build, create, default_executor, find, resume, run,
    run_by_one_process, runner_for, stop, supports, Asks, By, Resumed, Runner, Stopped, Summary,
};

/// The longest campaign name.
pub const NAME_MAX: usize = 64;

/// Checks the name of a campaign, or of what names campaigns after itself (a bisection, `what`):
/// 1 to `max` letters, digits, `._-`, not starting with `-` or `.` (it becomes a label prefix
/// and is typed on command lines).
pub fn check_name(what: &str, name: &str, max: usize) -> anyhow::Result<()> {
    let ok = !name.is_empty()
        && name.len() <= max
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && !name.starts_with(['-', '.']);
    if ok {
        Ok(())
    } else {
        crate::error::usage(format!(
            "{what} name {:?} is not usable: use 1-{max} letters, digits, '.', '_' or '-', not \
             starting with '-' or '.'",
            crate::safe_text::field(name)
        ))
    }
}
