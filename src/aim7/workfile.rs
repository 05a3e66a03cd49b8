//! AIM's workfiles and how a task works through one (aim7.md §1, aim7-jobs.md §0, §2, §6).
//!
//! A workfile lists weighted tests, one `<weight> <test>` line each, and the disk sizes
//! `FILESIZE: <n>K|M` and `POOLSIZE: <n>K|M` (in 1 KiB blocks; M = ×1024); `#` lines are
//! comments; at most 100 lines; an unknown test is an error. The four mixes AIM ships
//! (compute, dbase, fserver, shared) are built in, with AIM's weights and sizes; one TEST on
//! the command line is the one-line workfile LKP generates (`10 <test>`).
//!
//! Per-task job counts (AIM's `runtap`): x = weight / Σweights × LOADNUM (100); the count is
//! ⌊x⌋, plus one if the fraction is at least 0.5, and 1 if the fraction is non-zero but ⌊x⌋ is
//! 0. A task runs J = Σcounts jobs (J replaces LOADNUM in jobs/min). It picks each job with
//! `k = aim_rand() % lines`; if line k has jobs left it runs one, else it draws again among the
//! lines with jobs left, in order (`reduce_list`). The draws come from the task's one
//! `aim_rand` stream, which the disk tests also draw from, as in AIM.

use super::aim_rand::AimRand;
use super::jobs::{self, Job};
use std::path::Path;

/// AIM's limit on workfile lines.
pub const MAX_LINES: usize = 100;

/// One weighted test of a workfile.
#[derive(Debug, Clone, Copy)]
pub struct Line {
    pub job: &'static Job,
    pub weight: u32,
}

/// A workfile: what the tasks of one load point run.
#[derive(Debug, Clone)]
pub struct Mix {
    /// The test's name for one TEST, the mix's name, or the file name of a PATH.
    pub name: String,
    pub lines: Vec<Line>,
    /// FILESIZE and POOLSIZE in KiB, when the workfile gives them.
    pub filesize: Option<u64>,
    pub poolsize: Option<u64>,
}

