//! sched_yield — "sched_yield": give up the CPU; with one task per CPU it returns at once.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "sched_yield",
    description: "sched_yield",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    loop {
        // SAFETY: sched_yield has no preconditions.
        unsafe { libc::sched_yield() };
        ctx.slot.add(1);
    }
}
