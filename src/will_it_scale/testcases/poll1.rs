//! poll1 — "poll of 1 fd": non-blocking poll for POLLOUT on one private file.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "poll1",
    description: "poll of 1 fd",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    poll_loop(ctx, 1)
}

/// Opens `n` private files and polls them all for POLLOUT with a zero timeout, forever (also
/// used by poll2).
pub fn poll_loop(ctx: &TaskCtx<'_>, n: usize) -> Result<()> {
    use std::os::fd::IntoRawFd;
    let mut fds = Vec::with_capacity(n);
    for _ in 0..n {
        let (file, _) = private_file(ctx.dir, 0)?;
        fds.push(libc::pollfd {
            fd: file.into_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        });
    }
    loop {
        // SAFETY: `fds` holds `n` valid entries.
        let ready = ok(
            unsafe { libc::poll(fds.as_mut_ptr(), n as libc::nfds_t, 0) },
            "poll",
        )?;
        if ready as usize != n {
            anyhow::bail!("poll reported {ready} of {n} files writable");
        }
        ctx.slot.add(1);
    }
}
