//! pread2 — "Same file pread to same offset": every task preads 4 KiB at offset 0 of one
//! shared file (its own descriptor).

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "pread2",
    description: "Same file pread to same offset",
    prepare: |dir, _| shared_file(dir, BUFLEN as u64),
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let file = File::open(shared_path(ctx)?).context("cannot open the shared file")?;
    super::pread1::pread_loop(ctx, &file, 0)
}
