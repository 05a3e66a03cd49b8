//! AIM7 `disk_rr` ("Random Disk Reads (K)", factor = blocks per file B = FILESIZE +
//! POOLSIZE/load): one job `creat`s a private temp file, writes B blocks of 1 KiB, closes it,
//! reopens it read-only, unlinks it (the file is now anonymous and freed at close), then does B
//! × (lseek to block `aim_rand() % B`, read 1 KiB), and closes it.

use super::disk::{self, Access};
use super::{close, Factor, Fail, Job, TaskCtx};

pub const JOB: Job = disk::job("disk_rr", "Random Disk Reads (K)", Factor::DiskBlocks, run);

fn run(ctx: &mut TaskCtx, dir: usize) -> Result<(), Fail> {
    let blocks = ctx.disk_blocks;
    let (path, fd) = disk::written_file(ctx, dir, None, blocks, libc::O_RDONLY)?;
    disk::remove(ctx, &path)?;
    disk::random(ctx, fd, blocks, blocks, Access::Read)?;
    close(fd)
}
