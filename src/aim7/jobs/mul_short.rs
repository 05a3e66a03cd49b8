//! AIM7 `mul_short` (mul.c, "Thousand Short Integer Multiplies", args "1 1 25000", factor 300): one
//! job runs 25,000 loops of the 12-step block of C `short` multiplies over (acc, x, y), x = 1 and y
//! = 1, so 300 k multiplies; see `arith`.

use super::arith::{self, Mul};
use super::Job;
use std::num::Wrapping;

pub const JOB: Job = arith::job::<Wrapping<i16>, Mul>(
    "mul_short",
    "1 1 25000",
    300,
    "Thousand Short Integer Multiplies",
);
