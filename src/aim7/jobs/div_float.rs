//! AIM7 `div_float` (div.c, "Thousand Single Precision Divides", args "4 0.25 250000", factor
//! 3000): one job runs 250,000 loops of the 12-step block of C `float` divides over (acc, x, y), x
//! = 4 and y = 0.25, so 3 M divides; see `arith`.

use super::arith::{self, Div};
use super::Job;

pub const JOB: Job = arith::job::<f32, Div>(
    "div_float",
    "4 0.25 250000",
    3000,
    "Thousand Single Precision Divides",
);
