//! page_fault2 — "Separate file private mapping page fault": as page_fault1 on a private
//! (copy-on-write) mapping of the task's own 128 MiB file.

use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "page_fault2",
    description: "Separate file private mapping page fault",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let (file, _) = private_file(ctx.dir, MEMSIZE as u64)?;
    fault_pages(ctx, libc::MAP_PRIVATE, file.as_raw_fd())
}
