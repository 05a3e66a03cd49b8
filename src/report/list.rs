//! `patchbench list`: every UnixBench test with its report name, unit, baseline, time divisor
//! and description; and `patchbench scale --list`: every will-it-scale testcase.

use crate::unixbench::catalog::{aliases, TESTS};
use std::fmt::Write;

/// Renders the test list and the aliases.
pub fn render() -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<17} {:<40} {:<6} {:>9}  {:<8}  DESCRIPTION",
        "TEST", "REPORT NAME", "UNIT", "BASELINE", "DIVISOR"
    );
    for t in TESTS {
        let baseline = t
            .baseline
            .map(|b| format!("{b:.1}"))
            .unwrap_or_else(|| "---".into());
        let _ = writeln!(
            out,
            "{:<17} {:<40} {:<6} {:>9}  {:<8}  {}",
            t.id,
            t.name,
            t.unit,
            baseline,
            t.time_source.label(),
            t.description
        );
    }
    let _ = write!(
        out,
        "\nDIVISOR: what a test's count is divided by, as in UnixBench.\n  \
         wall      the copy's wall time (UnixBench: fork to the end of the program's output;\n  \
         {:10}patchbench: release at the start barrier to the end of the work, children reaped)\n  \
         own time  the time the program measured for its timed section (fstime's copy phase,\n  \
         {:10}Whetstone's sections)\n",
        "", ""
    );

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
