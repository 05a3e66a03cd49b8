//! pread3 — "Same file pread to different offsets": every task preads 4 KiB of one shared
//! file, task n at offset n × page.

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "pread3",
    description: "Same file pread to different offsets",
    prepare: |dir, tasks| shared_file(dir, (tasks * BUFLEN) as u64),
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let file = File::open(shared_path(ctx)?).context("cannot open the shared file")?;
    super::pread1::pread_loop(ctx, &file, (ctx.nr * BUFLEN) as i64)
}
