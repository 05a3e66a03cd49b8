//! unlink2 — "Separate file open/close/unlink in different directories": as unlink1, each
//! task in a directory of its own.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "unlink2",
    description: "Separate file open/close/unlink in different directories",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let dir = private_dir(ctx.dir)?;
    super::unlink1::create_unlink_loop(ctx, &dir)
}
