//! AIM7 `page_test` ("System Allocations & Pages", factor 1700): one job raises the program
//! break by 1 MiB, then 100 rounds of (lower it by 64 KiB, raise it again in 16 sbrk steps of
//! 4 KiB, writing every 128th byte of each new step so the pages are faulted in), then restores
//! the break.

use super::brk_test::grow_and_shrink;
use super::{Factor, Fail, Fixture, Job, TaskCtx};

pub const JOB: Job = Job {
    name: "page_test",
    aliases: &[],
    factor: Factor::Fixed(1700),
    units: "System Allocations & Pages",
    uses_dirs: false,
    fixture: Fixture::None,
    extra_procs: 0,
    counters: &["sbrk", "pages_touched"],
    run,
};

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    grow_and_shrink(ctx, 100, true)
}
