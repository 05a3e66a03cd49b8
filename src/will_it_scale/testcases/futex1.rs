//! futex1 — "futex(FUTEX_WAKE)": wake waiters of a private word that has none.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "futex1",
    description: "futex(FUTEX_WAKE)",
    prepare: no_prepare,
    run: |ctx| wake_loop(ctx, libc::FUTEX_WAKE),
    helpers: 0,
};

/// futex(`op`) waking one waiter of a word nobody waits on, forever (also used by futex3).
pub fn wake_loop(ctx: &TaskCtx<'_>, op: libc::c_int) -> Result<()> {
    let word = Box::new(0u32);
    let addr: *const u32 = &*word;
    loop {
        ok(
            // SAFETY: a wake on a valid, aligned word.
            unsafe { libc::syscall(libc::SYS_futex, addr, op, 1, 0, 0, 0) },
            "futex wake",
        )?;
        ctx.slot.add(1);
    }
}
