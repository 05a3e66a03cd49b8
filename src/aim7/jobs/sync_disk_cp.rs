//! AIM7 `sync_disk_cp` ("Sync Disk Copies (K)"): with h = ⌊B/2⌋ blocks (B = FILESIZE +
//! POOLSIZE/load), one job opens the shared `tmpa.common` read-only and a private temp file
//! O_SYNC|O_WRONLY|O_CREAT|O_TRUNC 0777, seeks the source to 0, copies h blocks in 1 KiB
//! read / synchronous write pairs (the first half of `tmpa.common`), unlinks the copy and
//! closes both.

use super::disk;
use super::{Factor, Fail, Job, TaskCtx};

pub const JOB: Job = disk::job(
    "sync_disk_cp",
    "Sync Disk Copies (K)",
    Factor::HalfDiskBlocks,
    run,
);

fn run(ctx: &mut TaskCtx, dir: usize) -> Result<(), Fail> {
    let half = ctx.disk_blocks / 2;
    let src = disk::open_common(ctx, dir)?;
    let flags = libc::O_SYNC | libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC;
    let (path, dst) = disk::new_temp(ctx, dir, Some(flags))?;
    disk::seek_block(src, 0)?;
    disk::copy(ctx, src, dst, half)?;
    disk::remove(ctx, &path)?;
    disk::close_all(&[src, dst])
}
