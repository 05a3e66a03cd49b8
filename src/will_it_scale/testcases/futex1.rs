//! futex1 — "futex(FUTEX_WAKE)": wake waiters of a private word that has none.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "futex1",
    description: "futex(FUTEX_WAKE)",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let word = Box::new(0u32);
    let addr: *const u32 = &*word;
    loop {
        // SAFETY: FUTEX_WAKE on a valid, aligned word.
        ok(
            unsafe { libc::syscall(libc::SYS_futex, addr, libc::FUTEX_WAKE, 1, 0, 0, 0) },
            "futex wake",
        )?;
        ctx.slot.add(1);
    }
}
