//! tlb_flush1 — "TLB flush of separate file private mapping": map the task's own 128 MiB
//! (sparse, ftruncate-sized) file privately; for every page write a byte, madvise
//! (MADV_DONTNEED) that page, which drops the private copy and flushes its TLB entry, and
//! read the byte back (0 again); one operation per page.

use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "tlb_flush1",
    description: "TLB flush of separate file private mapping",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let (file, _) = private_file(ctx.dir, MEMSIZE as u64)?;
    flush_pages(ctx, MEMSIZE, libc::MAP_PRIVATE, file.as_raw_fd(), 0)
}
