//! brk1 — "brk increase/decrease of one page": move the program break up one page and back;
//! counts 2. Uses the raw system call, so the C library's idea of the break is untouched.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "brk1",
    description: "brk increase/decrease of one page",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn brk(addr: usize) -> usize {
    // SAFETY: SYS_brk only moves the break; it returns the (possibly unchanged) break.
    unsafe { libc::syscall(libc::SYS_brk, addr) as usize }
}

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let page = crate::counter_harness::page_size();
    loop {
        let start = brk(0);
        if brk(start + page) != start + page {
            anyhow::bail!("brk could not grow the heap by one page");
        }
        brk(start);
        ctx.slot.add(2);
    }
}
