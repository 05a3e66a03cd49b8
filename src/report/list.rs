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
        "\nDIVISOR: what a test's count is divided by; for each test the clock UnixBench uses.\n  \
         wall      the copy's wall time. UnixBench: from just before Run forks the copy to the\n  \
         {:10}end of the program's output (exec, start-up and exit included); patchbench: from\n  \
         {:10}the release at the start gate to the end of the work, children reaped (the\n  \
         {:10}worker's start-up before the gate is left out)\n  \
         own time  the time the program measured for its timed section: fstime's scored\n  \
         {:10}phase (write, read or copy), Whetstone's timed sections\n\n\
         Non-index tests (those after shell16) are in UnixBench's category \"Non-Index\n\
         Benchmarks\", except the -w and -r file tests (System Benchmarks, no baseline); grep and\n\
         sysexec have baselines and so a Non-Index Benchmarks index. whetstone-strict is\n\
         patchbench's own and in no alias. A test whose program (gcc, dc) is missing is skipped.\n",
        "", "", "", ""
    );

    let _ = writeln!(out, "\nAliases:");
    for (alias, ids) in aliases() {
        let _ = writeln!(out, "  {:<11} {}", alias, ids.join(", "));
    }
    let _ = writeln!(
        out,
        "  {:<11} every test above but whetstone-strict (UnixBench's non-graphics tests)",
        "all"
    );
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
