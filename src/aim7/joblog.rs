//! AIM's bookkeeping around every job and every reaped task (multitask.c `begin_timing`,
//! `end_timing`, aim7-jobs.md §5), reproduced because it is part of the load AIM puts on the
//! system: before a job, `times()` twice (AIM's millisecond clock `rtmsec` is built on
//! `times()`, then the task's CPU times); after it, `times()` twice again and one line appended
//! to the shared log file `logfile.suite7` (`<load> <test> <elapsed ms> <user ms> <sys ms>`,
//! each number `%g`, one write(2) as AIM's fprintf + fflush). The driver appends
//! `<load> job_timing <ms> 0 0` for every task it reaps. All tasks append to one open file
//! description, so at a high load every job also contends for that file.

use libc::c_int;
use std::ffi::CStr;

/// Clock ticks per second of `times()` (USER_HZ).
pub fn hz() -> i64 {
    // SAFETY: sysconf has no preconditions.
    i64::from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as i32).max(1)
}

/// A `clock_t` (a C long) as i64.
#[allow(clippy::useless_conversion)]
pub fn ticks(c: libc::clock_t) -> i64 {
    i64::from(c)
}

/// `times()`: elapsed ticks, and the caller's (and reaped children's) CPU ticks.
pub fn times() -> (i64, libc::tms) {
    // SAFETY: tms is a plain struct filled by the kernel.
    let mut t: libc::tms = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let now = ticks(unsafe { libc::times(&mut t) });
    (now, t)
}

/// The start of one job, as AIM's `begin_timing` takes it.
pub struct JobClock {
    elapsed: i64,
    cpu: libc::tms,
}

/// Appends the line `format` writes into a local buffer (an snprintf call, which returns its
/// length) to the log with one write, as AIM's fprintf + fflush; a short write is not retried.
fn append(fd: c_int, format: impl FnOnce(*mut libc::c_char, usize) -> c_int) {
    if fd < 0 {
        return;
    }
    let mut line = [0 as libc::c_char; 160];
    let len = format(line.as_mut_ptr(), line.len());
    if len > 0 {
        let n = (len as usize).min(line.len() - 1);
        // SAFETY: writing part of a local buffer.
        unsafe { libc::write(fd, line.as_ptr().cast(), n) };
    }
}

impl JobClock {
    pub fn begin() -> JobClock {
        let (elapsed, _) = times();
        let (_, cpu) = times();
        JobClock { elapsed, cpu }
    }

    /// AIM's `end_timing`: the two `times()` and the log line (when `log_fd` is not -1).
    pub fn end(self, log_fd: c_int, load: u32, test: &CStr, hz: i64) {
        let (elapsed, _) = times();
        let (_, cpu) = times();
        let ms = |ticks: i64| (ticks * 1000 / hz) as f64;
        let (user, sys) = (
            ms(ticks(cpu.tms_utime) - ticks(self.cpu.tms_utime)),
            ms(ticks(cpu.tms_stime) - ticks(self.cpu.tms_stime)),
        );
        let wall = ms(elapsed - self.elapsed);
        // SAFETY: snprintf into the buffer `append` gives, with a matching format.
        append(log_fd, |buf, size| unsafe {
            let format = c"%d %s %g %g %g\n".as_ptr();
            libc::snprintf(
                buf,
                size,
                format,
                load as c_int,
                test.as_ptr(),
                wall,
                user,
                sys,
            )
        });
    }
}

/// The driver's line for a reaped task that took `ms` milliseconds.
pub fn reaped(log_fd: c_int, load: u32, ms: f64) {
    // SAFETY: snprintf into the buffer `append` gives, with a matching format.
    append(log_fd, |buf, size| unsafe {
        libc::snprintf(
            buf,
            size,
            c"%d job_timing %g 0 0\n".as_ptr(),
            load as c_int,
            ms,
        )
    });
}
