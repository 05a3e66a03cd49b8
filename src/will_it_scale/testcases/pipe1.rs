//! pipe1 — "pipe read/write": write one byte to a private pipe and read it back.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "pipe1",
    description: "pipe read/write",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let mut fds = [0; 2];
    // SAFETY: room for two descriptors.
    ok(unsafe { libc::pipe(fds.as_mut_ptr()) }, "pipe")?;
    write_read_loop(ctx, fds[1], fds[0])
}

/// Writes one byte to `w` and reads it from `r`, forever (also used by unix1).
pub fn write_read_loop(ctx: &TaskCtx<'_>, w: libc::c_int, r: libc::c_int) -> Result<()> {
    let mut c = 0u8;
    let p: *mut u8 = &mut c;
    loop {
        // SAFETY: one valid byte at `p`.
        ok(unsafe { libc::write(w, p.cast(), 1) }, "write")?;
        // SAFETY: the buffer holds the bytes the call reads or writes, for the length given.
        ok(unsafe { libc::read(r, p.cast(), 1) }, "read")?;
        ctx.slot.add(1);
    }
}
