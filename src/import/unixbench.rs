//! UnixBench text reports and console logs (5.1.x and 6.0; unixbench.md §7.1), parsed by
//! regular expressions rather than columns, because a large score overflows its field.
//!
//! A block starts at `Benchmark Run:` (or at an index table when the header was not pasted)
//! and yields one `unixbench.score` metric per test (params `test`, `copies`) and one
//! `unixbench.index` metric per copy count, exactly as `patchbench run` names them. Every
//! number is taken as printed. A table that stops before its `Index Score` line is reported
//! as cut off, with the line. A score or index of 0, a count that is not a whole number, a
//! test given twice in one block, or two blocks with the same copy count (two runs pasted into
//! one file) are refused with the line.

use super::{field_count, field_number, imported_record, line_error, LineError, Results};
use crate::record::domain::Domain;
use crate::record::{Direction, Kind, Metric, RunRecord, TestResult};
use crate::sysinfo::SystemInfo;
use crate::unixbench::catalog::{Category, TESTS};

/// The category name of UnixBench's non-index tests, whose index grep and sysexec make.
const MISC_CATEGORY: &str = Category::Misc.name();
use regex::Regex;
use std::collections::BTreeMap;
use std::sync::LazyLock;

static RESULT: LazyLock<Regex> = LazyLock::new(|| {
    super::constant_regex(r"^(.*\S)\s+(\d+\.\d)\s+(\S+)\s+\((\d+\.\d) s, (\d+) samples\)$")
});
static INDEX_ROW: LazyLock<Regex> = LazyLock::new(|| {
    super::constant_regex(r"^(.*\S)\s+(\d+\.\d|---)\s+(\d+\.\d)\s+(\d+\.\d|---)$")
});
static INDEX_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    super::constant_regex(r"^(.*\S) (Index Values|Partial Index)\s+BASELINE\s+RESULT\s+INDEX$")
});
static INDEX_SCORE: LazyLock<Regex> = LazyLock::new(|| {
    super::constant_regex(r"^(.*\S) Index Score( \(Partial Only\))?\s+(\d+\.\d)$")
});
static COPIES: LazyLock<Regex> =
    LazyLock::new(|| super::constant_regex(r"(\d+) CPUs? in system; running (\d+) parallel cop"));
static VERSION: LazyLock<Regex> =
    LazyLock::new(|| super::constant_regex(r"BYTE UNIX Benchmarks \(Version ([^)]+)\)"));
static SEPARATOR: LazyLock<Regex> = LazyLock::new(|| super::constant_regex(r"^\s+=+$"));

/// An index table's header line (a substring test first: the regex is the slow part of a
/// long log).
fn is_index_header(line: &str) -> bool {
    line.contains("BASELINE") && INDEX_HEADER.is_match(line)
}

/// True when the text looks like a UnixBench report or log.
pub fn looks_like(text: &str) -> bool {
    text.contains("BYTE UNIX Benchmarks")
        || text.contains("Benchmark Run:")
        || text.lines().any(|l| is_index_header(l.trim_end()))
}

#[derive(Default)]
struct Block {
    copies: u32,
    /// (line, name, score, unit, time, samples)
    results: Vec<(usize, String, f64, String, f64, usize)>,
    /// name → (baseline, result, index, line)
    index_rows: BTreeMap<String, (Option<f64>, f64, Option<f64>, usize)>,
    /// Line of an index table header not yet closed by its score line.
    open_table: Option<usize>,
    /// The System Benchmarks Index Score and its line.
    index: Option<(f64, usize)>,
    /// The Non-Index Benchmarks Index Score (grep's and sysexec's baselines) and its line.
    misc_index: Option<(f64, usize)>,
    tables: usize,
}

