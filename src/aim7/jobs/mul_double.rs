//! AIM7 `mul_double` (mul.c, "Thousand Double Precision Multiplies", args "3.14159 0.31831
//! 1000000", factor 12000): one job runs 1,000,000 loops of the 12-step block of C `double`
//! multiplies over (acc, x, y), x = 3.14159 and y = 0.31831, so 12 M multiplies; see `arith`.

use super::arith::{self, Mul};
use super::Job;

pub const JOB: Job = arith::job::<f64, Mul>(
    "mul_double",
    "3.14159 0.31831 1000000",
    12_000,
    "Thousand Double Precision Multiplies",
);
