//! AIM7 `mul_int` (mul.c, "Thousand Integer Multiplies", args "1 1 20000", factor 240): one job
//! runs 20,000 loops of the 12-step block of C `int` multiplies over (acc, x, y), x = 1 and y = 1,
//! so 240 k multiplies; see `arith`.

use super::arith::{self, Mul};
use super::Job;
use std::num::Wrapping;

pub const JOB: Job =
    arith::job::<Wrapping<i32>, Mul>("mul_int", "1 1 20000", 240, "Thousand Integer Multiplies");
