//! AIM7 `misc_rtns_1` ("Auxiliary Loops", args "10", factor 10): one job runs 10 iterations of
//! 21 C library calls about the process and its environment: cfgetispeed and cfgetospeed (on
//! an unset termios, no system call), clock, ctermid, getcwd (2048 bytes), getuid, geteuid,
//! getgid, getegid, getenv("PATH"), getgroups(NGROUPS_MAX), getpid, getpgrp, getppid,
//! getpwnam("root"), getpwuid, getgrgid (which read /etc/passwd and /etc/group through NSS),
//! times, isatty(0), ttyname(0) and uname. As in AIM, a failing getcwd, a missing PATH or a
//! failing password or group look-up fails the job.

use super::{Factor, Fail, Job, TaskCtx};
use std::hint::black_box;
use std::mem::MaybeUninit;

pub const JOB: Job = Job {
    name: "misc_rtns_1",
    args: "10",
    factor: Factor::Fixed(10),
    units: "Auxiliary Loops",
    counters: &["iterations", "calls"],
    run,
    ..Job::BASE
};

/// Library calls per iteration.
const CALLS: u64 = 21;
/// Linux's NGROUPS_MAX.
const NGROUPS_MAX: usize = 65_536;

extern "C" {
    fn clock() -> libc::clock_t;
}

/// Fails as `op` when `p` is null.
fn found<T>(p: *mut T, op: &'static str) -> Result<*mut T, Fail> {
    if p.is_null() {
        Err(Fail::last(op))
    } else {
        Ok(black_box(p))
    }
}

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let iterations: u32 = ctx.arg(0)?;
    let mut cwd = [0 as libc::c_char; 2048];
    let mut groups = [MaybeUninit::<libc::gid_t>::uninit(); NGROUPS_MAX];
    for _ in 0..iterations {
        // SAFETY: plain C library calls with valid buffers; the returned pointers are only
        // checked for null.
        unsafe {
            let t: libc::termios = std::mem::zeroed();
            black_box((libc::cfgetispeed(&t), libc::cfgetospeed(&t), clock()));
            black_box(libc::ctermid(std::ptr::null_mut()));
            found(libc::getcwd(cwd.as_mut_ptr(), cwd.len()), "getcwd")?;
            let (uid, gid) = (libc::getuid(), libc::getgid());
            black_box((uid, libc::geteuid(), gid, libc::getegid()));
            found(libc::getenv(c"PATH".as_ptr()), "getenv PATH")?;
            black_box(libc::getgroups(
                NGROUPS_MAX as i32,
                groups.as_mut_ptr().cast(),
            ));
            black_box((libc::getpid(), libc::getpgrp(), libc::getppid()));
            found(libc::getpwnam(c"root".as_ptr()), "getpwnam root")?;
            found(libc::getpwuid(uid), "getpwuid")?;
            found(libc::getgrgid(gid), "getgrgid")?;
            let mut tms: libc::tms = std::mem::zeroed();
            black_box(libc::times(&mut tms));
            black_box((libc::isatty(0), libc::ttyname(0)));
            let mut uts: libc::utsname = std::mem::zeroed();
            black_box(libc::uname(&mut uts));
        }
        ctx.counters[0] += 1;
        ctx.counters[1] += CALLS;
    }
    Ok(())
}
