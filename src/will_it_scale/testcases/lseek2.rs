//! lseek2 — "Same file lseek": lseek to 0 on one file description opened before the tasks
//! start, so every task (inherited descriptor or shared table) seeks the same file position.

use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "lseek2",
    description: "Same file lseek",
    prepare,
    run,
    helpers: 0,
};

fn prepare(dir: &Path, _tasks: usize) -> Result<Prepared> {
    let (file, path) = private_file(dir, 0)?;
    Ok(Prepared {
        path: Some(path),
        fd: Some(file.into()),
    })
}

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let fd = ctx
        .prepared
        .fd
        .as_ref()
        .context("the shared file was not opened")?;
    super::lseek1::lseek_loop(ctx, fd.as_raw_fd())
}
