//! getppid1 — "getppid": the cheapest system call; measures the syscall entry and exit path.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "getppid1",
    description: "getppid",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    loop {
        // SAFETY: getppid has no preconditions (glibc does not cache it).
        std::hint::black_box(unsafe { libc::getppid() });
        ctx.slot.add(1);
    }
}
