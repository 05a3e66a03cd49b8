//! AIM7 `matrix_rtns` ("Point Transformations", args "100", factor 100): one job transforms
//! 100 points: per iteration a vector v of 4 and a 4×4 matrix M of 16 values from num_fcns.c's
//! `vals` table (`next_value()`, so 2000 draws a job, which also moves series_1's position),
//! w = M·v (16 multiply-adds), w0×1280, w1×1024 and w2×8192 converted to int, their product
//! added to a running product, and the sum of the ints plus that product kept as AIM's out1.

use super::num_fcns::{keep, next_value};
use super::{Factor, Fail, Job, TaskCtx};

pub const JOB: Job = Job {
    name: "matrix_rtns",
    args: "100",
    factor: Factor::Fixed(100),
    units: "Point Transformations",
    counters: &["points", "multiply_adds"],
    run,
    ..Job::BASE
};

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let points: u32 = ctx.arg(0)?;
    let mut prod: i64 = 0;
    for _ in 0..points {
        let mut v = [0.0f64; 4];
        let mut m = [[0.0f64; 4]; 4];
        v.iter_mut().for_each(|x| *x = next_value(ctx));
        m.iter_mut().flatten().for_each(|x| *x = next_value(ctx));
        let mut w = [0.0f64; 4];
        for (wi, row) in w.iter_mut().zip(&m) {
            *wi = row.iter().zip(&v).map(|(a, b)| a * b).sum();
        }
        let (x, y, z) = (
            (w[0] * 1280.0) as i32,
            (w[1] * 1024.0) as i32,
            (w[2] * 8192.0) as i32,
        );
        prod = prod.wrapping_add(
            i64::from(x)
                .wrapping_mul(i64::from(y))
                .wrapping_mul(i64::from(z)),
        );
        keep(f64::from(x + y + z) + prod as f64);
        ctx.counters[0] += 1;
        ctx.counters[1] += 16;
    }
    Ok(())
}
