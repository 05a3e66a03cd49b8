//! AIM7 `sieve` (int_fcns.c, "Integer Sieves", args "1000000 5", factor 5): one job mallocs
//! 1,000,000 bytes, then 5 passes of: set every byte to 1 ("prime"), and for n = 2 .. 999,999
//! (all the way, not to √max, as AIM's), if byte n is still 1, clear bytes 2n, 3n, ..; then
//! counts the bytes still 1, which must be 78,500 (the 78,498 primes below a million and the
//! never-cleared 0 and 1), else the job fails, which keeps the stores alive; then frees. The
//! first 1 MB malloc of a task is an mmap; after its free glibc raises its mmap threshold, so
//! later jobs take it from the heap, as in AIM.

use super::{Factor, Fail, Job, TaskCtx};

pub const JOB: Job = Job {
    name: "sieve",
    args: "1000000 5",
    factor: Factor::Fixed(5),
    units: "Integer Sieves",
    counters: &["passes", "primes"],
    run,
    ..Job::BASE
};

/// Bytes still 1 after a sieve of a million, as AIM checks.
const EXPECTED: usize = 78_500;

/// One pass over the `max` bytes at `p`: set them all to 1, then clear the multiples of every
/// n still set.
///
/// # Safety
/// `p` holds `max` bytes.
unsafe fn pass(p: *mut u8, max: usize) {
    p.write_bytes(1, max);
    let flags = std::slice::from_raw_parts_mut(p, max);
    for n in 2..max {
        if flags[n] == 1 {
            for f in flags.iter_mut().skip(2 * n).step_by(n) {
                *f = 0;
            }
        }
    }
}

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let (max, passes): (usize, u32) = (ctx.arg(0)?, ctx.arg(1)?);
    // SAFETY: a C allocation of max bytes, freed at the end.
    let p = unsafe { libc::malloc(max) }.cast::<u8>();
    if p.is_null() {
        return Err(Fail::last("malloc"));
    }
    for _ in 0..passes {
        // SAFETY: p holds max bytes.
        unsafe { pass(p, max) };
        ctx.counters[0] += 1;
    }
    let count = if passes > 0 {
        // SAFETY: p holds max bytes, all set by the passes (there is at least one).
        unsafe { std::slice::from_raw_parts(p, max) }
            .iter()
            .filter(|&&f| f == 1)
            .count()
    } else {
        EXPECTED
    };
    // SAFETY: freeing the allocation above.
    unsafe { libc::free(p.cast()) };
    if count != EXPECTED {
        return Err(Fail::wrong("sieve count"));
    }
    ctx.counters[1] += count as u64 - 2;
    Ok(())
}