/// The four mixes AIM ships, in AIM's workfile format (weights and sizes as shipped; lines in
/// alphabetical order).
pub const BUILTIN: [(&str, &str); 4] = [
    (
        "compute",
        "FILESIZE: 100K\nPOOLSIZE: 250M\n50 add_double\n30 add_int\n30 add_long\n10 array_rtns\n\
         10 disk_cp\n30 disk_rd\n10 disk_src\n20 disk_wrt\n40 div_double\n30 div_int\n\
         50 matrix_rtns\n40 mem_rtns_1\n40 mem_rtns_2\n50 mul_double\n30 mul_int\n30 mul_long\n\
         40 new_raph\n40 num_rtns_1\n50 page_test\n40 series_1\n10 shared_memory\n30 sieve\n\
         20 stream_pipe\n30 string_rtns\n40 trig_rtns\n20 udp_test\n",
    ),
    (
        "dbase",
        "FILESIZE: 1M\nPOOLSIZE: 25M\n20 add_int\n20 add_long\n20 add_short\n40 disk_rd\n\
         40 disk_rr\n10 div_int\n10 div_long\n10 div_short\n10 jmp_test\n40 mem_rtns_1\n\
         40 mem_rtns_2\n10 mul_int\n10 mul_long\n10 mul_short\n40 page_test\n20 ram_copy\n\
         40 shared_memory\n30 sieve\n30 sort_rtns_1\n10 stream_pipe\n30 string_rtns\n\
         30 sync_disk_rw\n30 sync_disk_update\n",
    ),
    (
        "fserver",
        "FILESIZE: 10M\nPOOLSIZE: 20M\n20 add_int\n20 add_long\n20 add_short\n20 creat-clo\n\
         20 dir_rtns_1\n30 disk_cp\n30 disk_rd\n30 disk_rr\n30 disk_rw\n30 disk_src\n\
         30 disk_wrt\n10 div_int\n10 div_long\n10 div_short\n10 jmp_test\n20 link_test\n\
         40 mem_rtns_1\n10 mem_rtns_2\n20 misc_rtns_1\n10 mul_int\n10 mul_long\n10 mul_short\n\
         20 ram_copy\n10 signal_test\n30 sort_rtns_1\n30 string_rtns\n5 sync_disk_cp\n\
         5 sync_disk_rw\n5 sync_disk_wrt\n10 tcp_test\n40 udp_test\n",
    ),
    (
        "shared",
        "FILESIZE: 1M\nPOOLSIZE: 10M\n30 add_double\n30 add_float\n30 add_int\n30 add_long\n\
         30 add_short\n10 array_rtns\n10 brk_test\n10 creat-clo\n10 dgram_pipe\n10 dir_rtns_1\n\
         20 disk_cp\n20 disk_rd\n20 disk_rr\n20 disk_rw\n20 disk_src\n20 disk_wrt\n\
         10 div_double\n10 div_float\n10 div_int\n10 div_long\n10 div_short\n20 exec_test\n\
         10 fork_test\n10 jmp_test\n10 link_test\n10 matrix_rtns\n10 mem_rtns_1\n\
         10 mem_rtns_2\n10 misc_rtns_1\n20 mul_double\n20 mul_float\n20 mul_int\n20 mul_long\n\
         20 mul_short\n10 new_raph\n10 num_rtns_1\n10 page_test\n10 pipe_cpy\n10 ram_copy\n\
         10 series_1\n10 shared_memory\n20 shell_rtns_1\n10 sieve\n10 signal_test\n\
         10 sort_rtns_1\n10 stream_pipe\n30 string_rtns\n10 sync_disk_cp\n10 sync_disk_rw\n\
         10 sync_disk_wrt\n10 tcp_test\n10 trig_rtns\n10 udp_test\n",
    ),
];

/// Parses a size in KiB blocks: `1024`, `1024K`, `1M`.
pub fn parse_kib(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('M' | 'm') => (&t[..t.len() - 1], 1024),
        Some('K' | 'k') => (&t[..t.len() - 1], 1),
        _ => (t, 1),
    };
    let n: u64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a size; give KiB like 1024, or 1M"))?;
    n.checked_mul(mult)
        .filter(|&v| v <= 1 << 30)
        .ok_or_else(|| format!("{s:?} is too large (at most 1024G)"))
}

impl Mix {
    /// One TEST: LKP's one-line workfile `10 <test>`.
    pub fn single(job: &'static Job) -> Mix {
        Mix {
            name: job.name.to_string(),
            lines: vec![Line { job, weight: 10 }],
            filesize: None,
            poolsize: None,
        }
    }

    /// A built-in mix by name.
    pub fn builtin(name: &str) -> Option<Mix> {
        let (n, text) = BUILTIN.iter().find(|(n, _)| *n == name)?;
        Mix::parse(n, text).ok()
    }

