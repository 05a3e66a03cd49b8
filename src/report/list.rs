//! `patchbench list`: every UnixBench test with its report name, unit, baseline, time divisor
//! and description (as text, or JSON of schema `patchbench.list/1`, docs/json.md); and
//! `patchbench scale --list`: every will-it-scale testcase.

use crate::unixbench::catalog::{aliases, TimeSource, INDEX, TESTS};
use serde::Serialize;
use std::fmt::Write;

/// The `schema` of `list --format json`.
pub const SCHEMA: &str = "patchbench.list/1";

#[derive(Serialize)]
struct ListDoc {
    schema: &'static str,
    tests: Vec<TestLine>,
    aliases: Vec<AliasLine>,
}

#[derive(Serialize)]
struct TestLine {
    id: &'static str,
    name: &'static str,
    unit: &'static str,
    /// UnixBench's baseline (None: the test has no index value).
    baseline: Option<f64>,
    /// Part of the System Benchmarks Index.
    index: bool,
    /// UnixBench's category: the title of the index section its baseline counts in.
    category: &'static str,
    /// The clock its count is divided by: `wall` or `own-time`.
    divisor: TimeSource,
    description: &'static str,
}

#[derive(Serialize)]
struct AliasLine {
    alias: &'static str,
    tests: Vec<&'static str>,
}

/// The test list as JSON.
pub fn json() -> anyhow::Result<String> {
    let doc = ListDoc {
        schema: SCHEMA,
        tests: TESTS
            .iter()
            .map(|t| TestLine {
                id: t.id,
                name: t.name,
                unit: t.unit,
                baseline: t.baseline,
                index: INDEX.contains(&t.id),
                category: t.category.name(),
                divisor: t.time_source,
                description: t.description,
            })
            .collect(),
        aliases: aliases()
            .map(|(alias, tests)| AliasLine { alias, tests })
            .collect(),
    };
    Ok(serde_json::to_string_pretty(&doc)? + "\n")
}

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
