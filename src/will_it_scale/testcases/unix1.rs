//! unix1 — "unix domain socket read/write": write one byte to one end of a private socketpair
//! and read it back.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "unix1",
    description: "unix domain socket read/write",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let mut fds = [0; 2];
    ok(
        // SAFETY: room for two descriptors.
        unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr()) },
        "socketpair",
    )?;
    super::pipe1::write_read_loop(ctx, fds[0], fds[1])
}