    /// Reads a workfile in AIM's format from `path`.
    pub fn read(path: &Path) -> Result<Mix, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the workfile {}: {e}", path.display()))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        Mix::parse(&name, &text).map_err(|e| format!("workfile {}: {e}", path.display()))
    }

    /// Parses AIM's workfile format; errors name the line.
    pub fn parse(name: &str, text: &str) -> Result<Mix, String> {
        let mut mix = Mix {
            name: name.to_string(),
            lines: Vec::new(),
            filesize: None,
            poolsize: None,
        };
        for (no, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = |msg: String| format!("line {}: {msg}", no + 1);
            if let Some((key, value)) = line.split_once(':') {
                let size = parse_kib(value).map_err(at)?;
                match key.trim().to_ascii_uppercase().as_str() {
                    "FILESIZE" => mix.filesize = Some(size),
                    "POOLSIZE" => mix.poolsize = Some(size),
                    other => {
                        return Err(at(format!(
                            "unknown setting {other:?}; AIM's workfile has FILESIZE: and POOLSIZE:"
                        )))
                    }
                }
                continue;
            }
            let mut words = line.split_whitespace();
            let (w, test) = (words.next().unwrap_or_default(), words.next());
            let weight: u32 = w.parse().map_err(|_| {
                at(format!(
                    "{line:?} is not `<weight> <test>` (e.g. `20 creat-clo`)"
                ))
            })?;
            let test =
                test.ok_or_else(|| at(format!("{line:?} names no test after the weight")))?;
            let job = jobs::find(test).ok_or_else(|| {
                at(format!(
                    "unknown AIM7 test {test:?}; known tests: {}",
                    jobs::names()
                ))
            })?;
            mix.lines.push(Line { job, weight });
            if mix.lines.len() > MAX_LINES {
                return Err(at(format!("more than AIM's {MAX_LINES} tests")));
            }
        }
        if mix.lines.iter().all(|l| l.weight == 0) {
            return Err("no test with a weight above 0".into());
        }
        if mix.filesize == Some(0) && mix.poolsize == Some(0) {
            return Err("FILESIZE and POOLSIZE are both 0; AIM needs one of them above 0".into());
        }
        Ok(mix)
    }

    /// Per-task job counts with `loadnum` as AIM's LOADNUM.
    pub fn counts(&self, loadnum: u32) -> Vec<u32> {
        let weights: Vec<u32> = self.lines.iter().map(|l| l.weight).collect();
        counts(&weights, loadnum)
    }
}

/// AIM's per-test job counts: weight/Σweights × loadnum, rounded half up, and at least 1 for
/// any non-zero weight.
pub fn counts(weights: &[u32], loadnum: u32) -> Vec<u32> {
    let total: f64 = weights.iter().map(|&w| f64::from(w)).sum();
    weights
        .iter()
        .map(|&w| {
            let x = f64::from(w) / total * f64::from(loadnum);
            let (whole, frac) = (x.floor(), x - x.floor());
            if frac > 0.0 && whole == 0.0 {
                1
            } else {
                whole as u32 + u32::from(frac >= 0.5)
            }
        })
        .collect()
}

/// What one task has left to run, and AIM's way of picking the next job.
#[derive(Debug, Clone)]
pub struct Schedule {
    left: Vec<u32>,
}

impl Schedule {
    pub fn new(counts: &[u32]) -> Schedule {
        Schedule {
            left: counts.to_vec(),
        }
    }

