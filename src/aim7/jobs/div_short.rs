//! AIM7 `div_short` (div.c, "Thousand Short Integer Divides", args "1 1 75000", factor 900): one
//! job runs 75,000 loops of the 12-step block of C `short` divides over (acc, x, y), x = 1 and y =
//! 1, so 900 k divides; see `arith`.

use super::arith::{self, Div};
use super::Job;
use std::num::Wrapping;

pub const JOB: Job = arith::job::<Wrapping<i16>, Div>(
    "div_short",
    "1 1 75000",
    900,
    "Thousand Short Integer Divides",
);
