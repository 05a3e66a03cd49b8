//! The kernel of AIM's 15 arithmetic tests (add.c, mul.c, div.c; aim7-jobs.md §1a), one
//! generic loop instantiated per type (double, float, long, int, short) and operation.
//!
//! A job parses (a, b, L) from its argument string, as AIM's sscanf does, sets x = a, y = b and
//! acc to the operation's start value, runs L iterations of a straight-line block of 12
//! dependent updates over (acc, x, y), and stores acc where the compiler must keep it (AIM's
//! `res` field; here `black_box`). So 12·L operations per job, no system calls. Because the
//! inputs come from the argument string at run time and acc is observed, the compiler keeps
//! every operation, as gcc -O2 keeps AIM's (it does not spot that add's state returns to its
//! start after each iteration); nothing else is hidden from the optimiser, so values stay in
//! registers as in the C. Integer arithmetic wraps, as C's short and int in practice.
//!
//! mul_* use the same 12-step pattern for every type, as the spec gives it. (The spec also
//! remarks that with x = y = 1 the integer acc never changes; under this pattern y takes acc's
//! value and the integers wrap instead. The cost, 12 dependent multiplies a loop, is the
//! same either way.)

use super::{Fail, Job, TaskCtx, BAD_ARGS};
use std::num::Wrapping;
use std::ops::{Add as _, Div as _, Mul as _};

/// Counter names of every arithmetic test.
pub const COUNTERS: &[&str] = &["loops", "operations"];
/// Operations per loop iteration (AIM's OPS_PER_LOOP).
pub const OPS_PER_LOOP: u64 = 12;

/// A C arithmetic type as these tests use it.
pub trait Value: Copy {
    /// Whether the type is floating point (div_* use a different sequence for those).
    const FLOAT: bool;
    /// acc's start value for mul_* and div_*.
    const MUL_START: Self;
    const DIV_START: Self;
    const ZERO: Self;
    fn parse(s: &str) -> Option<Self>;
    fn plus(self, o: Self) -> Self;
    fn times(self, o: Self) -> Self;
    fn over(self, o: Self) -> Self;
}

macro_rules! value {
    ($t:ty, $float:expr, $mul:expr, $div:expr, $zero:expr, $parse:ty, $wrap:expr) => {
        impl Value for $t {
            const FLOAT: bool = $float;
            const MUL_START: Self = $mul;
            const DIV_START: Self = $div;
            const ZERO: Self = $zero;
            fn parse(s: &str) -> Option<Self> {
                s.parse::<$parse>().ok().map($wrap)
            }
            fn plus(self, o: Self) -> Self {
                self.add(o)
            }
            fn times(self, o: Self) -> Self {
                self.mul(o)
            }
            fn over(self, o: Self) -> Self {
                self.div(o)
            }
        }
    };
}

value!(f64, true, 1.0, 1.0, 0.0, f64, |v| v);
value!(f32, true, 1.0, 1.0, 0.0, f32, |v| v);
value!(
    Wrapping<i64>,
    false,
    Wrapping(12_345_678),
    Wrapping(1_234_578),
    Wrapping(0),
    i64,
    Wrapping
);
value!(
    Wrapping<i32>,
    false,
    Wrapping(12_345_678),
    Wrapping(1_234_578),
    Wrapping(0),
    i32,
    Wrapping
);
value!(
    Wrapping<i16>,
    false,
    Wrapping(1234),
    Wrapping(1234),
    Wrapping(0),
    i16,
    Wrapping
);

/// One of the three operations: its start value and its 12-step block.
pub trait Op {
    fn start<T: Value>() -> T;
    fn block<T: Value>(acc: T, x: T, y: T) -> (T, T, T);
}

/// add_*: acc starts at 0.
pub struct Add;
/// mul_*: acc starts at 1 (double, float), 12345678 (long, int) or 1234 (short).
pub struct Mul;
/// div_*: acc starts at 1 (double, float), 1234578 (long, int) or 1234 (short).
pub struct Div;

/// The block add and mul share, with `f` as the operation: twice (acc∘=x; x∘=y; x∘=y; y∘=acc;
/// y∘=acc; acc∘=x).
#[inline(always)]
fn twelve<T: Value>(mut a: T, mut x: T, mut y: T, f: impl Fn(T, T) -> T) -> (T, T, T) {
    for _ in 0..2 {
        a = f(a, x);
        x = f(x, y);
        x = f(x, y);
        y = f(y, a);
        y = f(y, a);
        a = f(a, x);
    }
    (a, x, y)
}

