//! open3 — "Same file open/close": every task opens and closes one shared file.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "open3",
    description: "Same file open/close",
    prepare: |dir, _| shared_file(dir, 0),
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    super::open1::open_close_loop(ctx, shared_path(ctx)?)
}
