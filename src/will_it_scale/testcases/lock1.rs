//! lock1 — "Separate file write lock/unlock": fcntl(F_SETLKW) write-lock then unlock byte 0 of
//! the task's own file; counts 2 (lock and unlock).

use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "lock1",
    description: "Separate file write lock/unlock",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let (file, _) = private_file(ctx.dir, 0)?;
    lock_loop(ctx, &file)
}

/// Write-lock and unlock byte 0 of `file`, forever (also used by lock2).
pub fn lock_loop(ctx: &TaskCtx<'_>, file: &File) -> Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: flock is plain data.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_whence = libc::SEEK_SET as i16;
    lock.l_start = 0;
    lock.l_len = 1;
    loop {
        lock.l_type = libc::F_WRLCK as i16;
        // SAFETY: fcntl record lock on an open descriptor.
        ok(unsafe { libc::fcntl(fd, libc::F_SETLKW, &lock) }, "lock")?;
        lock.l_type = libc::F_UNLCK as i16;
        // SAFETY: a valid flock struct, on a descriptor this code opened.
        ok(unsafe { libc::fcntl(fd, libc::F_SETLKW, &lock) }, "unlock")?;
        ctx.slot.add(2);
    }
}
