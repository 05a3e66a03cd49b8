//! Host CPUs for guests: the CPUs this process may use, the default set for a campaign's
//! guests, a duet's two disjoint halves (which half each side gets is drawn per round from the
//! campaign's seed, so the assignment is random but reproducible), and pinning: the CPU set is
//! applied to QEMU between fork and exec, so every thread QEMU makes (vCPUs, I/O, emulator)
//! inherits it.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// The CPUs this process may run on, ascending.
pub fn allowed() -> Vec<u32> {
    let Ok(set) = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)) else {
        return Vec::new();
    };
    (0..nix::sched::CpuSet::count())
        .filter(|&c| set.is_set(c).unwrap_or(false))
        .map(|c| c as u32)
        .collect()
}

/// The default vCPUs of a guest: 2, or 1 when there are fewer than 4 CPUs to use (so a small
/// host keeps a CPU for the rest of QEMU and the system, and a duet's halves hold a guest each).
pub fn default_vcpus(cpus: usize) -> u32 {
    if cpus < 4 {
        1
    } else {
        2
    }
}

/// The default CPU set: `vcpus` CPUs per guest, taken from the end of `allowed` (CPU 0 is
/// where a system's housekeeping and interrupts usually land), or all of `allowed` when it has
/// no more.
pub fn default_cpus(allowed: &[u32], vcpus: u32, duet: bool) -> Vec<u32> {
    let wanted = vcpus as usize * if duet { 2 } else { 1 };
    allowed[allowed.len().saturating_sub(wanted)..].to_vec()
}

/// A duet's CPU sets for `round`: `[base, patched]`, the two halves of `cpus` (sorted), swapped
/// or not as the campaign's seed and the round draw.
pub fn duet_sets(cpus: &[u32], seed: u64, round: u32) -> [Vec<u32>; 2] {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let half = sorted.len() / 2;
    let (a, b) = (sorted[..half].to_vec(), sorted[half..half * 2].to_vec());
    let mut rng = ChaCha8Rng::seed_from_u64(
        seed ^ 0xD0E7_5E75 ^ u64::from(round).wrapping_mul(0xBF58_476D_1CE4_E5B9),
    );
    if rng.random_bool(0.5) {
        [b, a]
    } else {
        [a, b]
    }
}

/// Makes `cmd` run on `cpus` (set in the child before exec, so every thread inherits it).
pub fn pin(cmd: &mut Command, cpus: &[u32]) -> Result<(), String> {
    let mut set = nix::sched::CpuSet::new();
    for &c in cpus {
        set.set(c as usize)
            .map_err(|e| format!("CPU {c} cannot be in a CPU set: {e}"))?;
    }
    // SAFETY: sched_setaffinity is a plain system call, safe between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)
                .map_err(std::io::Error::from)
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fit_small_and_large_hosts() {
        assert_eq!(default_vcpus(1), 1);
        assert_eq!(default_vcpus(2), 1);
        assert_eq!(default_vcpus(4), 2);
        assert_eq!(default_vcpus(64), 2);
        assert_eq!(default_vcpus(2), 1);
        assert_eq!(default_vcpus(3), 1);
        assert_eq!(default_vcpus(8), 2);
        assert_eq!(default_cpus(&[0, 1], 2, false), [0, 1]);
        assert_eq!(default_cpus(&[0, 1, 2, 3, 4, 5, 6, 7], 2, false), [6, 7]);
        assert_eq!(
            default_cpus(&[0, 1, 2, 3, 4, 5, 6, 7], 2, true),
            [4, 5, 6, 7]
        );
        assert_eq!(default_cpus(&[0, 1], 2, true), [0, 1]);
    }

    #[test]
    fn duet_sets_are_disjoint_halves_swapped_by_seed_and_round() {
        let cpus = [3, 2, 1, 0];
        let mut swapped = 0;
        for round in 1..=40 {
            let [base, patched] = duet_sets(&cpus, 42, round);
            assert_eq!(base.len(), 2);
            assert_eq!(patched.len(), 2);
            assert!(base.iter().all(|c| !patched.contains(c)));
            assert_eq!(duet_sets(&cpus, 42, round), [base.clone(), patched]);
            if base == [2, 3] {
                swapped += 1;
            }
        }
        assert!(
            (5..=35).contains(&swapped),
            "{swapped} of 40 rounds swapped"
        );
        assert_ne!(
            (1..=20).map(|r| duet_sets(&cpus, 1, r)).collect::<Vec<_>>(),
            (1..=20).map(|r| duet_sets(&cpus, 2, r)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_pinned_program_and_its_threads_run_only_on_its_set() {
        let cpu = *allowed().last().unwrap();
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg("grep Cpus_allowed_list /proc/self/status");
        pin(&mut cmd, &[cpu]).unwrap();
        let out = cmd.output().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .last(),
            Some(cpu.to_string().as_str())
        );
    }
}
