//! signal1 — "signal delivery": raise SIGUSR1 to oneself, caught by an empty handler.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "signal1",
    description: "signal delivery",
    prepare: no_prepare,
    run,
    helpers: 0,
};

extern "C" fn empty_handler(_sig: libc::c_int) {}

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    // SAFETY: installs an async-signal-safe (empty) handler.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = empty_handler as *const () as libc::sighandler_t;
        libc::sigemptyset(&mut sa.sa_mask);
        ok(
            libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut()),
            "sigaction",
        )?;
    }
    loop {
        // SAFETY: the handler above catches it.
        ok(unsafe { libc::raise(libc::SIGUSR1) }, "raise")?;
        ctx.slot.add(1);
    }
}
