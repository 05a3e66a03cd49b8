//! AIM7 `page_test` ("System Allocations & Pages", args "100", factor 1700): one job raises
//! the program break by 1 MiB, then 100 rounds of (lower it by 64 KiB, raise it again in 16
//! sbrk steps of 4 KiB, writing every 128th byte of each new step so the pages are faulted in),
//! then restores the break.

use super::brk_test::grow_and_shrink;
use super::{Factor, Fail, Job, TaskCtx};

pub const JOB: Job = Job {
    name: "page_test",
    args: "100",
    factor: Factor::Fixed(1700),
    units: "System Allocations & Pages",
    counters: &["sbrk", "pages_touched"],
    run,
    ..Job::BASE
};

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    grow_and_shrink(ctx, true)
}
