//! tlb_flush3 — "TLB flush of separate file shared mapping": as tlb_flush1 on a shared mapping
//! of the task's own 128 MiB file; MADV_DONTNEED unmaps the page but the page cache keeps the
//! byte, so it reads back 1; one operation per page.

use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "tlb_flush3",
    description: "TLB flush of separate file shared mapping",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let (file, _) = private_file(ctx.dir, MEMSIZE as u64)?;
    flush_pages(ctx, MEMSIZE, libc::MAP_SHARED, file.as_raw_fd(), 1)
}
