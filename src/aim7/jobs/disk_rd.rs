//! AIM7 `disk_rd` ("Sequential Disk Reads (K)", factor = blocks per file): one job reads the
//! shared `tmpa.common` of its directory from the start in 1 KiB reads, as many blocks as the
//! per-task file size (FILESIZE + POOLSIZE/load KiB). The driver creates `tmpa.common` before
//! the tasks start.

use super::{close, open, read_block, Factor, Fail, Fixture, Job, TaskCtx, DISK_COUNTERS};

pub const JOB: Job = Job {
    name: "disk_rd",
    aliases: &[],
    factor: Factor::DiskBlocks,
    units: "Sequential Disk Reads (K)",
    uses_dirs: true,
    fixture: Fixture::CommonFile,
    extra_procs: 0,
    counters: DISK_COUNTERS,
    run,
};

fn run(ctx: &mut TaskCtx, dir: usize) -> Result<(), Fail> {
    let fd = open(&ctx.dirs[dir].common_file, libc::O_RDONLY)?;
    for _ in 0..ctx.disk_blocks {
        if let Err(e) = read_block(fd, &mut ctx.buf) {
            let _ = close(fd);
            return Err(e);
        }
        ctx.counters[1] += 1;
    }
    close(fd)
}
