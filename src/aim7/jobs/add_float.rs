//! AIM7 `add_float` (add.c, "Thousand Single Precision Additions", args "3.5 -3.5 1000000", factor
//! 12000): one job runs 1,000,000 loops of the 12-step block of C `float` additions over (acc, x,
//! y), x = 3.5 and y = -3.5, so 12 M additions; see `arith`.

use super::arith::{self, Add};
use super::Job;

pub const JOB: Job = arith::job::<f32, Add>(
    "add_float",
    "3.5 -3.5 1000000",
    12_000,
    "Thousand Single Precision Additions",
);
