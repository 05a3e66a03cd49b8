//! AIM7 `link_test` ("Link/Unlink Pairs", factor 63 = 9 × 7): one job takes 8 fresh names
//! `link<pid5><counter5>`, creates the first (keeping it open), links the other 7 to it, then
//! 9 rounds of (unlink and re-link each of the 7), then unlinks all 8 names and closes the
//! file: 1 creat, 70 link, 71 unlink, 1 close.

use super::{check, close, creat, unlink, DirFile, Factor, Fail, Job, TaskCtx};

const NAMES: usize = 8;
const ROUNDS: u64 = 9;

pub const JOB: Job = Job {
    name: "link_test",
    factor: Factor::Fixed(ROUNDS * (NAMES as u64 - 1)),
    units: "Link/Unlink Pairs",
    uses_dirs: true,
    counters: &["creat", "link", "unlink"],
    run,
    ..Job::BASE
};

fn link(ctx: &mut TaskCtx, from: &DirFile, to: &DirFile) -> Result<(), Fail> {
    // SAFETY: valid paths, walked from descriptors the task holds.
    let r = unsafe { libc::linkat(from.at, from.path.as_ptr(), to.at, to.path.as_ptr(), 0) };
    check("link", r)?;
    ctx.counters[1] += 1;
    Ok(())
}

fn remove(ctx: &mut TaskCtx, name: &DirFile) -> Result<(), Fail> {
    unlink(name.at, &name.path)?;
    ctx.counters[2] += 1;
    Ok(())
}

fn run(ctx: &mut TaskCtx, dir: usize) -> Result<(), Fail> {
    let names: Vec<DirFile> = (0..NAMES).map(|_| ctx.temp_path(dir, "link")).collect();
    let fd = creat(names[0].at, &names[0].path)?;
    ctx.counters[0] += 1;
    for name in &names[1..] {
        link(ctx, &names[0], name)?;
    }
    for _ in 0..ROUNDS {
        for name in &names[1..] {
            remove(ctx, name)?;
            link(ctx, &names[0], name)?;
        }
    }
    for name in &names {
        remove(ctx, name)?;
    }
    close(fd)
}
