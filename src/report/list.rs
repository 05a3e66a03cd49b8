//! `patchbench list`: every UnixBench test with its report name, unit, baseline and
//! description; and `patchbench scale --list`: every will-it-scale testcase.

use crate::unixbench::catalog::{aliases, TESTS};
use std::fmt::Write;

/// Renders the test list and the aliases.
pub fn render() -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<17} {:<40} {:<6} {:>9}  DESCRIPTION",
        "TEST", "REPORT NAME", "UNIT", "BASELINE"
    );
    for t in TESTS {
        let baseline = t
            .baseline
            .map(|b| format!("{b:.1}"))
            .unwrap_or_else(|| "---".into());
        let _ = writeln!(
            out,
            "{:<17} {:<40} {:<6} {:>9}  {}",
            t.id, t.name, t.unit, baseline, t.description
        );
    }
    let _ = writeln!(out, "\nAliases:");
    for (alias, ids) in aliases() {
        let _ = writeln!(out, "  {:<11} {}", alias, ids.join(", "));
    }
    out
}

/// Every will-it-scale testcase with its description.
pub fn testcases() -> String {
    let mut out = String::new();
    for t in crate::will_it_scale::testcases::ALL {
        let _ = writeln!(out, "{:<18} {}", t.name, t.description);
    }
    out
}
