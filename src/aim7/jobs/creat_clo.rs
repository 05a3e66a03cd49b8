//! AIM7 `creat-clo` ("File Creations and Closes", factor 1000): one job picks a fresh name in
//! its directory, then 1000 × (creat: open O_CREAT|O_WRONLY|O_TRUNC mode 0777, close), then one
//! unlink. So one inode creation, 999 re-opens with truncate of the same empty file, 1000
//! closes and one unlink per job. Any failure stops the run.

use super::{close, creat, unlink, Factor, Fail, Job, TaskCtx};

/// creat+close pairs per job.
pub const LOOPS: u64 = 1000;

pub const JOB: Job = Job {
    name: "creat-clo",
    aliases: &["creat_clo"],
    factor: Factor::Fixed(LOOPS),
    units: "File Creations and Closes",
    uses_dirs: true,
    counters: &["creat", "close", "unlink"],
    run,
    ..Job::BASE
};

fn run(ctx: &mut TaskCtx, dir: usize) -> Result<(), Fail> {
    let file = ctx.temp_path(dir, "tmpb.");
    for _ in 0..LOOPS {
        let fd = creat(file.at, &file.path)?;
        ctx.counters[0] += 1;
        close(fd)?;
        ctx.counters[1] += 1;
    }
    unlink(file.at, &file.path)?;
    ctx.counters[2] += 1;
    Ok(())
}