/// Parses a report or console log into one record.
pub fn parse(text: &str) -> Result<RunRecord, LineError> {
    let mut system = SystemInfo::default();
    let mut version = None;
    let mut blocks: Vec<Block> = Vec::new();
    let mut current: Option<Block> = None;
    let mut last_line = 0;
    let mut in_note = false;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        last_line = n;
        let line = raw.trim_end();
        // Blank lines mean nothing anywhere (and are most of a padded log).
        if line.is_empty() {
            continue;
        }
        if let Some(c) = line
            .contains("BYTE UNIX")
            .then(|| VERSION.captures(line))
            .flatten()
        {
            version = Some(c[1].to_string());
            continue;
        }
        if line.starts_with("Benchmark Run:") {
            finish(&mut current, &mut blocks, n - 1)?;
            current = Some(Block {
                copies: 1,
                ..Block::default()
            });
            continue;
        }
        if current.is_none() {
            read_system_line(line, &mut system);
            if is_index_header(line) {
                current = Some(Block {
                    copies: 1,
                    ..Block::default()
                });
            } else {
                continue;
            }
        }
        let Some(block) = current.as_mut() else {
            continue;
        };
        // patchbench's own notes between the results and the index (precision, warnings,
        // noise): a heading, indented lines, a blank line. Not UnixBench's; skipped.
        if crate::unixbench::report_notes::is_heading(line) {
            in_note = true;
            continue;
        }
        if in_note && line.starts_with("  ") {
            continue;
        }
        in_note = false;
        if let Some(c) = COPIES.captures(line) {
            system.cpus = u32::try_from(field_count(n, "CPUs in system", &c[1])?)
                .or_else(|_| line_error(n, "the CPU count is too large"))?;
            block.copies = u32::try_from(field_count(n, "parallel copies", &c[2])?)
                .or_else(|_| line_error(n, "the copy count is too large"))?;
        } else if let Some(c) = RESULT.captures(line) {
            if let Some(first) = block.results.iter().find(|r| r.1 == c[1]) {
                return line_error(
                    n,
                    format!(
                        "a second {} result in this block (first at line {}); a file is one \
                         run, so import each run as its own file",
                        &c[1], first.0
                    ),
                );
            }
            let samples = c[5]
                .parse()
                .or_else(|_| line_error(n, format!("{:?} samples is too many", &c[5])))?;
            block.results.push((
                n,
                c[1].to_string(),
                field_number(n, "score", &c[2], Domain::Positive)?,
                c[3].to_string(),
                field_number(n, "seconds", &c[4], Domain::NonNegative)?,
                samples,
            ));
        } else if is_index_header(line) {
            if let Some(open) = block.open_table {
                return line_error(
                    n,
                    format!("the index table begun at line {open} has no Index Score line"),
                );
            }
            block.open_table = Some(n);
            block.tables += 1;
        } else if let Some(c) = INDEX_SCORE.captures(line) {
            if block.open_table.take().is_none() {
                return line_error(n, "an Index Score line without its table");
            }
            let slot = match &c[1] {
                "System Benchmarks" => Some(&mut block.index),
                MISC_CATEGORY => Some(&mut block.misc_index),
                _ => None,
            };
            if let Some(slot) = slot {
                *slot = Some((field_number(n, "Index Score", &c[3], Domain::Positive)?, n));
            }
        } else if let Some(c) = INDEX_ROW
            .captures(line)
            .filter(|_| block.open_table.is_some())
        {
            let opt = |field: &str, s: &str, domain: Domain| {
                if s == "---" {
                    Ok(None)
                } else {
                    field_number(n, field, s, domain).map(Some)
                }
            };
            let row = (
                opt("BASELINE", &c[2], Domain::Positive)?,
                field_number(n, "RESULT", &c[3], Domain::Positive)?,
                opt("INDEX", &c[4], Domain::NonNegative)?,
                n,
            );
            if let Some(first) = block.index_rows.insert(c[1].to_string(), row) {
                return line_error(
                    n,
                    format!(
                        "{} is listed twice in the index table (first at line {})",
                        &c[1], first.3
                    ),
                );
            }
        } else if line.is_empty() || SEPARATOR.is_match(line) {
        } else if line.starts_with("------") || (block.tables > 0 && block.open_table.is_none()) {
            // The end of a block, or text after a complete one.
            finish(&mut current, &mut blocks, n)?;
        } else {
            return line_error(
                n,
                format!(
                    "unrecognised line inside a results table (file cut off or edited?): {line:?}"
                ),
            );
        }
    }
    finish(&mut current, &mut blocks, last_line)?;
    if blocks.is_empty() {
        return line_error(0, "a UnixBench report without any results");
    }
    build(system, version, blocks)
}

