//! read2 — "Same file read": as read1, on one shared file of 1 MiB written zeros, each task
//! with a descriptor (and file position) it opened itself (O_RDONLY), so the tasks share the
//! file's page-cache pages.

use super::file_io::{open_shared, read_rewinding};
use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "read2",
    description: "Same file read",
    prepare: |dir, _| shared_file(dir, FILESIZE),
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let fd = open_shared(ctx, libc::O_RDONLY)?;
    read_rewinding(ctx, fd.as_raw_fd(), &mut [0u8; BUFLEN])
}
