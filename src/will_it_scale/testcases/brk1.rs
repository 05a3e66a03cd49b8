//! brk1 — "brk increase/decrease of one page": read the program break once, then forever move
//! it up one page and back; counts 2 (two brk calls per loop, as in will-it-scale). Uses the
//! raw system call, so the C library's idea of the break is untouched.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "brk1",
    description: "brk increase/decrease of one page",
    prepare: no_prepare,
    run,
    helpers: 0,
};

/// The brk system call: asks for the break at `addr` and returns the break it now has (the old
/// one when the request failed; `brk(0)` only reads it).
pub fn brk(addr: usize) -> usize {
    // SAFETY: SYS_brk only moves the break; it returns the (possibly unchanged) break.
    unsafe { libc::syscall(libc::SYS_brk, addr) as usize }
}

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    up_and_down(ctx, brk(0))
}

/// Moves the break from `base` up one page and back down, forever; counts 2 per round (also
/// used by brk2).
pub fn up_and_down(ctx: &TaskCtx<'_>, base: usize) -> Result<()> {
    let page = crate::counter_harness::page_size();
    loop {
        if brk(base + page) != base + page {
            anyhow::bail!("brk could not grow the heap by one page");
        }
        brk(base);
        ctx.slot.add(2);
    }
}
