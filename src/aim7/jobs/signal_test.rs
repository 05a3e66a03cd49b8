//! AIM7 `signal_test` ("Signal Traps", factor 1000): one job installs a SIGUSR2 handler and
//! sends SIGUSR2 to its own process until the handler has counted 1000 deliveries.

use super::{Factor, Fail, Fixture, Job, TaskCtx};
use std::sync::atomic::{AtomicU64, Ordering};

const SIGNALS: u64 = 1000;

static CAUGHT: AtomicU64 = AtomicU64::new(0);

pub const JOB: Job = Job {
    name: "signal_test",
    aliases: &[],
    factor: Factor::Fixed(SIGNALS),
    units: "Signal Traps",
    uses_dirs: false,
    fixture: Fixture::None,
    extra_procs: 0,
    counters: &["kill", "caught"],
    run,
};

extern "C" fn on_usr2(_sig: libc::c_int) {
    CAUGHT.fetch_add(1, Ordering::Relaxed);
}

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    CAUGHT.store(0, Ordering::Relaxed);
    let handler: extern "C" fn(libc::c_int) = on_usr2;
    // SAFETY: installing an async-signal-safe handler (one atomic add).
    if unsafe { libc::signal(libc::SIGUSR2, handler as libc::sighandler_t) } == libc::SIG_ERR {
        return Err(Fail::last("signal"));
    }
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    while CAUGHT.load(Ordering::Relaxed) < SIGNALS {
        // SAFETY: signalling ourselves.
        if unsafe { libc::kill(me, libc::SIGUSR2) } < 0 {
            return Err(Fail::last("kill"));
        }
        ctx.counters[0] += 1;
    }
    ctx.counters[1] += CAUGHT.load(Ordering::Relaxed);
    Ok(())
}
