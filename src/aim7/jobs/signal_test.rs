//! AIM7 `signal_test` ("Signal Traps", args "1000", factor 1000): one job clears the handler's
//! counter and error flag, calls getpid once, installs a SIGUSR2 handler with `signal()`, and
//! sends SIGUSR2 to itself until the handler has counted 1000. The handler re-installs itself
//! with `signal()` on every call (one more rt_sigaction per signal) and flags any signal other
//! than SIGUSR2. Per job: 1000 kill, 1001 rt_sigaction, 1000 deliveries.

use super::{Factor, Fail, Job, TaskCtx};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

static CAUGHT: AtomicU64 = AtomicU64::new(0);
static INSTALLS: AtomicU64 = AtomicU64::new(0);
static WRONG_SIGNAL: AtomicBool = AtomicBool::new(false);

pub const JOB: Job = Job {
    name: "signal_test",
    args: "1000",
    factor: Factor::Fixed(1000),
    units: "Signal Traps",
    counters: &["kill", "caught", "signal_calls"],
    run,
    ..Job::BASE
};

fn install() -> libc::sighandler_t {
    INSTALLS.fetch_add(1, Ordering::Relaxed);
    let handler: extern "C" fn(libc::c_int) = on_usr2;
    // SAFETY: installing an async-signal-safe handler (atomics and signal() only).
    unsafe { libc::signal(libc::SIGUSR2, handler as libc::sighandler_t) }
}

extern "C" fn on_usr2(sig: libc::c_int) {
    install();
    if sig != libc::SIGUSR2 {
        WRONG_SIGNAL.store(true, Ordering::Relaxed);
    }
    CAUGHT.fetch_add(1, Ordering::Relaxed);
}

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let signals: u64 = ctx.arg(0)?;
    CAUGHT.store(0, Ordering::Relaxed);
    INSTALLS.store(0, Ordering::Relaxed);
    WRONG_SIGNAL.store(false, Ordering::Relaxed);
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    if install() == libc::SIG_ERR {
        return Err(Fail::last("signal"));
    }
    while CAUGHT.load(Ordering::Relaxed) < signals {
        // SAFETY: signalling ourselves.
        if unsafe { libc::kill(me, libc::SIGUSR2) } < 0 {
            return Err(Fail::last("kill"));
        }
        ctx.counters[0] += 1;
    }
    ctx.counters[1] += CAUGHT.load(Ordering::Relaxed);
    ctx.counters[2] += INSTALLS.load(Ordering::Relaxed);
    if WRONG_SIGNAL.load(Ordering::Relaxed) {
        return Err(Fail::wrong("signal number in the handler"));
    }
    Ok(())
}
