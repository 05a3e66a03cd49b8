//! eventfd1 — "eventfd read/write of 8 bytes": write 8 bytes to a private eventfd, read them
//! back.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "eventfd1",
    description: "eventfd read/write of 8 bytes",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    // SAFETY: eventfd with valid flags.
    let fd = ok(unsafe { libc::eventfd(0, 0) }, "eventfd")?;
    let mut value: u64 = 1;
    let p: *mut u64 = &mut value;
    loop {
        // SAFETY: 8 valid bytes at `p`.
        ok(unsafe { libc::write(fd, p.cast(), 8) }, "eventfd write")?;
        // SAFETY: the buffer holds the bytes the call reads or writes, for the length given.
        ok(unsafe { libc::read(fd, p.cast(), 8) }, "eventfd read")?;
        ctx.slot.add(1);
    }
}
