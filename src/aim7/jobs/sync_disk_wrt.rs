//! AIM7 `sync_disk_wrt` ("Sync Sequential Disk Writes (K)"): with h = ⌊B/2⌋ blocks (B =
//! FILESIZE + POOLSIZE/load), one job opens a private temp file
//! O_SYNC|O_WRONLY|O_CREAT|O_TRUNC 0777, writes h blocks of 1 KiB (each write synchronous),
//! unlinks it and closes it.

use super::disk::{self, Access};
use super::{close, Factor, Fail, Job, TaskCtx};

pub const JOB: Job = disk::job(
    "sync_disk_wrt",
    "Sync Sequential Disk Writes (K)",
    Factor::HalfDiskBlocks,
    run,
);

fn run(ctx: &mut TaskCtx, dir: usize) -> Result<(), Fail> {
    let half = ctx.disk_blocks / 2;
    let flags = libc::O_SYNC | libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC;
    let (path, fd) = disk::new_temp(ctx, dir, Some(flags))?;
    disk::sequential(ctx, fd, half, Access::Write)?;
    disk::remove(ctx, &path)?;
    close(fd)
}
