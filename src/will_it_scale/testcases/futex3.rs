//! futex3 — "futex(FUTEX_WAKE_PRIVATE)": as futex1 with the private flag, so the kernel keys
//! the futex by address in this mm without looking up a shared mapping.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "futex3",
    description: "futex(FUTEX_WAKE_PRIVATE)",
    prepare: no_prepare,
    run: |ctx| super::futex1::wake_loop(ctx, libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG),
    helpers: 0,
};
