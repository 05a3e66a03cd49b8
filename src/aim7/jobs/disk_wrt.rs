//! AIM7 `disk_wrt` ("Sequential Disk Writes (K)", factor = blocks per file): one job creates a
//! private temp file, writes FILESIZE + POOLSIZE/load KiB to it in 1 KiB writes, closes it and
//! unlinks it.

use super::{unlink, write_temp_file, Factor, Fail, Fixture, Job, TaskCtx, DISK_COUNTERS};

pub const JOB: Job = Job {
    name: "disk_wrt",
    aliases: &[],
    factor: Factor::DiskBlocks,
    units: "Sequential Disk Writes (K)",
    uses_dirs: true,
    fixture: Fixture::None,
    extra_procs: 0,
    counters: DISK_COUNTERS,
    run,
};

fn run(ctx: &mut TaskCtx, dir: usize) -> Result<(), Fail> {
    let path = write_temp_file(ctx, dir)?;
    unlink(&path)?;
    ctx.counters[3] += 1;
    Ok(())
}
