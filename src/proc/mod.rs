//! The process layer shared by every harness that starts processes: the task group (process
//! group, reaping, kill-all, kill on drop), the start-up every forked child runs, the start
//! gate, a duet's start barrier, how a child's end is described, the one error for a refused fork, signal handling,
//! the process limits checked before anything starts, the machine-wide lock that lets one
//! measurement run at a time (`measure_lock`), and a campaign step's containment (its
//! cgroup and this process as subreaper, `contain`). What truly differs per harness (the
//! exec'd UnixBench worker and its text protocol, AIM's report pipe, will-it-scale's shared
//! counters) stays in the harness.

pub mod barrier;
pub mod child;
pub mod contain;
pub mod gate;
pub mod group;
pub mod limits;
pub mod lock_holder;
pub mod measure_lock;
pub mod signals;
pub mod status;
pub mod supervise;

pub use group::TaskGroup;

/// The error for a fork (or thread, or exec) that the system refused after `started` of
/// `wanted` tasks: the same words and exit status (2, a limit to raise) in every command.
pub fn start_refused(
    what: &str,
    started: usize,
    wanted: usize,
    err: std::io::Error,
    knob: &str,
) -> anyhow::Error {
    crate::error::Usage(format!(
        "{what}: only {started} of {wanted} tasks could be started ({err}) and those were \
         stopped; raise the process limit (`ulimit -u`, the cgroup's pids.max, kernel.pid_max) \
         or the address-space limit (`ulimit -v`), or lower {knob}"
    ))
    .into()
}
