//! lock2 — "Same file write lock/unlock": as lock1 on one shared file, each task with its own
//! descriptor. Record locks belong to processes, so in thread mode the tasks contend only on
//! the kernel's lock list, not on the lock itself.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "lock2",
    description: "Same file write lock/unlock",
    prepare: |dir, _| shared_file(dir, 0),
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(shared_path(ctx)?)
        .context("cannot open the shared file")?;
    super::lock1::lock_loop(ctx, &file)
}
