//! Execl Throughput (`execl`, unixbench.md §4.3).
//!
//! The worker replaces itself with a fresh copy of itself, again and again: each image adds
//! one to the counter, checks the deadline and, if time remains, `execv`s the worker binary
//! with the counter, the start time and the deadline in its arguments (state travels in argv,
//! as in UnixBench). The exec'd program is `patchbench-worker`, a small binary of its own, not
//! the full `patchbench` CLI, so the exec cost is that of a small program.
//!
//! Differences from UnixBench: the deadline is checked with CLOCK_MONOTONIC in nanoseconds
//! instead of whole-second `time()`, so a 30 s run lasts 30 s rather than 29–30 s; the rate is
//! the same. Unit: lps (execs per second of wall time). Baseline 43.0 lps.

use super::timer::os_error;
use std::ffi::CString;

/// The argv[1] marker of a continuation image.
pub const CONTINUE: &str = "execl-next";

/// Nanoseconds on the monotonic clock (shared by every image of the process).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// State carried from one image to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct State {
    pub count: u64,
    pub start_ns: u64,
    pub deadline_ns: u64,
}

impl State {
    /// Parses the arguments after the marker: count, start, deadline.
    pub fn parse(args: &[String]) -> Option<State> {
        match args {
            [c, s, d] => Some(State {
                count: c.parse().ok()?,
                start_ns: s.parse().ok()?,
                deadline_ns: d.parse().ok()?,
            }),
            _ => None,
        }
    }
}

/// One step: counts this image; returns the finished state when the deadline has passed, or
/// never returns because the process became the next image. An `Err` is a failed exec.
pub fn step(program: &str, mut state: State) -> std::io::Result<State> {
    state.count += 1;
    if monotonic_ns() >= state.deadline_ns {
        return Ok(state);
    }
    let args = [
        program.to_string(),
        CONTINUE.to_string(),
        state.count.to_string(),
        state.start_ns.to_string(),
        state.deadline_ns.to_string(),
    ];
    let cargs: Vec<CString> = args
        .iter()
        .map(|a| CString::new(a.as_bytes()).map_err(std::io::Error::other))
        .collect::<Result<_, _>>()?;
    let mut argv: Vec<*const libc::c_char> = cargs.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    // SAFETY: argv is a NULL-terminated array of valid C strings that outlive the call.
    unsafe { libc::execv(cargs[0].as_ptr(), argv.as_ptr()) };
    Err(os_error(&format!("execv {program}")))
}
