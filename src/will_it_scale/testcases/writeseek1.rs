//! writeseek1 — "Separate file seek+write": lseek to 0, then write 4 KiB, on the task's own
//! (initially empty) file.

use super::file_io::{seek_then, Io};
use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "writeseek1",
    description: "Separate file seek+write",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let (file, _) = private_file(ctx.dir, 0)?;
    seek_then(ctx, file.as_raw_fd(), 0, Io::Write)
}
