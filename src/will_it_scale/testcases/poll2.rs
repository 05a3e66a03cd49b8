//! poll2 — "poll of 128 fds": non-blocking poll for POLLOUT on 128 private files.
//!
//! In thread mode all tasks share one descriptor table, so N tasks hold N × 128 files at once:
//! more than `ulimit -n 1024` allows above 7 tasks. will-it-scale's prepare sets the limit to
//! (128 + 10) × CPUs; here the driver raises the soft limit to (128 + 10) × tasks + 64 before
//! any task starts, as far as the hard limit allows (processes inherit it too, where one
//! process needs only its own 128). Where the hard limit is too low for thread mode, each task
//! stops before opening anything, with one line giving the number needed.

use super::*;
use crate::counter_harness::Mode;
use nix::sys::resource::{getrlimit, setrlimit, Resource};

pub const TESTCASE: Testcase = Testcase {
    name: "poll2",
    description: "poll of 128 fds",
    prepare,
    run,
    helpers: 0,
};

const FILES: usize = 128;
/// Descriptors allowed per task beyond its files, and for the driver and host.
const SPARE_PER_TASK: usize = 10;
const SPARE: u64 = 64;

/// Descriptors `tasks` threads of one process need at most.
fn needed(tasks: usize) -> u64 {
    (tasks * (FILES + SPARE_PER_TASK)) as u64 + SPARE
}

fn prepare(_dir: &Path, tasks: usize) -> Result<Prepared> {
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).context("getrlimit(RLIMIT_NOFILE)")?;
    let want = needed(tasks).min(hard);
    if soft < want {
        setrlimit(Resource::RLIMIT_NOFILE, want, hard)
            .context("cannot raise the open-file limit (RLIMIT_NOFILE)")?;
    }
    Ok(Prepared::default())
}

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    if ctx.mode == Mode::Thread {
        let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).context("getrlimit")?;
        let need = needed(ctx.tasks);
        if soft < need {
            let most = hard.saturating_sub(SPARE) / (FILES + SPARE_PER_TASK) as u64;
            anyhow::bail!(
                "poll2 in {} threads needs {need} open files in one process, but the hard \
                 limit (ulimit -Hn) is {hard}; raise it or run at most {most} threads",
                ctx.tasks
            );
        }
    }
    super::poll1::poll_loop(ctx, FILES)
}
