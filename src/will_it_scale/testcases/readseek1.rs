//! readseek1 — "Separate file seek+read": lseek to 0, then read 4 KiB, on the task's own file
//! of 4 KiB written zeros.

use super::file_io::{seek_then, Io};
use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "readseek1",
    description: "Separate file seek+read",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let (file, _) = zero_file(ctx.dir, BUFLEN as u64)?;
    seek_then(ctx, file.as_raw_fd(), 0, Io::Read)
}
