//! AIM7 `ram_copy` ("Memory to Memory Copy", args "64", factor 25020): one job does 64
//! memcpy calls between AIM's two static 8200-byte buffers: call n copies SIZES[n] bytes from
//! a + (⌊n/8⌋ mod 8) to b + (n mod 8) (the first 64 sizes of ram.c's 90-entry table sum to
//! 25,020 bytes, the factor), then keeps b[64] as AIM's result.

use super::{Factor, Fail, Job, TaskCtx};

pub const JOB: Job = Job {
    name: "ram_copy",
    args: "64",
    factor: Factor::Fixed(25_020),
    units: "Memory to Memory Copy",
    counters: &["copies", "bytes"],
    run,
    ..Job::BASE
};

const BUF: usize = 8200;
const SEVENS: [usize; 6] = [7; 6];
const ONE_TO_SIX: [usize; 6] = [1, 2, 3, 4, 5, 6];
/// The run the table starts with and ends with (after six 7s).
const EDGE: [&[usize]; 6] = [
    &ONE_TO_SIX,
    &SEVENS,
    &[8, 9, 11, 17, 33, 63],
    &SEVENS,
    &ONE_TO_SIX,
    &SEVENS,
];
const MIDDLE: [usize; 12] = [
    127, 256, 1001, 1200, 1492, 1500, 1024, 2048, 3172, 4096, 8192, 512,
];

/// ram.c's size table: EDGE, MIDDLE, six 7s, EDGE.
pub const SIZES: [usize; 90] = {
    let mut parts: [&[usize]; 14] = [&[]; 14];
    let mut p = 0;
    while p < 6 {
        parts[p] = EDGE[p];
        parts[p + 8] = EDGE[p];
        p += 1;
    }
    parts[6] = &MIDDLE;
    parts[7] = &SEVENS;
    let mut out = [0usize; 90];
    let (mut i, mut p) = (0, 0);
    while p < parts.len() {
        let mut j = 0;
        while j < parts[p].len() {
            out[i] = parts[p][j];
            i += 1;
            j += 1;
        }
        p += 1;
    }
    out
};

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let copies: usize = ctx.arg(0)?;
    let ram = &mut ctx.statics.ram;
    if ram.is_empty() {
        ram.resize(2 * BUF, 0);
    }
    let (a, b) = ram.split_at_mut(BUF);
    let mut bytes = 0;
    for (n, &size) in SIZES.iter().enumerate().take(copies) {
        let (dst, src) = (n % 8, (n / 8) % 8);
        // SAFETY: both ranges lie inside their 8200-byte buffers (offsets < 8, sizes <= 8192).
        unsafe { libc::memcpy(b[dst..].as_mut_ptr().cast(), a[src..].as_ptr().cast(), size) };
        bytes += size as u64;
    }
    std::hint::black_box(b[64]);
    ctx.counters[0] += copies.min(SIZES.len()) as u64;
    ctx.counters[1] += bytes;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_64_sizes_sum_to_the_factor() {
        assert_eq!(SIZES[..64].iter().sum::<usize>(), 25_020);
        assert_eq!(SIZES.iter().filter(|&&s| s == 7).count(), 42);
        assert_eq!(SIZES[..12], [1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7, 7]);
        assert_eq!(SIZES[36..48], MIDDLE);
        assert_eq!(SIZES[48..54], SEVENS);
        assert_eq!(SIZES[54..], SIZES[..36]);
    }
}
