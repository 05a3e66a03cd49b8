//! AIM7 `add_double` (add.c, "Thousand Double Precision Additions", args "3.14159 -3.14159
//! 1500000", factor 18000): one job runs 1,500,000 loops of the 12-step block of C `double`
//! additions over (acc, x, y), x = 3.14159 and y = -3.14159, so 18 M additions; see `arith`.

use super::arith::{self, Add};
use super::Job;

pub const JOB: Job = arith::job::<f64, Add>(
    "add_double",
    "3.14159 -3.14159 1500000",
    18_000,
    "Thousand Double Precision Additions",
);
