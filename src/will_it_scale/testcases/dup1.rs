//! dup1 — "Separate file dup/close": dup a private descriptor and close the copy.

use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "dup1",
    description: "Separate file dup/close",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let (file, _) = private_file(ctx.dir, 0)?;
    let fd = file.as_raw_fd();
    loop {
        // SAFETY: dup of an open descriptor; the copy is closed at once.
        let copy = ok(unsafe { libc::dup(fd) }, "dup")?;
        // SAFETY: closes a descriptor this code opened and uses no more.
        unsafe { libc::close(copy) };
        ctx.slot.add(1);
    }
}
