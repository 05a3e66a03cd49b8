//! AIM7 `disk_rw` ("Random Disk Writes (K)", factor = blocks per file B = FILESIZE +
//! POOLSIZE/load): the set-up of `disk_rr` (a private temp file `creat`ed, B blocks of 1 KiB
//! written, closed), reopened write-only and unlinked, then B × (lseek to block
//! `aim_rand() % B`, write 1 KiB), and closed.

use super::disk::{self, Access};
use super::{close, Factor, Fail, Job, TaskCtx};

pub const JOB: Job = disk::job("disk_rw", "Random Disk Writes (K)", Factor::DiskBlocks, run);

fn run(ctx: &mut TaskCtx, dir: usize) -> Result<(), Fail> {
    let blocks = ctx.disk_blocks;
    let (path, fd) = disk::written_file(ctx, dir, None, blocks, libc::O_WRONLY)?;
    disk::remove(ctx, &path)?;
    disk::random(ctx, fd, blocks, blocks, Access::Write)?;
    close(fd)
}
