//! Recursion Test -- Tower of Hanoi (`hanoi`: UnixBench's `hanoi 20`, `src/hanoi.c`,
//! unixbench.md §5), category Non-Index Benchmarks, no baseline.
//!
//! Loop until the timer: solve the towers with 10 disks by the recursive `mov(n, from, to)`
//! (one disk: `num[from]--; num[to]++`; more: move n−1 to the other peg, one to the target,
//! n−1 onto it; the other peg is `6 − (from + to)`), then `iter++` on a volatile counter. The
//! peg counts live in an `int num[4]` that, as in the C program, is set to 10 disks on peg 1
//! once and then only moved (so the counts drift from solution to solution, which nothing
//! reads). One loop = one solution = 1023 single-disk moves and 1023 calls that recurse.
//!
//! The C program's `num` is a global the compiler must keep up to date in memory; here the
//! array is handed to `black_box` after each solution so that the optimiser keeps every move
//! as well. The recursion is compiled by LLVM instead of gcc (which inlines four levels of it
//! at -O3), so this test, like UnixBench's, measures a compiler as much as a CPU: two adjacent
//! pairs of the fidelity bench against benches/c/hanoi.c built as UnixBench builds it gave
//! ratios 0.72 and 0.73 (2 s runs, the shared VM under a load average of about 20); the
//! quiet-machine figure is still to be measured.
//!
//! Unit: lps (solutions per second of wall time). No baseline.

use super::timer::stopped;

/// hanoi.c's default number of disks.
pub const DISKS: i32 = 10;

/// `mov(n, f, t)`: moves `n` disks from peg `f` to peg `t` (pegs 1..=3).
fn mov(num: &mut [i32; 4], n: i32, f: usize, t: usize) {
    if n == 1 {
        num[f & 3] -= 1;
        num[t & 3] += 1;
        return;
    }
    let o = 6 - (f + t);
    mov(num, n - 1, f, o);
    mov(num, 1, f, t);
    mov(num, n - 1, o, t);
}

/// Runs until the stop flag is set; returns the number of solutions.
pub fn run() -> u64 {
    let mut num = [0i32; 4];
    num[1] = DISKS;
    let mut iter = 0u64;
    let p: *mut u64 = &mut iter;
    while !stopped() {
        mov(&mut num, DISKS, 1, 3);
        std::hint::black_box(&mut num);
        // SAFETY: p points to `iter`, alive and accessed only here (hanoi.c's volatile iter).
        unsafe { p.write_volatile(p.read_volatile() + 1) };
    }
    iter
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_solution_moves_every_disk_to_the_target() {
        let mut num = [0, DISKS, 0, 0];
        mov(&mut num, DISKS, 1, 3);
        assert_eq!(num, [0, 0, 0, DISKS]);
        // A second solution from the drifted counts, as hanoi.c's loop does.
        mov(&mut num, DISKS, 1, 3);
        assert_eq!(num, [0, -DISKS, 0, 2 * DISKS]);
    }
}
