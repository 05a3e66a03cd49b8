//! pwrite1 — "Separate file pwrite": 4 KiB pwrite at offset 0 of the task's own file.

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
    pwrite_loop(ctx, &file, 0)
}

/// pwrite of BUFLEN bytes at `offset`, forever (also used by pwrite2 and pwrite3).
pub fn pwrite_loop(ctx: &TaskCtx<'_>, file: &File, offset: i64) -> Result<()> {
    let buf = vec![0u8; BUFLEN];
    let fd = file.as_raw_fd();
    loop {
        // SAFETY: `buf` has BUFLEN readable bytes.
        ok(
            unsafe { libc::pwrite(fd, buf.as_ptr().cast(), BUFLEN, offset) },
            "pwrite",
        )?;
        ctx.slot.add(1);
    }
}
