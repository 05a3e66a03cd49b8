//! AIM's own random number generator (`aim_rand` and `aim_rand2` in rand.c, aim7-jobs.md §4):
//! the classic ANSI-C linear congruential step s ← 1103515245·s + 12345 on an unsigned long,
//! returning bits 16..30, a 15-bit value in 0..32767.
//!
//! Each task seeds both generators with its task index, so every load point repeats the same
//! streams. `aim_rand` picks the jobs and feeds disk_rr, disk_rw, the sync tests and
//! disk_src, in that one stream; `aim_rand2` only picks the task's first `DISKS` directory.
//! Because the output is 15 bits, a random disk block is always below 32768 (the first 32 MiB
//! of a file), as in AIM.

/// One AIM generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AimRand {
    state: u64,
}

impl AimRand {
    /// A generator seeded as a task seeds it: with its index.
    pub fn seeded(seed: u64) -> AimRand {
        AimRand { state: seed }
    }

    /// The next value, in 0..32767 (AIM's `aim_rand()`).
    pub fn rand(&mut self) -> u32 {
        self.state = self.state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        ((self.state >> 16) & 0x7fff) as u32
    }

    /// `rand() % n`, as AIM's `aim_rand() % n` (n must not be 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.rand() as usize % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_six(seed: u64) -> Vec<u32> {
        let mut r = AimRand::seeded(seed);
        (0..6).map(|_| r.rand()).collect()
    }

    #[test]
    fn the_streams_match_aims_test_vectors() {
        assert_eq!(first_six(0), [0, 21468, 9988, 22117, 3498, 16927]);
        assert_eq!(first_six(1), [16838, 5758, 10113, 17515, 31051, 5627]);
        assert_eq!(first_six(2), [908, 22817, 10239, 12914, 25837, 27095]);
    }

    #[test]
    fn values_are_15_bit() {
        let mut r = AimRand::seeded(12345);
        assert!((0..100_000).all(|_| r.rand() < 32768));
        assert_eq!(AimRand::seeded(1).below(100), 16838 % 100);
    }
}
