//! AIM7 `add_short` (add.c, "Thousand Short Integer Additions", args "3 -3 2000000", factor 24000):
//! one job runs 2,000,000 loops of the 12-step block of C `short` additions over (acc, x, y), x = 3
//! and y = -3, so 24 M additions; see `arith`.

use super::arith::{self, Add};
use super::Job;
use std::num::Wrapping;

pub const JOB: Job = arith::job::<Wrapping<i16>, Add>(
    "add_short",
    "3 -3 2000000",
    24_000,
    "Thousand Short Integer Additions",
);
