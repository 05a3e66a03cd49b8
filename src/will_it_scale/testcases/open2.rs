//! open2 — "Separate file open/close in different directories": as open1, but each task's file
//! lives in a directory of its own, so tasks do not share the directory's dentry lock.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "open2",
    description: "Separate file open/close in different directories",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let dir = private_dir(ctx.dir)?;
    let (_, path) = private_file(&dir, 0)?;
    super::open1::open_close_loop(ctx, &path)
}
