//! pread3 — "Same file pread to different offsets": every task preads 4 KiB of one shared file
//! (one page of written zeros per task), task n at offset n × page, through its own descriptor.

use super::file_io::{open_shared, per_task_pages, positioned, task_offset, Io};
use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "pread3",
    description: "Same file pread to different offsets",
    prepare: per_task_pages,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let fd = open_shared(ctx, libc::O_RDONLY)?;
    positioned(ctx, fd.as_raw_fd(), task_offset(ctx), Io::Read)
}
