//! mmap2 — "Separate file mmap/munmap of 128MB": map and unmap a private 128 MiB mapping of
//! the task's own (sparse) file without touching it.

use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "mmap2",
    description: "Separate file mmap/munmap of 128MB",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let (file, _) = private_file(ctx.dir, MEMSIZE as u64)?;
    loop {
        let p = map(MEMSIZE, libc::MAP_PRIVATE, file.as_raw_fd())?;
        unmap(p, MEMSIZE)?;
        ctx.slot.add(1);
    }
}
