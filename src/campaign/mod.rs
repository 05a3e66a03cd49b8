//! The campaign engine: runs the steps of a campaign (`crate::record::campaign` holds what a
//! campaign is and the state it keeps in the store) one after another, each with an executor,
//! storing each step's run the moment it ends, until the schedule is done.
//!
//! - [`driver`]: the loop: claim the next step, run it, check it ran where it should, store it
//!   (or count its failure and retry it once), decide the rounds of `--until` after the pilot,
//!   stop on `campaign stop`, on a signal (the step handed back, resumable) or at the end.
//! - [`executor`]: what an executor does ("run this step, hand back a run or a failure with its
//!   console"), and the workload command line every executor runs.
//! - [`local`]: the running kernel; sides differ by their setup commands.
//! - [`kexec`]: bare metal: each step in a boot of its own, reached with kexec, resumed by a
//!   boot hook.
//! - [`vm`]: a fresh QEMU guest per step, booting the side's kernel on the host's root.
//! - [`primary`]: which metric the schedule follows, its per-round ratios, and the `--until`
//!   decision (Stein's two-stage rule on the pilot's ratios).
//!
//! A step runs the measuring command as a program (`patchbench run ... --json FILE
//! --no-store`) inside whatever the executor provides; the engine never reaches into the
//! harnesses.

pub mod driver;
pub mod executor;
pub mod kernel_image;
pub mod kexec;
pub mod local;
pub mod primary;
pub mod vm;
