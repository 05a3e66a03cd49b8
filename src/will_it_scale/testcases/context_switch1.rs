//! context_switch1 — "Context switch via pipes": the task and a helper task ping-pong one byte
//! over two pipes; each round trip is two context switches and counts 2.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "context_switch1",
    description: "Context switch via pipes",
    prepare: no_prepare,
    run,
    helpers: 1,
};

fn pipe() -> Result<[libc::c_int; 2]> {
    let mut fds = [0; 2];
    // SAFETY: room for two descriptors.
    ok(unsafe { libc::pipe(fds.as_mut_ptr()) }, "pipe")?;
    Ok(fds)
}

/// Reads one byte from `r` and writes it to `w`, forever.
fn bounce(r: libc::c_int, w: libc::c_int, mut count: impl FnMut()) -> Result<()> {
    let mut c = 0u8;
    let p: *mut u8 = &mut c;
    loop {
        // SAFETY: one valid byte at `p`.
        ok(unsafe { libc::read(r, p.cast(), 1) }, "read")?;
        // SAFETY: the buffer holds the bytes the call reads or writes, for the length given.
        ok(unsafe { libc::write(w, p.cast(), 1) }, "write")?;
        count();
    }
}

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let (to_helper, from_helper) = (pipe()?, pipe()?);
    ctx.new_task(move || bounce(to_helper[0], from_helper[1], || {}))?;
    // Start the ping-pong: the first byte goes to the helper.
    ok(
        // SAFETY: the buffer holds the bytes the call reads or writes, for the length given.
        unsafe { libc::write(to_helper[1], [0u8].as_ptr().cast(), 1) },
        "write",
    )?;
    bounce(from_helper[0], to_helper[1], || ctx.slot.add(2))
}
