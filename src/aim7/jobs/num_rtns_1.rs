//! AIM7 `num_rtns_1` ("Numeric Functions", args "100", factor 100): one job runs 100
//! iterations of C library numeric functions on values from num_fcns.c's table (9 entries an
//! iteration, each a fresh ARG, POS or NEG):
//!
//! out1 = floor(exp(A)) + ceil(log10(P)); out2 = modf(log(P)) + frexp(N, &e);
//! out3 = ldexp(A, |e|) + |fmod(5·A, P)|; out4 = sqrt(pow(P, A)); srand(e), out5 =
//! labs(n − rand()) for iteration n. The libm functions are glibc's, as AIM's (exp, log10,
//! log, pow, fmod through Rust's f64 methods, which call them; modf, frexp, ldexp directly).
//! The order of draws inside one call is C's unspecified argument order; left to right here.

use super::num_fcns::{arg, keep, neg, pos};
use super::{Factor, Fail, Job, TaskCtx};
use libc::c_int;

extern "C" {
    fn modf(x: f64, ipart: *mut f64) -> f64;
    fn frexp(x: f64, exp: *mut c_int) -> f64;
    fn ldexp(x: f64, exp: c_int) -> f64;
}

pub const JOB: Job = Job {
    name: "num_rtns_1",
    args: "100",
    factor: Factor::Fixed(100),
    units: "Numeric Functions",
    counters: &["iterations", "libm_calls"],
    run,
    ..Job::BASE
};

/// libm calls of one iteration (floor, exp, ceil, log10, modf, log, frexp, ldexp, fmod, sqrt,
/// pow), besides srand and rand.
const LIBM_CALLS: u64 = 11;

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let iterations: i64 = ctx.arg(0)?;
    for n in 0..iterations {
        keep(arg(ctx).exp().floor() + pos(ctx).log10().ceil());
        let mut ipart = 0.0;
        let mut e: c_int = 0;
        let (lp, nn) = (pos(ctx).ln(), neg(ctx));
        // SAFETY: pure libm functions writing to locals.
        keep(unsafe { modf(lp, &mut ipart) + frexp(nn, &mut e) });
        let a = arg(ctx);
        let (a5, p) = (arg(ctx) * 5.0, pos(ctx));
        // SAFETY: as above.
        keep(unsafe { ldexp(a, e.abs()) } + (a5 % p).abs());
        let (p, a) = (pos(ctx), arg(ctx));
        keep(p.powf(a).sqrt());
        // SAFETY: srand/rand touch only this task's C library state.
        let r = unsafe {
            libc::srand(e as u32);
            libc::rand()
        };
        keep((n - i64::from(r)).abs() as f64);
        ctx.counters[0] += 1;
        ctx.counters[1] += LIBM_CALLS;
    }
    Ok(())
}
