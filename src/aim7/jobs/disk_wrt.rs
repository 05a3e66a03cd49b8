//! AIM7 `disk_wrt` ("Sequential Disk Writes (K)", factor = blocks per file B = FILESIZE +
//! POOLSIZE/load): one job `creat`s a private temp file, unlinks it at once (so it writes to an
//! already deleted file, freed at close), writes B blocks of 1 KiB and closes it.

use super::disk::{self, Access};
use super::{close, Factor, Fail, Job, TaskCtx};

pub const JOB: Job = disk::job(
    "disk_wrt",
    "Sequential Disk Writes (K)",
    Factor::DiskBlocks,
    run,
);

fn run(ctx: &mut TaskCtx, dir: usize) -> Result<(), Fail> {
    let (path, fd) = disk::new_temp(ctx, dir, None)?;
    disk::remove(ctx, &path)?;
    disk::sequential(ctx, fd, ctx.disk_blocks, Access::Write)?;
    close(fd)
}
