//! AIM7 `sort_rtns_1` ("Sort Operations", args "10", factor 10): the loop steps by 5 up to
//! the argument, so one job runs 2 rounds of: qsort AIM's global table of 10,000 ints
//! ascending, then descending, then ascending again (comparing by subtraction), then 2000
//! bsearch calls for the keys 0, 10, .., 19,990 (the 1000 keys of 10,000 and more miss). The
//! table persists across the task's jobs as AIM's global does (0..9999 at first) and ends each
//! job ascending. The C library's qsort and bsearch do the work, as in AIM.

use super::{Factor, Fail, Job, TaskCtx};
use libc::{c_int, c_void};

pub const JOB: Job = Job {
    name: "sort_rtns_1",
    args: "10",
    factor: Factor::Fixed(10),
    units: "Sort Operations",
    counters: &["sorts", "searches", "misses"],
    run,
    ..Job::BASE
};

const TABLE: usize = 10_000;
const SEARCHES: i32 = 2000;

extern "C" fn ascending(a: *const c_void, b: *const c_void) -> c_int {
    // SAFETY: qsort and bsearch pass pointers to ints of the table (or the key).
    unsafe { *a.cast::<c_int>() - *b.cast::<c_int>() }
}

extern "C" fn descending(a: *const c_void, b: *const c_void) -> c_int {
    // SAFETY: as above.
    unsafe { *b.cast::<c_int>() - *a.cast::<c_int>() }
}

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let limit: u32 = ctx.arg(0)?;
    let table = &mut ctx.statics.table;
    if table.is_empty() {
        table.extend(0..TABLE as i32);
    }
    let (base, size) = (
        table.as_mut_ptr().cast::<c_void>(),
        std::mem::size_of::<c_int>(),
    );
    let mut misses = 0;
    for _ in (0..limit).step_by(5) {
        for order in [ascending, descending, ascending] {
            // SAFETY: sorting the table in place with a comparator over its ints.
            unsafe { libc::qsort(base, TABLE, size, Some(order)) };
        }
        for k in 0..SEARCHES {
            let key: c_int = k * 10;
            // SAFETY: searching the sorted table for a key on the stack.
            let hit = unsafe {
                libc::bsearch(
                    (&key as *const c_int).cast(),
                    base,
                    TABLE,
                    size,
                    Some(ascending),
                )
            };
            misses += u64::from(hit.is_null());
        }
        ctx.counters[0] += 3;
        ctx.counters[1] += SEARCHES as u64;
    }
    ctx.counters[2] += misses;
    Ok(())
}
