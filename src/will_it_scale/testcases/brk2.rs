//! brk2 — "brk unshared increase/decrease of one page": first extend the heap by one page (the
//! new page belongs to this task alone, not to memory inherited from the driver), then move
//! the break from the new end up one page and back, forever; counts 2. will-it-scale's
//! `sbrk(page)` is the same single brk call; here it is the raw system call, as in brk1.

use super::brk1::{brk, up_and_down};
use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "brk2",
    description: "brk unshared increase/decrease of one page",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let page = crate::counter_harness::page_size();
    let end = brk(0) + page;
    if brk(end) != end {
        anyhow::bail!("brk could not extend the heap by one page");
    }
    up_and_down(ctx, end)
}
