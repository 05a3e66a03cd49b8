//! posix_semaphore1 — "POSIX semaphores": sem_wait then sem_post on a private semaphore.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "posix_semaphore1",
    description: "POSIX semaphores",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    // SAFETY: sem_t is plain data; sem_init initialises it before use, and the box never moves.
    let mut sem: Box<libc::sem_t> = Box::new(unsafe { std::mem::zeroed() });
    let s: *mut libc::sem_t = &mut *sem;
    // SAFETY: an allocated, not yet initialised semaphore.
    ok(unsafe { libc::sem_init(s, 0, 1) }, "sem_init")?;
    loop {
        // SAFETY: an initialised semaphore.
        ok(unsafe { libc::sem_wait(s) }, "sem_wait")?;
        // SAFETY: an initialised semaphore.
        ok(unsafe { libc::sem_post(s) }, "sem_post")?;
        ctx.slot.add(1);
    }
}
