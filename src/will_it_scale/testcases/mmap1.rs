//! mmap1 — "Anonymous memory mmap/munmap of 128MB": map and unmap 128 MiB of anonymous
//! memory without touching it.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "mmap1",
    description: "Anonymous memory mmap/munmap of 128MB",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    loop {
        let p = map(MEMSIZE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1)?;
        unmap(p, MEMSIZE)?;
        ctx.slot.add(1);
    }
}
