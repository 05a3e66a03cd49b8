//! Arithmetic tests (`arithoh`, `short`, `int`, `long`, `float`, `double`: UnixBench's
//! `src/arith.c` built six ways, unixbench.md §5), category Non-Index Benchmarks, no baseline.
//!
//! # What the C program says
//! `main` loops `++iter; result = dumb_stuff(result);` until SIGALRM, with `iter` a `volatile
//! unsigned long`, and prints `COUNT|iter|1|lps`. `dumb_stuff(i)` resets `i` and, for
//! i = 2..101, computes `x = i; y = x*x; z += y/(y-1);` in the build's type (`MY_TYPE`), then
//! returns `x + y + z`; the `arithoh` build has the same loop with an empty body and returns 0.
//!
//! # What the binary does, and what this file does
//! The result is fed back as the next argument, but `dumb_stuff` overwrites its argument at
//! once, so nothing ever reads it: with UnixBench's flags (`-O3 -ffast-math -march=native`)
//! gcc 12 inlines the call and deletes all of the arithmetic of every type. What is left in
//! each of the five typed builds is the loop itself, 100 empty steps (`dec; jne`), after the
//! volatile increment; in `arithoh`, whose loop was empty from the start, gcc deletes the loop
//! too and only the volatile increment remains (assembly of benches/c/arith.c, gcc 12.2). So
//! the five typed tests measure the same thing, and `arithoh` the loop overhead, which is what
//! published UnixBench scores of them are. As with `whetstone-double`, this file does the work
//! of that binary: a volatile read-modify-write of the counter per call and, except for
//! `arithoh`, a 100-step countdown loop written in assembly so that no optimiser can delete it
//! (LLVM deletes an empty counted loop, gcc keeps it). The one addition is the stop flag's load
//! per call (UnixBench's handler `exit`s from inside the loop). On another architecture the
//! steps are 100 `black_box` calls (a load and a store each), not gcc's two-instruction loop.
//!
//! Measured on the 2-vCPU VM this was written on, shared and under a load average of 5-40, so
//! only as a smoke check: gcc's build of benches/c/arith.c 15-34 M lps (`int`, 2 s runs),
//! 1.9-2.9 G lps (`arithoh`), this file through the bare worker 18-23 M and 1.3-2.9 G; two
//! adjacent pairs of the fidelity bench gave `int` ratios 0.82 and 0.84. Whether that gap is
//! the load or the extra flag load per call needs the fidelity bench on a quiet machine.
//!
//! Unit: lps (calls per second of wall time). No baseline.

use super::timer::stopped;

/// The type arith.c is built with (`arithoh`: none, the empty loop).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Datum {
    None,
    Short,
    Int,
    Long,
    Float,
    Double,
}

/// `++iter` on arith.c's `volatile unsigned long`: a load and a store in memory.
#[inline(always)]
fn bump(iter: &mut u64) {
    let p: *mut u64 = iter;
    // SAFETY: p points to a live, aligned u64 that nothing else accesses.
    unsafe { p.write_volatile(p.read_volatile().wrapping_add(1)) };
}

/// What gcc leaves of one typed `dumb_stuff` call: its loop's 100 steps, without a body.
#[inline(always)]
fn hundred_empty_steps() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the asm only counts a scratch register down to zero.
    unsafe {
        std::arch::asm!("2:", "dec {n:e}", "jnz 2b", n = inout(reg) 100u32 => _,
            options(nomem, nostack));
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: the asm only counts a scratch register down to zero.
    unsafe {
        std::arch::asm!("2:", "subs {n:w}, {n:w}, #1", "b.ne 2b", n = inout(reg) 100u32 => _,
            options(nomem, nostack));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    for i in 0..100u32 {
        std::hint::black_box(i);
    }
}

/// Runs until the stop flag is set; returns the number of calls.
pub fn run(datum: Datum) -> u64 {
    let mut iter = 0u64;
    if datum == Datum::None {
        while !stopped() {
            bump(&mut iter);
        }
    } else {
        while !stopped() {
            bump(&mut iter);
            hundred_empty_steps();
        }
    }
    iter
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `dumb_stuff` as written in arith.c, for each type: what gcc would have to compute if
    /// the result were used. It is the same constant for every type (Σ y/(y−1) is 100 in
    /// integers and 100.74 in floating point, truncated on return), which is also why gcc may
    /// fold the whole call.
    fn as_written(datum: Datum) -> i32 {
        macro_rules! sum {
            ($t:ty) => {{
                let (mut x, mut y, mut z): ($t, $t, $t) = (0 as $t, 0 as $t, 0 as $t);
                for i in 2..=101i32 {
                    x = i as $t;
                    y = ((x as i32) * (x as i32)) as $t;
                    z += y / (y - 1 as $t);
                }
                (x as f64 + y as f64 + z as f64) as i32
            }};
        }
        macro_rules! float {
            ($t:ty) => {{
                let (mut x, mut y, mut z): ($t, $t, $t) = (0.0, 0.0, 0.0);
                for i in 2..=101 {
                    x = i as $t;
                    y = x * x;
                    z += y / (y - 1.0);
                }
                (x + y + z) as i32
            }};
        }
        match datum {
            Datum::None => 0,
            Datum::Short => sum!(i16),
            Datum::Int => sum!(i32),
            Datum::Long => sum!(i64),
            Datum::Float => float!(f32),
            Datum::Double => float!(f64),
        }
    }

    #[test]
    fn the_source_computes_one_constant_for_every_type() {
        // 101 + 101² + 100 (+0.74 in floating point, truncated).
        for d in [
            Datum::Short,
            Datum::Int,
            Datum::Long,
            Datum::Float,
            Datum::Double,
        ] {
            assert_eq!(as_written(d), 10402, "{d:?}");
        }
        assert_eq!(as_written(Datum::None), 0);
    }

    #[test]
    fn the_counter_is_bumped_through_memory() {
        let mut n = 41;
        bump(&mut n);
        hundred_empty_steps();
        assert_eq!(n, 42);
    }
}
