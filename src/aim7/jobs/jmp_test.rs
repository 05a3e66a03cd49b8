//! AIM7 `jmp_test` ("Non-local gotos", args "1000", factor 1000): one job does 1000 × (setjmp;
//! on the direct return, a recursive helper 10 levels deep, 11 nested calls, whose last level
//! `longjmp`s back to the setjmp, which then returns 1 and the loop goes on). No system calls
//! (glibc's `setjmp` is `_setjmp`, which does not save the signal mask).
//!
//! The C library's own `_setjmp` and `longjmp` do the work, as in AIM. Rust has no notion of a
//! function that returns twice, so the setjmp lives alone in [`one_round`], which only calls
//! the helper on the first return and only returns on the second: nothing of its frame is
//! written between the two returns, so the second sees what the first left.

use super::{Factor, Fail, Job, TaskCtx};
use std::hint::black_box;

/// Room for glibc's `jmp_buf` on any architecture (200 bytes on x86_64, 312 on aarch64).
#[repr(C, align(16))]
pub struct JmpBuf([u64; 64]);

extern "C" {
    fn _setjmp(env: *mut JmpBuf) -> libc::c_int;
    fn longjmp(env: *mut JmpBuf, val: libc::c_int) -> !;
}

/// Recursion depth of AIM's helper.
const DEPTH: u32 = 10;

pub const JOB: Job = Job {
    name: "jmp_test",
    args: "1000",
    factor: Factor::Fixed(1000),
    units: "Non-local gotos",
    counters: &["longjmp"],
    run,
    ..Job::BASE
};

/// AIM's `dummy_function`: recurse `depth` more levels, then jump back to `env`.
#[inline(never)]
fn descend(env: *mut JmpBuf, depth: u32) -> ! {
    if black_box(depth) == 0 {
        // SAFETY: env was filled by _setjmp in one_round, whose frame is still live (it is
        // below us on the stack and waits for this jump).
        unsafe { longjmp(env, 1) }
    }
    descend(env, depth - 1)
}

/// One setjmp, the descent and the jump back; returns once the jump has landed.
#[inline(never)]
fn one_round(env: *mut JmpBuf) {
    // SAFETY: env points to a JmpBuf that outlives this frame; see the file's doc comment for
    // why the second return is sound here.
    if unsafe { _setjmp(env) } == 0 {
        descend(env, DEPTH);
    }
}

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let loops: u64 = ctx.arg(0)?;
    let mut env = JmpBuf([0; 64]);
    for _ in 0..loops {
        one_round(&mut env);
        ctx.counters[0] += 1;
    }
    Ok(())
}
