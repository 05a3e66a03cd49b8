//! `patchbench list`: every UnixBench test with its report name, unit, baseline and
//! description (as text, or JSON of schema `patchbench.list/1`, docs/json.md); and
//! `patchbench scale --list`: every will-it-scale testcase.

use crate::unixbench::catalog::{aliases, INDEX, TESTS};
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
    description: &'static str,
}

#[derive(Serialize)]
struct AliasLine {
    alias: &'static str,
    tests: &'static [&'static str],
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
