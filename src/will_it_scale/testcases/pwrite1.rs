//! pwrite1 — "Separate file pwrite": 4 KiB pwrite at offset 0 of the task's own (initially
//! empty) file.

use super::file_io::{positioned, Io};
use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "pwrite1",
    description: "Separate file pwrite",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let (file, _) = private_file(ctx.dir, 0)?;
    positioned(ctx, file.as_raw_fd(), 0, Io::Write)
}
