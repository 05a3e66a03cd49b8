//! AIM7's arithmetic for one load point, as `multitask` prints it: jobs/min, jobs/min/task,
//! JTI (with AIM's integer clamp), real and cpu. (AIM's table row is in `crate::report::aim7`.)
//!
//! With J jobs per task, N tasks and T real seconds (start mark to last task reaped):
//! jobs/min = J × N × 60 / T; jobs/min/task = J × 60 / T; JTI = trunc((1 − cov) × 100) where
//! cov is the population standard deviation over the mean of the tasks' completion times,
//! forced to 0 only when the integer part of cov exceeds 1, and 100 for a single task.

pub use crate::record::aim7::Figures;

/// jobs/min = J × N × 60 / T.
pub fn jobs_per_min(jobs_per_task: u32, tasks: u32, real: f64) -> f64 {
    f64::from(jobs_per_task) * f64::from(tasks) * 60.0 / real
}

/// jobs/min/task = J × 60 / T.
pub fn jobs_per_min_per_task(jobs_per_task: u32, real: f64) -> f64 {
    f64::from(jobs_per_task) * 60.0 / real
}

/// The real time a published jobs/min implies: T = J × N × 60 / jobs/min.
pub fn real_for(jobs_per_task: u32, tasks: u32, jobs_per_min: f64) -> f64 {
    f64::from(jobs_per_task) * f64::from(tasks) * 60.0 / jobs_per_min
}

/// AIM's Job Timing Index over the tasks' completion times (seconds from the start mark).
pub fn jti(completion: &[f64]) -> i64 {
    if completion.len() <= 1 {
        return 100;
    }
    let n = completion.len() as f64;
    let mean = completion.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return 100;
    }
    let var = completion
        .iter()
        .map(|t| (t - mean) * (t - mean))
        .sum::<f64>()
        / n;
    let cov = var.sqrt() / mean;
    // AIM tests the integer part of cov: only cov >= 2 is clamped to 0.
    if cov.trunc() > 1.0 {
        0
    } else {
        ((1.0 - cov) * 100.0).trunc() as i64
    }
}

impl Figures {
    /// Computes the figures of one load point.
    pub fn compute(jobs_per_task: u32, completion: &[f64], real: f64, cpu: f64) -> Figures {
        let tasks = completion.len() as u32;
        Figures {
            tasks,
            jobs_per_min: jobs_per_min(jobs_per_task, tasks, real),
            jti: jti(completion),
            jobs_per_min_per_task: jobs_per_min_per_task(jobs_per_task, real),
            real,
            cpu,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn the_posted_creat_clo_figures_imply_aims_real_times() {
        // 15431 jobs/min at N = 3000, J = 100 => T ~ 1166.5 s; 15936 => ~ 1129.5 s.
        assert_relative_eq!(real_for(100, 3000, 15431.0), 18_000_000.0 / 15431.0);
        assert!((real_for(100, 3000, 15431.0) - 1166.5).abs() < 0.05);
        assert!((real_for(100, 3000, 15936.0) - 1129.5).abs() < 0.05);
        let t = 18_000_000.0 / 15431.0;
        assert_relative_eq!(jobs_per_min(100, 3000, t), 15431.0, epsilon = 1e-9);
        assert_relative_eq!(jobs_per_min(100, 3000, 1166.5), 15430.7758, epsilon = 1e-3);
        assert_relative_eq!(jobs_per_min_per_task(100, 1166.5), 5.143592, epsilon = 1e-5);
    }

    #[test]
    fn jti_follows_aims_definition() {
        assert_eq!(jti(&[5.0]), 100);
        assert_eq!(jti(&[10.0, 10.0, 10.0]), 100);
        // mean 10, population sd 1 => cov 0.1 => 90.
        assert_eq!(jti(&[9.0, 11.0]), 90);
        // mean 10, sd 2 => 80; truncation, not rounding: cov 0.105 => 89.
        assert_eq!(jti(&[8.0, 12.0]), 80);
        assert_eq!(jti(&[8.95, 11.05]), 89);
    }

    #[test]
    fn jti_clamp_tests_only_the_integer_part_of_cov() {
        // times 1 and 5: mean 3, sd 2 => cov 0.667 => 33.
        assert_eq!(jti(&[1.0, 5.0]), 33);
        // cov = 1.5 (integer part 1): not clamped, AIM prints -50.
        let t = [
            0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0,
            0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        ];
        let mean = 1.0 / 24.0;
        let sd = ((1.0 - mean) * (1.0 - mean) / 24.0 + 23.0 * mean * mean / 24.0_f64).sqrt();
        let cov = sd / mean;
        assert!(cov > 4.0);
        assert_eq!(jti(&t), 0);
        // two values 0 and x give cov 1 exactly: integer part 1 => not clamped => 0.
        assert_eq!(jti(&[0.0, 4.0]), 0);
        // three tasks 0, 0, x: mean x/3, sd x*sqrt(2)/3 => cov 1.414 => trunc(-41.4) = -41.
        assert_eq!(jti(&[0.0, 0.0, 3.0]), -41);
    }

    #[test]
    fn compute_uses_the_number_of_tasks_reported() {
        let f = Figures::compute(2, &[1.0, 1.0, 2.0, 2.0], 2.0, 0.5);
        assert_eq!(f.tasks, 4);
        assert_relative_eq!(f.jobs_per_min, 2.0 * 4.0 * 60.0 / 2.0);
        assert_relative_eq!(f.jobs_per_min_per_task, 60.0);
        // mean 1.5, sd 0.5 => cov 0.333 => 66.
        assert_eq!(f.jti, 66);
    }
}