    /// The line of the next job, or None when every count is spent.
    pub fn next(&mut self, rng: &mut AimRand) -> Option<usize> {
        if self.left.is_empty() {
            return None;
        }
        let mut k = rng.below(self.left.len());
        if self.left[k] == 0 {
            let live = self.left.iter().filter(|&&c| c > 0).count();
            if live == 0 {
                return None;
            }
            let pick = rng.below(live);
            k = (0..self.left.len())
                .filter(|&i| self.left[i] > 0)
                .nth(pick)?;
        }
        self.left[k] -= 1;
        Some(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jobs_per_task(name: &str) -> u32 {
        Mix::builtin(name).unwrap().counts(100).iter().sum()
    }

    #[test]
    fn the_four_mixes_give_aims_jobs_per_task() {
        assert_eq!(jobs_per_task("compute"), 101);
        assert_eq!(jobs_per_task("dbase"), 99);
        assert_eq!(jobs_per_task("fserver"), 101);
        assert_eq!(jobs_per_task("shared"), 97);
        let lines = |n: &str| Mix::builtin(n).unwrap().lines.len();
        assert_eq!(
            [
                lines("compute"),
                lines("dbase"),
                lines("fserver"),
                lines("shared")
            ],
            [26, 23, 31, 53]
        );
        let sum = |n: &str| {
            Mix::builtin(n)
                .unwrap()
                .lines
                .iter()
                .map(|l| l.weight)
                .sum::<u32>()
        };
        assert_eq!(
            [sum("compute"), sum("dbase"), sum("fserver"), sum("shared")],
            [820, 550, 595, 780]
        );
    }

    #[test]
    fn counts_round_as_aims() {
        let fserver = Mix::builtin("fserver").unwrap();
        let c = fserver.counts(100);
        let of = |t: &str| c[fserver.lines.iter().position(|l| l.job.name == t).unwrap()];
        // 20/595 = 3.36 -> 3; 30 -> 5.04 -> 5; 40 -> 6.72 -> 7; 10 -> 1.68 -> 2; 5 -> 0.84 -> 1.
        assert_eq!(
            [
                of("creat-clo"),
                of("disk_cp"),
                of("udp_test"),
                of("tcp_test"),
                of("sync_disk_rw")
            ],
            [3, 5, 7, 2, 1]
        );
        let compute = Mix::builtin("compute").unwrap();
        assert_eq!(compute.filesize, Some(100));
        assert_eq!(compute.poolsize, Some(250 * 1024));
        // 10/820 = 1.22 -> 1; 50/820 = 6.10 -> 6.
        assert_eq!(counts(&[10, 50, 760], 100), [1, 6, 93]);
        // A fraction that rounds to 0 is forced to 1; a zero weight stays 0.
        assert_eq!(counts(&[1, 1000, 0], 100), [1, 100, 0]);
        assert_eq!(counts(&[10], 100), [100]);
        assert_eq!(counts(&[1, 1, 1], 3), [1, 1, 1]);
    }

    #[test]
    fn a_workfile_in_aims_format_parses_and_bad_lines_are_named() {
        let m = Mix::parse(
            "mine",
            "# a comment\nFILESIZE: 10M\nPOOLSIZE: 20M\n\n20 creat-clo\n10 disk_rr\n",
        )
        .unwrap();
        assert_eq!((m.filesize, m.poolsize), (Some(10240), Some(20480)));
        assert_eq!(m.lines.len(), 2);
        assert_eq!(m.lines[0].job.name, "creat-clo");
        let e = Mix::parse("x", "10 creat-clo\n10 bogus\n").unwrap_err();
        assert!(
            e.contains("line 2") && e.contains("unknown AIM7 test"),
            "{e}"
        );
        assert!(Mix::parse("x", "ten creat-clo")
            .unwrap_err()
            .contains("line 1"));
        assert!(Mix::parse("x", "FILESIZE: 0K\nPOOLSIZE: 0M\n10 sieve")
            .unwrap_err()
            .contains("both 0"));
        assert!(Mix::parse("x", "# nothing\n")
            .unwrap_err()
            .contains("no test"));
        let long: String = (0..101).map(|_| "1 sieve\n").collect();
        assert!(Mix::parse("x", &long).unwrap_err().contains("100"));
    }

    #[test]
    fn a_schedule_runs_every_count_and_follows_aims_draws() {
        let counts = [3, 0, 2];
        let mut s = Schedule::new(&counts);
        let mut rng = AimRand::seeded(0);
        let picks: Vec<usize> = std::iter::from_fn(|| s.next(&mut rng)).collect();
        assert_eq!(picks.len(), 5);
        assert_eq!(picks.iter().filter(|&&k| k == 0).count(), 3);
        assert_eq!(picks.iter().filter(|&&k| k == 2).count(), 2);
        // Seed 0 draws 0, 21468, 9988, ...: 0 % 3 = 0 -> line 0; 21468 % 3 = 0 -> line 0;
        // 9988 % 3 = 1 (empty) -> redraw 22117 % 2 live = 1 -> line 2.
        assert_eq!(picks[..3], [0, 0, 2]);
        // One line: every job is that line, one draw each.
        let mut one = Schedule::new(&[4]);
        let mut rng = AimRand::seeded(7);
        assert_eq!(std::iter::from_fn(|| one.next(&mut rng)).count(), 4);
    }
}
