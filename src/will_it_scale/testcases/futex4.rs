//! futex4 — "futex(FUTEX_WAIT_PRIVATE)": as futex2 with the private flag; the value never
//! matches, so it never sleeps and measures the syscall path.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "futex4",
    description: "futex(FUTEX_WAIT_PRIVATE)",
    prepare: no_prepare,
    run: |ctx| super::futex2::wait_loop(ctx, libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG),
    helpers: 0,
};