/// add and mul: the 12-step block with `$f`, from `$start`.
macro_rules! twelve_op {
    ($op:ty, $start:ident, $f:ident) => {
        impl Op for $op {
            fn start<T: Value>() -> T {
                T::$start
            }
            #[inline(always)]
            fn block<T: Value>(a: T, x: T, y: T) -> (T, T, T) {
                twelve(a, x, y, T::$f)
            }
        }
    };
}

twelve_op!(Add, ZERO, plus);
twelve_op!(Mul, MUL_START, times);

impl Op for Div {
    fn start<T: Value>() -> T {
        T::DIV_START
    }
    /// Floating point: (acc/=x; y/=acc; x/=y; y/=x; acc/=y; y/=acc) twice. Integers:
    /// (acc/=x; acc/=y; x/=y; y/=x) three times.
    #[inline(always)]
    fn block<T: Value>(mut a: T, mut x: T, mut y: T) -> (T, T, T) {
        if T::FLOAT {
            for _ in 0..2 {
                a = a.over(x);
                y = y.over(a);
                x = x.over(y);
                y = y.over(x);
                a = a.over(y);
                y = y.over(a);
            }
        } else {
            for _ in 0..3 {
                a = a.over(x);
                a = a.over(y);
                x = x.over(y);
                y = y.over(x);
            }
        }
        (a, x, y)
    }
}

/// The kernel: `loops` blocks from (start, x, y); returns acc.
pub fn kernel<T: Value, O: Op>(x: T, y: T, loops: u64) -> T {
    let (mut a, mut x, mut y) = (O::start::<T>(), x, y);
    for _ in 0..loops {
        (a, x, y) = O::block(a, x, y);
    }
    a
}

/// One job of the test whose type is `T` and operation `O`.
pub fn run<T: Value, O: Op>(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let value = |i: usize| T::parse(ctx.field(i)?).ok_or(BAD_ARGS);
    let (x, y) = (value(0)?, value(1)?);
    let loops: u64 = ctx.arg(2)?;
    std::hint::black_box(kernel::<T, O>(x, y, loops));
    ctx.counters[0] += loops;
    ctx.counters[1] += OPS_PER_LOOP * loops;
    Ok(())
}

/// The registration of one arithmetic test.
pub const fn job<T: Value, O: Op>(
    name: &'static str,
    args: &'static str,
    factor: u64,
    units: &'static str,
) -> Job {
    Job::simple(name, args, factor, units, COUNTERS, run::<T, O>)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_returns_to_its_start_after_every_block() {
        // add_double's arguments, as AIM's sscanf reads them.
        let v: f64 = "3.14159".parse().unwrap();
        assert_eq!(kernel::<f64, Add>(v, -v, 1000), 0.0);
        assert_eq!(kernel::<f32, Add>(3.5, -3.5, 1000), 0.0);
        assert_eq!(
            kernel::<Wrapping<i16>, Add>(Wrapping(3), Wrapping(-3), 7),
            Wrapping(0)
        );
        assert_eq!(Add::block(0.0, v, -v), (0.0, v, -v));
    }

    #[test]
    fn integer_divides_by_one_keep_acc() {
        assert_eq!(
            kernel::<Wrapping<i64>, Div>(Wrapping(1), Wrapping(1), 100),
            Wrapping(1_234_578)
        );
        assert_eq!(
            kernel::<Wrapping<i16>, Div>(Wrapping(1), Wrapping(1), 100),
            Wrapping(1234)
        );
    }

    #[test]
    fn float_multiplies_by_4_and_a_quarter_are_exact() {
        // One block from (1, 4, 0.25): the exact products cycle, so every block is the same.
        let one = Mul::block(1.0f32, 4.0, 0.25);
        let two = Mul::block(one.0, one.1, one.2);
        assert!(one.0.is_finite() && two.0.is_finite());
        let d = kernel::<f64, Div>(4.0, 0.25, 1000);
        assert!(d.is_finite());
    }

    #[test]
    fn a_job_parses_aims_arguments_and_counts_12_operations_a_loop() {
        let mut ctx = TaskCtx::new(0, Vec::new(), 1, 1);
        ctx.args = "3 -3 5000";
        run::<Wrapping<i32>, Add>(&mut ctx, 0).unwrap();
        assert_eq!(ctx.counters[..2], [5000, 60_000]);
        ctx.args = "3 x 5000";
        assert_eq!(run::<f64, Add>(&mut ctx, 0).unwrap_err().op, "arguments");
    }
}
