//! AIM7 `disk_rd` ("Sequential Disk Reads (K)", factor = blocks per file B = FILESIZE +
//! POOLSIZE/load): one job opens the shared `tmpa.common` of its directory read-only, seeks to
//! 0, reads B blocks of 1 KiB (a short read is an error) and closes it. The driver writes
//! `tmpa.common` before the tasks start.

use super::disk::{self, Access};
use super::{close, Factor, Fail, Job, TaskCtx};

pub const JOB: Job = disk::job(
    "disk_rd",
    "Sequential Disk Reads (K)",
    Factor::DiskBlocks,
    run,
);

fn run(ctx: &mut TaskCtx, dir: usize) -> Result<(), Fail> {
    let fd = disk::open_common(ctx, dir)?;
    disk::seek_block(fd, 0)?;
    disk::sequential(ctx, fd, ctx.disk_blocks, Access::Read)?;
    close(fd)
}
