//! poll2 — "poll of 128 fds": non-blocking poll for POLLOUT on 128 private files.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "poll2",
    description: "poll of 128 fds",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    super::poll1::poll_loop(ctx, 128)
}
