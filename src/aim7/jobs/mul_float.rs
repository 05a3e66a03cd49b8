//! AIM7 `mul_float` (mul.c, "Thousand Single Precision Multiplies", args "4 0.25 1000000", factor
//! 12000): one job runs 1,000,000 loops of the 12-step block of C `float` multiplies over (acc, x,
//! y), x = 4 and y = 0.25, so 12 M multiplies; see `arith`.

use super::arith::{self, Mul};
use super::Job;

pub const JOB: Job = arith::job::<f32, Mul>(
    "mul_float",
    "4 0.25 1000000",
    12_000,
    "Thousand Single Precision Multiplies",
);
