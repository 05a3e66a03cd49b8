//! AIM7 `disk_cp` ("Disk Copies (K)", factor = blocks per file): one job opens the shared
//! `tmpa.common`, creates a new private temp file and unlinks it at once (the copy is
//! anonymous), then copies FILESIZE + POOLSIZE/load KiB in 1 KiB read/write pairs.

use super::{
    close, creat, open, read_block, unlink, write_block, Factor, Fail, Fixture, Job, TaskCtx,
    DISK_COUNTERS,
};

pub const JOB: Job = Job {
    name: "disk_cp",
    aliases: &[],
    factor: Factor::DiskBlocks,
    units: "Disk Copies (K)",
    uses_dirs: true,
    fixture: Fixture::CommonFile,
    extra_procs: 0,
    counters: DISK_COUNTERS,
    run,
};

fn run(ctx: &mut TaskCtx, dir: usize) -> Result<(), Fail> {
    let src = open(&ctx.dirs[dir].common_file, libc::O_RDONLY)?;
    let path = ctx.temp_path(dir, "tmpb.");
    let dst = match creat(&path) {
        Ok(fd) => fd,
        Err(e) => {
            let _ = close(src);
            return Err(e);
        }
    };
    ctx.counters[2] += 1;
    let copied = unlink(&path).and_then(|_| {
        ctx.counters[3] += 1;
        for _ in 0..ctx.disk_blocks {
            read_block(src, &mut ctx.buf)?;
            ctx.counters[1] += 1;
            write_block(dst, &ctx.buf)?;
            ctx.counters[0] += 1;
        }
        Ok(())
    });
    let _ = close(src);
    let closed = close(dst);
    copied.and(closed)
}
