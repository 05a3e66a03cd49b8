//! tlb_flush2 — "TLB flush of anonymous memory private mapping": as tlb_flush1 on 1 MiB of
//! anonymous memory (the byte reads back 0 after MADV_DONTNEED); one operation per page.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "tlb_flush2",
    description: "TLB flush of anonymous memory private mapping",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
    flush_pages(ctx, FILESIZE as usize, flags, -1, 0)
}
