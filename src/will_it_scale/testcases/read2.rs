//! read2 — "Same file read": as read1, on one shared 1 MiB file, each task with its own
//! descriptor (and file position).

use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "read2",
    description: "Same file read",
    prepare: |dir, _| shared_file(dir, FILESIZE),
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let file = File::open(shared_path(ctx)?).context("cannot open the shared file")?;
    super::read1::read_loop(ctx, &file)
}