fn read_system_line(line: &str, system: &mut SystemInfo) {
    let l = line.trim_start();
    if let Some(rest) = l.strip_prefix("System: ") {
        system.hostname = rest.split(':').next().unwrap_or("").trim().to_string();
    } else if let Some(rest) = l.strip_prefix("OS: ") {
        let parts: Vec<&str> = rest.split(" -- ").collect();
        system.os = parts.first().unwrap_or(&"").trim().to_string();
        system.kernel_release = parts.get(1).unwrap_or(&"").trim().to_string();
        system.kernel_version = parts.get(2).unwrap_or(&"").trim().to_string();
    } else if let Some(rest) = l.strip_prefix("Machine: ") {
        system.machine = rest.split(' ').next().unwrap_or("").to_string();
    } else if l.starts_with("CPU 0: ") && system.cpu_model.is_empty() {
        let rest = &l["CPU 0: ".len()..];
        let model = rest.rsplit_once(" (").map(|(m, _)| m).unwrap_or(rest);
        system.cpu_model = model.trim().to_string();
    }
}

/// Closes the current block, checking that no table was cut off.
fn finish(
    current: &mut Option<Block>,
    blocks: &mut Vec<Block>,
    line: usize,
) -> Result<(), LineError> {
    let Some(block) = current.take() else {
        return Ok(());
    };
    if let Some(open) = block.open_table {
        return line_error(
            line.max(open),
            format!("cut off: the index table begun at line {open} has no Index Score line"),
        );
    }
    let indexed = block
        .results
        .iter()
        .find(|r| TESTS.iter().any(|t| t.name == r.1 && t.baseline.is_some()));
    if let (Some(r), 0) = (indexed, block.tables) {
        return line_error(
            line.max(r.0),
            "cut off: the results end without their index table (System Benchmarks Index Values)",
        );
    }
    if !block.results.is_empty() || !block.index_rows.is_empty() {
        blocks.push(block);
    }
    Ok(())
}

fn test_id(name: &str) -> String {
    match TESTS.iter().find(|t| t.name == name) {
        Some(t) => t.id.to_string(),
        None => name
            .to_lowercase()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect::<String>()
            .split('-')
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("-"),
    }
}

fn build(
    system: SystemInfo,
    version: Option<String>,
    blocks: Vec<Block>,
) -> Result<RunRecord, LineError> {
    let mut metrics = Results::default();
    let mut tests = Vec::new();
    let mut copies_list = Vec::new();
    for b in &blocks {
        copies_list.push(serde_json::json!(b.copies));
        // Results from the per-test lines, then index-only rows (a pasted index table).
        let mut rows: Vec<(String, f64, String, f64, usize, usize)> = b
            .results
            .iter()
            .map(|r| (r.1.clone(), r.2, r.3.clone(), r.4, r.5, r.0))
            .collect();
        for (name, (_, result, _, line)) in &b.index_rows {
            if !rows.iter().any(|r| &r.0 == name) {
                let unit = TESTS
                    .iter()
                    .find(|t| t.name == *name)
                    .map(|t| t.unit)
                    .unwrap_or("");
                rows.push((name.clone(), *result, unit.to_string(), 0.0, 0, *line));
            }
        }
        for (name, score, unit, time, samples, line) in rows {
            let id = test_id(&name);
            let row = b.index_rows.get(&name);
            let baseline = row.and_then(|r| r.0).or_else(|| {
                TESTS
                    .iter()
                    .find(|t| t.name == name)
                    .and_then(|t| t.baseline)
            });
            let metric = Metric::new(
                "unixbench.score",
                &[("test", id.clone()), ("copies", b.copies.to_string())],
                name.clone(),
                unit.clone(),
                Direction::HigherIsBetter,
                score,
                Vec::new(),
            );
            metrics.add(metric, line)?;
            let spec = TESTS.iter().find(|t| t.id == id);
            tests.push(TestResult {
                test: id,
                name,
                unit,
                timebase: spec.map(|s| s.timebase).unwrap_or(1),
                copies: b.copies,
                baseline,
                duration: time,
                passes: Vec::new(),
                score,
                time,
                samples,
                index: row
                    .and_then(|r| r.2)
                    .or(baseline.map(|bl| 10.0 * score / bl)),
                precision_pct: None,
                precision_capped: None,
                divisor: None,
                overlap: None,
                shared_rate: None,
                stderr: None,
                warnings: Vec::new(),
            });
        }
        if let Some((index, line)) = b.index {
            let metric = Metric::new(
                "unixbench.index",
                &[("copies", b.copies.to_string())],
                "System Benchmarks Index Score",
                "index",
                Direction::HigherIsBetter,
                index,
                Vec::new(),
            );
            metrics.add(metric, line)?;
        }
        // As a run records it (`unixbench.index` {copies, category}).
        if let Some((index, line)) = b.misc_index {
            let metric = Metric::new(
                "unixbench.index",
                &[
                    ("copies", b.copies.to_string()),
                    ("category", MISC_CATEGORY.to_string()),
                ],
                format!("{MISC_CATEGORY} Index Score"),
                "index",
                Direction::HigherIsBetter,
                index,
                Vec::new(),
            );
            metrics.add(metric, line)?;
        }
    }
    let mut config = BTreeMap::new();
    config.insert("copies".to_string(), serde_json::Value::Array(copies_list));
    if let Some(v) = &version {
        config.insert("unixbench_version".to_string(), serde_json::json!(v));
    }
    let mut record = imported_record(Kind::Unixbench, system, config, metrics.into_vec());
    record.tests = tests;
    Ok(record)
}

