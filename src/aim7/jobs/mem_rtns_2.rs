//! AIM7 `mem_rtns_2` ("Block Memory Operations", args "100", factor 100): one job runs 100
//! iterations n over two 8200-byte stack buffers, with off1 = n mod 8, off2 = ⌊n/8⌋ mod 8 and
//! s = S[n mod 40] (`memsizes`): memset(buf1+off1, 'A', s); memset(buf2+off2, 'A', s); put a
//! 'Z' at buf1[off1 + n mod s]; memchr for it; memcmp the two; if buf1's is greater, put the
//! 'A' back; memcpy(buf1+off1 ← buf2+off2, s); memmove(buf2+off1 ← buf1+off2, s). All through
//! the C library's mem* functions.
//!
//! In AIM nothing of this escapes (the buffers are dead locals), so a C compiler may delete it
//! all; patchbench keeps it: the buffers go through `black_box` after every iteration, which
//! costs no instruction.

use super::memsizes::SIZES;
use super::{Factor, Fail, Job, TaskCtx};
use std::hint::black_box;
use std::mem::MaybeUninit;

pub const JOB: Job = Job {
    name: "mem_rtns_2",
    args: "100",
    factor: Factor::Fixed(100),
    units: "Block Memory Operations",
    counters: &["iterations", "bytes"],
    run,
    ..Job::BASE
};

const BUF: usize = 8200;

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let iterations: usize = ctx.arg(0)?;
    // AIM's buffers are uninitialised locals; only the C functions below touch them.
    let mut buf1 = [MaybeUninit::<u8>::uninit(); BUF];
    let mut buf2 = [MaybeUninit::<u8>::uninit(); BUF];
    let (b1, b2) = (
        buf1.as_mut_ptr().cast::<u8>(),
        buf2.as_mut_ptr().cast::<u8>(),
    );
    let (a, z) = (libc::c_int::from(b'A'), libc::c_int::from(b'Z'));
    for n in 0..iterations {
        let (off1, off2, s) = (n % 8, (n / 8) % 8, SIZES[n % 40]);
        // SAFETY: every range is inside its 8200-byte buffer (offsets < 8, sizes <= 8192).
        unsafe {
            let (p1, p2) = (b1.add(off1), b2.add(off2));
            libc::memset(p1.cast(), a, s);
            libc::memset(p2.cast(), a, s);
            *p1.add(n % s) = b'Z';
            black_box(libc::memchr(p1.cast(), z, s));
            if libc::memcmp(p1.cast(), p2.cast(), s) > 0 {
                *p1.add(n % s) = b'A';
            }
            libc::memcpy(p1.cast(), p2.cast(), s);
            libc::memmove(b2.add(off1).cast(), b1.add(off2).cast(), s);
        }
        black_box(&mut buf1);
        black_box(&mut buf2);
        ctx.counters[0] += 1;
        ctx.counters[1] += s as u64;
    }
    Ok(())
}
