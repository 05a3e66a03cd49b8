//! pthread_mutex5 — "Contended pthread mutex with TLS update": lock one global mutex,
//! increment a thread-local variable, unlock. Contended in thread mode only (see
//! pthread_mutex1).

use super::pthread_mutex1::{locked_loop, Mutex};
use super::*;
use std::cell::Cell;

pub const TESTCASE: Testcase = Testcase {
    name: "pthread_mutex5",
    description: "Contended pthread mutex with TLS update",
    prepare: no_prepare,
    run,
    helpers: 0,
};

static MUTEX: Mutex = Mutex::unlocked();

thread_local! {
    // A const initialiser and no destructor: a plain TLS slot, as C's `__thread`.
    static VAL: Cell<u64> = const { Cell::new(0) };
}

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    locked_loop(ctx, MUTEX.get(), || {
        VAL.with(|v| v.set(v.get().wrapping_add(1)))
    })
}
