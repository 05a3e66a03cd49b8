//! AIM7 `new_raph` ("Zeros Found", args "200", factor 200): one job finds 200 zeros of
//! f(x) = 1000·sin x·cos x by Newton-Raphson with f′(x) = 1000(cos²x − sin²x): for n = 0..199,
//! from p0 = 0.05·n, p = p0 − f(p0)/f′(p0) until p equals p0 exactly (each step 2 sin and 2
//! cos); 99 steps without converging is a failure, as in AIM.

use super::num_fcns::keep;
use super::{Factor, Fail, Job, TaskCtx};

/// Steps after which AIM gives up.
const MAX_STEPS: u64 = 99;

pub const JOB: Job = Job {
    name: "new_raph",
    args: "200",
    factor: Factor::Fixed(200),
    units: "Zeros Found",
    counters: &["zeros", "steps"],
    run,
    ..Job::BASE
};

fn f(x: f64) -> f64 {
    1000.0 * x.sin() * x.cos()
}

fn df(x: f64) -> f64 {
    1000.0 * (x.cos() * x.cos() - x.sin() * x.sin())
}

/// The zero found from `p0` and the steps it took, or None after [`MAX_STEPS`].
pub fn newton(mut p0: f64) -> Option<(f64, u64)> {
    for step in 1..=MAX_STEPS {
        let p = p0 - f(p0) / df(p0);
        if p == p0 {
            return Some((p, step));
        }
        p0 = p;
    }
    None
}

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let zeros: u32 = ctx.arg(0)?;
    for n in 0..zeros {
        let (p, steps) = newton(0.05 * f64::from(n)).ok_or(Fail::wrong("Newton-Raphson"))?;
        keep(p);
        ctx.counters[0] += 1;
        ctx.counters[1] += steps;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_start_point_converges_to_a_zero() {
        for n in 0..200 {
            let (p, steps) = newton(0.05 * f64::from(n)).unwrap();
            assert!(f(p).abs() < 1e-6, "n {n}: {p}");
            assert!(steps >= 1);
        }
    }
}
