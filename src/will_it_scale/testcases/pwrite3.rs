//! pwrite3 — "Same file pwrite to different offsets": every task pwrites 4 KiB of one shared
//! file, task n at offset n × page.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "pwrite3",
    description: "Same file pwrite to different offsets",
    prepare: |dir, _| shared_file(dir, 0),
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(shared_path(ctx)?)
        .context("cannot open the shared file")?;
    super::pwrite1::pwrite_loop(ctx, &file, (ctx.nr * BUFLEN) as i64)
}
