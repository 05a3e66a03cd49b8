//! AIM7 `fork_test` ("Task Creations", args "100", factor 100): one job does 100 × (fork; the
//! child calls the libc `exit(0)`; the parent `wait()`s until ECHILD).

use super::shell::fork_and_wait;
use super::{Factor, Fail, Job, TaskCtx};

pub const JOB: Job = Job {
    name: "fork_test",
    args: "100",
    factor: Factor::Fixed(100),
    units: "Task Creations",
    extra_procs: 1,
    counters: &["fork", "reaped"],
    run,
    ..Job::BASE
};

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let forks: u64 = ctx.arg(0)?;
    for _ in 0..forks {
        ctx.counters[0] += 1;
        fork_and_wait(|| 0)?;
        ctx.counters[1] += 1;
    }
    Ok(())
}
