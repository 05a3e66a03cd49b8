//! AIM7 `disk_cp` ("Disk Copies (K)", factor = blocks per file B = FILESIZE + POOLSIZE/load):
//! one job opens the shared `tmpa.common` read-only, `creat`s a private temp file and unlinks
//! it at once (the copy is anonymous), seeks the source to 0, copies B blocks in 1 KiB
//! read/write pairs and closes both.

use super::disk;
use super::{Factor, Fail, Job, TaskCtx};

pub const JOB: Job = disk::job("disk_cp", "Disk Copies (K)", Factor::DiskBlocks, run);

fn run(ctx: &mut TaskCtx, dir: usize) -> Result<(), Fail> {
    let src = disk::open_common(ctx, dir)?;
    let (path, dst) = disk::new_temp(ctx, dir, None)?;
    disk::remove(ctx, &path)?;
    disk::seek_block(src, 0)?;
    disk::copy(ctx, src, dst, ctx.disk_blocks)?;
    disk::close_all(&[src, dst])
}
