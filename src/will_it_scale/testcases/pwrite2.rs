//! pwrite2 — "Same file pwrite to same offset": every task pwrites 4 KiB at offset 0 of one
//! shared file (its own descriptor).

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "pwrite2",
    description: "Same file pwrite to same offset",
    prepare: |dir, _| shared_file(dir, 0),
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(shared_path(ctx)?)
        .context("cannot open the shared file")?;
    super::pwrite1::pwrite_loop(ctx, &file, 0)
}
