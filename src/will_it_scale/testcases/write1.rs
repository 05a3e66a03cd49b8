//! write1 — "Separate file write": sequential 4 KiB writes to the task's own file, rewinding
//! every 1 MiB.

use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "write1",
    description: "Separate file write",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let (file, _) = private_file(ctx.dir, 0)?;
    let fd = file.as_raw_fd();
    let buf = vec![0u8; BUFLEN];
    let mut written = 0u64;
    loop {
        ok(
            // SAFETY: `buf` has BUFLEN readable bytes.
            unsafe { libc::write(fd, buf.as_ptr().cast(), BUFLEN) },
            "write",
        )?;
        written += BUFLEN as u64;
        if written >= FILESIZE {
            // SAFETY: lseek on a descriptor this code opened.
            ok(unsafe { libc::lseek(fd, 0, libc::SEEK_SET) }, "lseek")?;
            written = 0;
        }
        ctx.slot.add(1);
    }
}
