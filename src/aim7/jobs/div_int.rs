//! AIM7 `div_int` (div.c, "Thousand Integer Divides", args "1 1 75000", factor 900): one job runs
//! 75,000 loops of the 12-step block of C `int` divides over (acc, x, y), x = 1 and y = 1, so 900 k
//! divides; see `arith`.

use super::arith::{self, Div};
use super::Job;
use std::num::Wrapping;

pub const JOB: Job =
    arith::job::<Wrapping<i32>, Div>("div_int", "1 1 75000", 900, "Thousand Integer Divides");
