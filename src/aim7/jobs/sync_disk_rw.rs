//! AIM7 `sync_disk_rw` ("Sync Random Disk Writes (K)"): with h = ⌊B/2⌋ blocks (B =
//! FILESIZE + POOLSIZE/load), one job opens a private temp file O_WRONLY|O_CREAT|O_TRUNC 0777,
//! writes h blocks of 1 KiB, closes it, reopens it O_WRONLY|O_SYNC (not unlinked), does h ×
//! (lseek to block `aim_rand() % h`, a synchronous 1 KiB write), unlinks it and closes it.

use super::disk::{self, Access};
use super::{close, Factor, Fail, Job, TaskCtx};

pub const JOB: Job = disk::job(
    "sync_disk_rw",
    "Sync Random Disk Writes (K)",
    Factor::HalfDiskBlocks,
    run,
);

fn run(ctx: &mut TaskCtx, dir: usize) -> Result<(), Fail> {
    let half = ctx.disk_blocks / 2;
    let create = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC;
    let reopen = libc::O_WRONLY | libc::O_SYNC;
    let (path, fd) = disk::written_file(ctx, dir, Some(create), half, reopen)?;
    disk::random(ctx, fd, half, half, Access::Write)?;
    disk::remove(ctx, &path)?;
    close(fd)
}
