//! AIM7 `div_double` (div.c, "Thousand Double Precision Divides", args "4 0.25 250000", factor
//! 3000): one job runs 250,000 loops of the 12-step block of C `double` divides over (acc, x, y), x
//! = 4 and y = 0.25, so 3 M divides; see `arith`.

use super::arith::{self, Div};
use super::Job;

pub const JOB: Job = arith::job::<f64, Div>(
    "div_double",
    "4 0.25 250000",
    3000,
    "Thousand Double Precision Divides",
);
