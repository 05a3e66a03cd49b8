//! AIM7 `sync_disk_update` ("Sync Disk Updates (K)"): with B = FILESIZE + POOLSIZE/load
//! blocks, one job opens a private temp file O_WRONLY|O_CREAT|O_TRUNC 0777, writes B blocks of
//! 1 KiB, closes it, reopens it O_RDWR|O_SYNC, does ⌊B/2⌋ × (lseek to block `aim_rand() % B`,
//! read 1 KiB, synchronous write 1 KiB), unlinks it and closes it. As in AIM there is no seek
//! back before the write, so it lands on the block after the one read (and extends the file
//! by 1 KiB when the read block is the last).

use super::disk::{self, Access};
use super::{close, Factor, Fail, Job, TaskCtx};

pub const JOB: Job = disk::job(
    "sync_disk_update",
    "Sync Disk Updates (K)",
    Factor::HalfDiskBlocks,
    run,
);

fn run(ctx: &mut TaskCtx, dir: usize) -> Result<(), Fail> {
    let blocks = ctx.disk_blocks;
    let create = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC;
    let reopen = libc::O_RDWR | libc::O_SYNC;
    let (path, fd) = disk::written_file(ctx, dir, Some(create), blocks, reopen)?;
    disk::random(ctx, fd, blocks / 2, blocks, Access::ReadWrite)?;
    disk::remove(ctx, &path)?;
    close(fd)
}
