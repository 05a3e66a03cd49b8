//! AIM7 `trig_rtns` ("Trigonometric Functions", args "100", factor 10000): one job runs
//! 100 × 100 = 10,000 iterations of out1 = acos(cos(asin(sin A))), out2 = tanh(atan(tan B)),
//! out3 = atan2(sinh C, cosh D), with A..D four fresh ARG values from num_fcns.c's table: 10
//! glibc libm calls an iteration (Rust's f64 methods call them), 100,000 per job.

use super::num_fcns::{arg, keep};
use super::{Factor, Fail, Job, TaskCtx};

pub const JOB: Job = Job {
    name: "trig_rtns",
    args: "100",
    factor: Factor::Fixed(10_000),
    units: "Trigonometric Functions",
    counters: &["iterations", "libm_calls"],
    run,
    ..Job::BASE
};

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let iterations = ctx.arg::<u64>(0)? * 100;
    for _ in 0..iterations {
        keep(arg(ctx).sin().asin().cos().acos());
        keep(arg(ctx).tan().atan().tanh());
        let (c, d) = (arg(ctx), arg(ctx));
        keep(c.sinh().atan2(d.cosh()));
        ctx.counters[0] += 1;
        ctx.counters[1] += 10;
    }
    Ok(())
}
