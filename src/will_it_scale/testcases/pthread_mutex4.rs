//! pthread_mutex4 — "Contended pthread mutex with local update": lock one global mutex,
//! increment a variable on the task's own stack, unlock. Contended in thread mode only (see
//! pthread_mutex1).

use super::pthread_mutex1::{bump, locked_loop, Mutex};
use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "pthread_mutex4",
    description: "Contended pthread mutex with local update",
    prepare: no_prepare,
    run,
    helpers: 0,
};

static MUTEX: Mutex = Mutex::unlocked();

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let mut val = 0u64;
    let p: *mut u64 = &mut val;
    // SAFETY: `val` belongs to this task and outlives the loop.
    locked_loop(ctx, MUTEX.get(), || unsafe { bump(p) })
}
