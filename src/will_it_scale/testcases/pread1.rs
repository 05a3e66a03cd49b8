//! pread1 — "Separate file pread": 4 KiB pread at offset 0 of the task's own file.

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
    let (file, _) = private_file(ctx.dir, BUFLEN as u64)?;
    pread_loop(ctx, &file, 0)
}

/// pread of BUFLEN bytes at `offset`, forever (also used by pread2 and pread3).
pub fn pread_loop(ctx: &TaskCtx<'_>, file: &File, offset: i64) -> Result<()> {
    let mut buf = vec![0u8; BUFLEN];
    let fd = file.as_raw_fd();
    loop {
        // SAFETY: `buf` has BUFLEN writable bytes.
        ok(
            unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), BUFLEN, offset) },
            "pread",
        )?;
        ctx.slot.add(1);
    }
}
