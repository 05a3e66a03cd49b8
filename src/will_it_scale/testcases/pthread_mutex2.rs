//! pthread_mutex2 — "Uncontended pthread mutex": lock and unlock a mutex on the task's own
//! stack, in both modes.

use super::pthread_mutex1::locked_loop;
use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "pthread_mutex2",
    description: "Uncontended pthread mutex",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let mut mutex = libc::PTHREAD_MUTEX_INITIALIZER;
    locked_loop(ctx, &mut mutex, || {})
}
