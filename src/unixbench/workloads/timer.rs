//! The stop signal of every fixed-time workload: like UnixBench's `wake_me()`, an interval
//! timer delivers SIGALRM at the deadline; here the handler only sets a flag, and the loop reads
//! that flag (one relaxed load per iteration, so the clock is never consulted in the hot loop).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Set by the SIGALRM handler when the workload's time is up.
pub static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_alarm(_sig: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// Clears the flag, installs the handler (with SA_RESTART, so a blocking read or wait in
/// progress finishes its iteration) and arms a one-shot timer for `duration`.
pub fn arm(duration: Duration) -> std::io::Result<()> {
    STOP.store(false, Ordering::Relaxed);
    // SAFETY: the handler only performs an atomic store, which is async-signal-safe; the
    // sigaction and itimerval structures are fully initialised before the calls.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_alarm as extern "C" fn(libc::c_int) as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        if libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let usec = duration.as_micros().max(1);
        let timer = libc::itimerval {
            it_interval: libc::timeval {
                tv_sec: 0,
                tv_usec: 0,
            },
            it_value: libc::timeval {
                tv_sec: (usec / 1_000_000) as libc::time_t,
                tv_usec: (usec % 1_000_000) as libc::suseconds_t,
            },
        };
        if libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// True once the deadline has passed.
#[inline(always)]
pub fn stopped() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// The last OS error as an `io::Error` with a short description of what failed.
pub fn os_error(what: &str) -> std::io::Error {
    let e = std::io::Error::last_os_error();
    std::io::Error::new(e.kind(), format!("{what}: {e}"))
}
