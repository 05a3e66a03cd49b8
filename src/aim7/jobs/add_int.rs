//! AIM7 `add_int` (add.c, "Thousand Integer Additions", args "3 -3 5000000", factor 60000): one job
//! runs 5,000,000 loops of the 12-step block of C `int` additions over (acc, x, y), x = 3 and y =
//! -3, so 60 M additions; see `arith`.

use super::arith::{self, Add};
use super::Job;
use std::num::Wrapping;

pub const JOB: Job = arith::job::<Wrapping<i32>, Add>(
    "add_int",
    "3 -3 5000000",
    60_000,
    "Thousand Integer Additions",
);
