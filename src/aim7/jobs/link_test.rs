//! AIM7 `link_test` ("Link/Unlink Pairs", factor 63 = 9 × 7): one job creates a file (keeping
//! it open), adds 7 hard links to it (8 names, POSIX's smallest LINK_MAX), then 9 rounds of
//! unlink and re-link of each of the 7 links, then unlinks all 8 names and closes the file.

use super::{close, creat, unlink, Factor, Fail, Fixture, Job, TaskCtx};
use std::ffi::CString;

const NAMES: usize = 8;
const ROUNDS: u64 = 9;

pub const JOB: Job = Job {
    name: "link_test",
    aliases: &[],
    factor: Factor::Fixed(ROUNDS * (NAMES as u64 - 1)),
    units: "Link/Unlink Pairs",
    uses_dirs: true,
    fixture: Fixture::None,
    extra_procs: 0,
    counters: &["creat", "link", "unlink"],
    run,
};

fn link(from: &CString, to: &CString) -> Result<(), Fail> {
    // SAFETY: valid paths.
    if unsafe { libc::link(from.as_ptr(), to.as_ptr()) } < 0 {
        Err(Fail::last("link"))
    } else {
        Ok(())
    }
}

fn links(ctx: &mut TaskCtx, names: &[CString]) -> Result<(), Fail> {
    for name in &names[1..] {
        link(&names[0], name)?;
        ctx.counters[1] += 1;
    }
    for _ in 0..ROUNDS {
        for name in &names[1..] {
            unlink(name)?;
            ctx.counters[2] += 1;
            link(&names[0], name)?;
            ctx.counters[1] += 1;
        }
    }
    Ok(())
}

fn run(ctx: &mut TaskCtx, dir: usize) -> Result<(), Fail> {
    let names: Vec<CString> = (0..NAMES).map(|_| ctx.temp_path(dir, "link")).collect();
    let fd = creat(&names[0])?;
    ctx.counters[0] += 1;
    let linked = links(ctx, &names);
    let mut removed = Ok(());
    for name in &names {
        match unlink(name) {
            Ok(()) => ctx.counters[2] += 1,
            Err(e) if removed.is_ok() && linked.is_ok() => removed = Err(e),
            Err(_) => {}
        }
    }
    let closed = close(fd);
    linked.and(removed).and(closed)
}
