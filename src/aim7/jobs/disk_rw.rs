//! AIM7 `disk_rw` ("Random Disk Writes (K)", factor = blocks per file): the set-up of `disk_rr`
//! (a private file of FILESIZE + POOLSIZE/load KiB written in 1 KiB writes, reopened, unlinked),
//! then as many random 1 KiB lseek+write pairs as the file has blocks.

use super::{
    close, open, seek_block, unlink, write_block, write_temp_file, Factor, Fail, Fixture, Job,
    TaskCtx, DISK_COUNTERS,
};

pub const JOB: Job = Job {
    name: "disk_rw",
    aliases: &[],
    factor: Factor::DiskBlocks,
    units: "Random Disk Writes (K)",
    uses_dirs: true,
    fixture: Fixture::None,
    extra_procs: 0,
    counters: DISK_COUNTERS,
    run,
};

fn run(ctx: &mut TaskCtx, dir: usize) -> Result<(), Fail> {
    let path = write_temp_file(ctx, dir)?;
    let fd = open(&path, libc::O_WRONLY)?;
    unlink(&path)?;
    ctx.counters[3] += 1;
    let blocks = ctx.disk_blocks as u64;
    for _ in 0..blocks {
        let block = ctx.random() % blocks;
        let written = seek_block(fd, block).and_then(|_| write_block(fd, &ctx.buf));
        if let Err(e) = written {
            let _ = close(fd);
            return Err(e);
        }
        ctx.counters[0] += 1;
    }
    close(fd)
}
