//! AIM7 `brk_test` ("System Memory Allocations", args "1000", factor 17000): one job raises the
//! program break by 1 MiB, then 1000 rounds of (lower it by 64 KiB, raise it again in 16 sbrk
//! steps of 4 KiB), without touching the memory, and finally puts the break back where it was.
//! `page_test` is the same loop with 100 rounds that touch the new pages.

use super::{Factor, Fail, Job, TaskCtx};

pub const JOB: Job = Job {
    name: "brk_test",
    args: "1000",
    factor: Factor::Fixed(17_000),
    units: "System Memory Allocations",
    counters: &["sbrk", "pages_touched"],
    run,
    ..Job::BASE
};

const PAGE: usize = 4096;
const STEPS: usize = 16;

fn sbrk(delta: isize) -> Result<*mut u8, Fail> {
    // SAFETY: moving the break; nothing in this task allocates between the calls of one job.
    let p = unsafe { libc::sbrk(delta as libc::intptr_t) };
    if p as isize == -1 {
        Err(Fail::last("sbrk"))
    } else {
        Ok(p.cast())
    }
}

/// The shared loop of brk_test and page_test: `rounds` (the job's argument) × (shrink 64 KiB,
/// regrow in 16 × 4 KiB), touching every 128th byte of each new 4 KiB when `touch` is set.
pub fn grow_and_shrink(ctx: &mut TaskCtx, touch: bool) -> Result<(), Fail> {
    let rounds: u32 = ctx.arg(0)?;
    let old = sbrk(0)?;
    sbrk(1 << 20)?;
    ctx.counters[0] += 2;
    let looped = (|| {
        for _ in 0..rounds {
            sbrk(-((PAGE * STEPS) as isize))?;
            ctx.counters[0] += 1;
            for _ in 0..STEPS {
                let p = sbrk(PAGE as isize)?;
                ctx.counters[0] += 1;
                if touch {
                    for off in (0..PAGE).step_by(128) {
                        // SAFETY: p..p+PAGE was just added to the break.
                        unsafe { p.add(off).write_volatile(b' ') };
                    }
                    ctx.counters[1] += 1;
                }
            }
        }
        Ok(())
    })();
    // SAFETY: restoring the break this job started from.
    if unsafe { libc::brk(old.cast()) } < 0 && looped.is_ok() {
        return Err(Fail::last("brk"));
    }
    looped
}

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    grow_and_shrink(ctx, false)
}
