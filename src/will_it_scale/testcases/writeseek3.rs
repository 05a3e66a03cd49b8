//! writeseek3 — "Same file seek+write to different offsets": every task seeks to page × task
//! number and writes 4 KiB to one shared file (one page of written zeros per task), through
//! its own descriptor (O_RDWR).

use super::file_io::{open_shared, per_task_pages, seek_then, task_offset, Io};
use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "writeseek3",
    description: "Same file seek+write to different offsets",
    prepare: per_task_pages,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let fd = open_shared(ctx, libc::O_RDWR)?;
    seek_then(ctx, fd.as_raw_fd(), task_offset(ctx), Io::Write)
}
