//! pthread_mutex3 — "Contended pthread mutex with global update": lock one global mutex,
//! increment a global variable, unlock; so the variable's cache line moves with the lock.
//! Contended in thread mode only (see pthread_mutex1).

use super::pthread_mutex1::{bump, locked_loop, Global, Mutex};
use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "pthread_mutex3",
    description: "Contended pthread mutex with global update",
    prepare: no_prepare,
    run,
    helpers: 0,
};

static MUTEX: Mutex = Mutex::unlocked();
static VAL: Global<u64> = Global::new(0);

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    // SAFETY: VAL is written only while MUTEX is held.
    locked_loop(ctx, MUTEX.get(), || unsafe { bump(VAL.get()) })
}
