//! lseek1 — "Separate file lseek": lseek to 0 on the task's own file (4 KiB of written
//! zeros, as will-it-scale writes one buffer to it).

use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "lseek1",
    description: "Separate file lseek",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let (file, _) = zero_file(ctx.dir, BUFLEN as u64)?;
    lseek_loop(ctx, file.as_raw_fd())
}

/// lseek(fd, 0, SEEK_SET) forever (also used by lseek2).
pub fn lseek_loop(ctx: &TaskCtx<'_>, fd: libc::c_int) -> Result<()> {
    loop {
        // SAFETY: lseek on an open descriptor.
        ok(unsafe { libc::lseek(fd, 0, libc::SEEK_SET) }, "lseek")?;
        ctx.slot.add(1);
    }
}
