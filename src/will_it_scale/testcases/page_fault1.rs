//! page_fault1 — "Anonymous memory page fault": map 128 MiB of anonymous memory, write one
//! byte per page (one operation per page), unmap.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "page_fault1",
    description: "Anonymous memory page fault",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    fault_pages(ctx, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1)
}
