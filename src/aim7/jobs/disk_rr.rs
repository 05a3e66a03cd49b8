//! AIM7 `disk_rr` ("Random Disk Reads (K)", factor = blocks per file): one job writes a private
//! temp file of FILESIZE + POOLSIZE/load KiB in 1 KiB writes, reopens it read-only, unlinks it,
//! then does as many random 1 KiB lseek+read pairs as the file has blocks.

use super::{
    close, open, read_block, seek_block, unlink, write_temp_file, Factor, Fail, Fixture, Job,
    TaskCtx, DISK_COUNTERS,
};

pub const JOB: Job = Job {
    name: "disk_rr",
    aliases: &[],
    factor: Factor::DiskBlocks,
    units: "Random Disk Reads (K)",
    uses_dirs: true,
    fixture: Fixture::None,
    extra_procs: 0,
    counters: DISK_COUNTERS,
    run,
};

fn run(ctx: &mut TaskCtx, dir: usize) -> Result<(), Fail> {
    let path = write_temp_file(ctx, dir)?;
    let fd = open(&path, libc::O_RDONLY)?;
    unlink(&path)?;
    ctx.counters[3] += 1;
    let blocks = ctx.disk_blocks as u64;
    for _ in 0..blocks {
        let block = ctx.random() % blocks;
        let read = seek_block(fd, block).and_then(|_| read_block(fd, &mut ctx.buf));
        if let Err(e) = read {
            let _ = close(fd);
            return Err(e);
        }
        ctx.counters[1] += 1;
    }
    close(fd)
}
