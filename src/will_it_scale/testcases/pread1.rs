//! pread1 — "Separate file pread": 4 KiB pread at offset 0 of the task's own file, which holds
//! 4 KiB of written zeros.

use super::file_io::{positioned, Io};
use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "pread1",
    description: "Separate file pread",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let (file, _) = zero_file(ctx.dir, BUFLEN as u64)?;
    positioned(ctx, file.as_raw_fd(), 0, Io::Read)
}
