//! AIM7 `series_1` ("Series Evaluations", args "100", factor 100): one job sums the Taylor
//! series of sin x for 100 values x from num_fcns.c's `vals` table (`next_value()`), term by
//! term (the power updated by × −x², the factorial by × (i+1)(i+2)) until adding a term no
//! longer changes the sum; a sum more than 1e-4 away from sin(x) is a failure, as in AIM.

use super::num_fcns::{keep, next_value};
use super::{Factor, Fail, Job, TaskCtx};

pub const JOB: Job = Job {
    name: "series_1",
    args: "100",
    factor: Factor::Fixed(100),
    units: "Series Evaluations",
    counters: &["series", "terms"],
    run,
    ..Job::BASE
};

/// The Taylor sum of sin `x` and the number of terms added.
pub fn taylor_sin(x: f64) -> (f64, u64) {
    let (mut sum, mut power, mut fact, mut i, mut terms) = (0.0f64, x, 1.0f64, 1.0f64, 0);
    loop {
        let next = sum + power / fact;
        terms += 1;
        if next == sum {
            return (sum, terms);
        }
        sum = next;
        power *= -x * x;
        fact *= (i + 1.0) * (i + 2.0);
        i += 2.0;
    }
}

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let series: u32 = ctx.arg(0)?;
    for _ in 0..series {
        let x = next_value(ctx);
        let (sum, terms) = taylor_sin(x);
        if (sum - x.sin()).abs() > 1e-4 {
            return Err(Fail::wrong("sine series"));
        }
        keep(sum);
        ctx.counters[0] += 1;
        ctx.counters[1] += terms;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_series_converges_on_sin() {
        for x in [0.0, 1e-300, 0.125, 0.5, 1.0] {
            let (s, terms) = taylor_sin(x);
            assert!((s - x.sin()).abs() < 1e-12, "{x}");
            assert!((1..=12).contains(&terms), "{x}: {terms}");
        }
    }
}