#[cfg(test)]
mod tests {
    /// One block of `patchbench run grep,sysexec,hanoi,pipe` as it printed it: a System
    /// Benchmarks index and a Non-Index Benchmarks one, each imported as the run records it.
    #[test]
    fn a_non_index_benchmarks_index_is_imported_with_its_category() {
        let text = "\
------------------------------------------------------------------------
Benchmark Run: Wed Dec 02 2026 01:02:05 - 01:02:08
2 CPUs in system; running 1 parallel copy of tests

Exec System Call Overhead                       206.4 lps   (0.5 s, 1 samples)
Grep a large file (system's grep)              7191.8 lpm   (0.5 s, 1 samples)
Pipe Throughput                              703112.9 lps   (0.5 s, 1 samples)
Recursion Test -- Tower of Hanoi              81420.6 lps   (0.5 s, 1 samples)

System Benchmarks Partial Index              BASELINE       RESULT    INDEX
Pipe Throughput                               12440.0     703112.9    565.2
                                                                   ========
System Benchmarks Index Score (Partial Only)                          565.2

Non-Index Benchmarks Index Values            BASELINE       RESULT    INDEX
Exec System Call Overhead                        25.0        206.4     82.6
Grep a large file (system's grep)                 1.0       7191.8  71918.0
Recursion Test -- Tower of Hanoi                  ---      81420.6      ---
                                                                   ========
Non-Index Benchmarks Index Score                                     2436.6

------------------------------------------------------------------------
Benchmark Run: Wed Dec 02 2026 01:02:08 - 01:02:10
2 CPUs in system; running 2 parallel copies of tests
";
        let record = super::parse(text).unwrap();
        let index: Vec<(String, Option<&String>, f64)> = record
            .metrics
            .iter()
            .filter(|m| m.name == "unixbench.index")
            .map(|m| (m.key(), m.params.get("category"), m.value))
            .collect();
        assert_eq!(index.len(), 2, "{index:?}");
        assert_eq!(index[0].1, None);
        assert_eq!(index[0].2, 565.2);
        assert_eq!(index[1].1.map(String::as_str), Some("Non-Index Benchmarks"));
        assert_eq!(index[1].2, 2436.6);
        assert_eq!(record.tests.len(), 4);
        let grep = record.tests.iter().find(|t| t.test == "grep").unwrap();
        assert_eq!((grep.baseline, grep.index), (Some(1.0), Some(71918.0)));
    }
}
