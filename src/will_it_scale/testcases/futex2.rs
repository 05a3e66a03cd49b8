//! futex2 — "futex(FUTEX_WAIT)": wait on a private word with a value it does not hold, so the
//! call returns EAGAIN at once; measures the syscall path, never sleeps.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "futex2",
    description: "futex(FUTEX_WAIT)",
    prepare: no_prepare,
    run: |ctx| wait_loop(ctx, libc::FUTEX_WAIT),
    helpers: 0,
};

/// futex(`op`) waiting for the value 1 on a word that holds 0, which returns at once, forever
/// (also used by futex4).
pub fn wait_loop(ctx: &TaskCtx<'_>, op: libc::c_int) -> Result<()> {
    let word = Box::new(0u32);
    let addr: *const u32 = &*word;
    loop {
        // SAFETY: a wait on a valid word with a mismatching value returns at once.
        let r = unsafe { libc::syscall(libc::SYS_futex, addr, op, 1, 0, 0, 0) };
        if r == 0 {
            anyhow::bail!("futex wait returned 0 although the value did not match");
        }
        ctx.slot.add(1);
    }
}
