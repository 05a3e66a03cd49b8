//! AIM7 `mem_rtns_1` ("Dynamic Memory Operations", args "100", factor 30000): one job runs 100
//! iterations of: for i = 0..99, malloc(45) with a 44-character greeting strcpy'd into it,
//! malloc(S[i mod 40]) and calloc(S[(i+1) mod 40], 1) (S: `memsizes`); read the first byte of
//! each of the 300 blocks into a running count (the malloc'd ones hold whatever the heap left);
//! free them by triples from the end (i = 297, 294, .., 0: free i, then i+2, then i+1); and add
//! the count to AIM's result, which keeps it alive. 30,000 allocations and frees per job, from
//! the C library's malloc, as AIM's.

use super::memsizes::SIZES;
use super::{Factor, Fail, Job, TaskCtx};
use std::hint::black_box;

pub const JOB: Job = Job {
    name: "mem_rtns_1",
    args: "100",
    factor: Factor::Fixed(30_000),
    units: "Dynamic Memory Operations",
    counters: &["allocations", "frees"],
    run,
    ..Job::BASE
};

const GREETING: &std::ffi::CStr = c"Hello and welcome to the AIM Benchmark suite";
const BLOCKS: usize = 300;

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let iterations: u32 = ctx.arg(0)?;
    let mut count: i64 = 0;
    let mut blocks = [std::ptr::null_mut::<libc::c_void>(); BLOCKS];
    for _ in 0..iterations {
        for i in 0..BLOCKS / 3 {
            // SAFETY: C allocations; the greeting (44 characters and a NUL) fits in 45 bytes.
            unsafe {
                let g = libc::malloc(45);
                if !g.is_null() {
                    libc::strcpy(g.cast(), GREETING.as_ptr());
                }
                blocks[3 * i] = g;
                blocks[3 * i + 1] = libc::malloc(SIZES[i % 40]);
                blocks[3 * i + 2] = libc::calloc(SIZES[(i + 1) % 40], 1);
            }
        }
        if blocks.iter().any(|b| b.is_null()) {
            return Err(Fail::last("malloc"));
        }
        for &b in &blocks {
            // SAFETY: every block holds at least one byte; a volatile read of what malloc gave.
            count += i64::from(unsafe { black_box(b).cast::<i8>().read_volatile() });
        }
        for i in (0..BLOCKS).step_by(3).rev() {
            // SAFETY: each block is freed once.
            unsafe {
                libc::free(blocks[i]);
                libc::free(blocks[i + 2]);
                libc::free(blocks[i + 1]);
            }
        }
        ctx.counters[0] += BLOCKS as u64;
        ctx.counters[1] += BLOCKS as u64;
    }
    black_box(count);
    Ok(())
}
