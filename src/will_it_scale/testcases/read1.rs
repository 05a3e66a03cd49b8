//! read1 — "Separate file read": sequential 4 KiB reads of the task's own 1 MiB file,
//! rewinding at end of file.

use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "read1",
    description: "Separate file read",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let (file, _) = private_file(ctx.dir, FILESIZE)?;
    read_loop(ctx, &file)
}

/// Sequential BUFLEN reads from the start, rewinding at EOF (also used by read2).
pub fn read_loop(ctx: &TaskCtx<'_>, file: &File) -> Result<()> {
    let mut buf = vec![0u8; BUFLEN];
    let fd = file.as_raw_fd();
    loop {
        // SAFETY: `buf` has BUFLEN writable bytes.
        let n = ok(
            unsafe { libc::read(fd, buf.as_mut_ptr().cast(), BUFLEN) },
            "read",
        )?;
        if n == 0 {
            ok(unsafe { libc::lseek(fd, 0, libc::SEEK_SET) }, "lseek")?;
            continue;
        }
        ctx.slot.add(1);
    }
}
