//! Posted comparison tables: the `name | base | patched | cmp |` blocks kernel developers paste
//! into cover letters (comparison.md §6, mechanisms.md §2), one block per copy count, and
//! patchbench's own `compare --format unixbench` output. A table holds two sides, so it
//! becomes two runs, one per side, labelled by the table's header (`base`, `patched`); then
//! `patchbench compare base patched` reproduces its cmp column to the digit, and says that one
//! run a side gives no verdict.
//!
//! Recognised by content: a `|`-separated header with a `cmp` column and two value columns
//! before it (patchbench's `n`, `±`, interval, `p, q` and verdict columns are skipped), and
//! rows named after UnixBench index tests, plus the index row (`Total` or `System Benchmarks
//! Index Score`). Cells are index values (10 × score / baseline), stored as the scores they
//! stand for, unless the block title says `(score)`. The copy count of a block comes from its
//! title or the text just above it (`1 copy`, `72 parallel copies`). Each row's cmp is checked
//! against its two values (to the precision printed), which catches swapped columns.

use super::{imported_record, line_error, LineError};
use crate::record::{Direction, IndexScore, Kind, Metric, RunRecord, TestResult};
use crate::sysinfo::SystemInfo;
use crate::unixbench::catalog::{TestSpec, SYSTEM_CATEGORY, TESTS};
use regex::Regex;
use std::collections::BTreeMap;
use std::sync::LazyLock;

static COPIES: LazyLock<Regex> =
    LazyLock::new(|| super::constant_regex(r"(?i)\b(\d+)\s+(?:parallel\s+)?cop(?:y|ies)\b"));
static ROW_COPIES: LazyLock<Regex> =
    LazyLock::new(|| super::constant_regex(r"^(.*\S)\s+\[copies=(\d+)\]$"));
static CI_COLUMN: LazyLock<Regex> = LazyLock::new(|| super::constant_regex(r"^\d+(\.\d+)?% CI$"));

/// Names of the index row.
const INDEX_ROWS: &[&str] = &[
    "total",
    "index score",
    "system benchmarks index score",
    "system benchmarks index score (geomean)",
    "system benchmarks index score (partial only)",
];

/// True when the text holds a posted comparison table.
pub fn looks_like(text: &str) -> bool {
    let mut header = false;
    for line in text.lines() {
        let Some(cells) = cells(line) else { continue };
        if header_columns(&cells).is_some() {
            header = true;
        } else if header && row_kind(cells[0].as_str()).is_some() {
            return true;
        }
    }
    false
}

/// The `|`-separated cells of a line, without the empty cells of leading/trailing pipes.
fn cells(line: &str) -> Option<Vec<String>> {
    if !line.contains('|') {
        return None;
    }
    let mut c: Vec<String> = line.split('|').map(|s| s.trim().to_string()).collect();
    if c.first().is_some_and(String::is_empty) {
        c.remove(0);
    }
    if c.last().is_some_and(String::is_empty) {
        c.pop();
    }
    (!c.is_empty()).then_some(c)
}

fn is_separator(cells: &[String]) -> bool {
    cells
        .iter()
        .all(|c| c.chars().all(|ch| matches!(ch, '-' | ':' | '=' | ' ')))
}

/// (base column, patched column, cmp column) of a header.
fn header_columns(cells: &[String]) -> Option<(usize, usize, usize)> {
    let cmp = cells
        .iter()
        .skip(1)
        .position(|c| c.eq_ignore_ascii_case("cmp"))?
        + 1;
    let meta = |c: &str| {
        matches!(
            c.to_ascii_lowercase().as_str(),
            "n" | "±" | "p, q" | "p" | "q" | "verdict"
        ) || CI_COLUMN.is_match(c)
    };
    let values: Vec<usize> = (1..cmp).filter(|&i| !meta(&cells[i])).collect();
    match values.as_slice() {
        [b, p] => Some((*b, *p, cmp)),
        _ => None,
    }
}

enum RowKind {
    Test(&'static TestSpec),
    Index,
}

fn row_kind(name: &str) -> Option<RowKind> {
    let name = ROW_COPIES
        .captures(name)
        .map(|c| c[1].to_string())
        .unwrap_or_else(|| name.to_string());
    if INDEX_ROWS.contains(&name.to_ascii_lowercase().as_str()) {
        return Some(RowKind::Index);
    }
    TESTS.iter().find(|t| t.name == name).map(RowKind::Test)
}

/// One row of a block: test or index, copies, the two values (None: `-`), and whether they
/// are scores (a `(score)` block) rather than index values.
struct Row {
    kind: RowKind,
    copies: u32,
    values: [Option<f64>; 2],
    scores: bool,
}

/// The block being read: its columns (base, patched, cmp), its copy count (None in a score
/// block whose rows name theirs), and whether its cells are scores.
type Block = ((usize, usize, usize), Option<u32>, bool);

/// Parses a posted table into two records, base and patched, labelled by the header.
pub fn parse(text: &str) -> Result<Vec<RunRecord>, LineError> {
    let mut labels: Option<(String, String, usize)> = None;
    let mut rows: Vec<Row> = Vec::new();
    let mut partial: BTreeMap<u32, bool> = BTreeMap::new();
    let mut block: Option<Block> = None;
    let mut context_copies: Option<u32> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let Some(cells) = cells(raw) else {
            block = None;
            if let Some(c) = COPIES.captures(raw) {
                context_copies = c[1].parse().ok();
            } else if !raw.trim().is_empty() {
                context_copies = None;
            }
            continue;
        };
        if is_separator(&cells) {
            continue;
        }
        if let Some(cols) = header_columns(&cells) {
            let (b, p) = (cells[cols.0].clone(), cells[cols.1].clone());
            match &labels {
                None if b == p => {
                    return line_error(n, format!("both sides of the table are named {b:?}"))
                }
                None => labels = Some((b, p, n)),
                Some((lb, lp, at)) if *lb != b || *lp != p => {
                    return line_error(
                        n,
                        format!(
                            "the sides are named {b:?} and {p:?} here but {lb:?} and {lp:?} \
                             at line {at}"
                        ),
                    )
                }
                Some(_) => {}
            }
            let title = &cells[0];
            let raw_scores = title.to_ascii_lowercase().contains("(score)");
            let copies = COPIES
                .captures(title)
                .and_then(|c| c[1].parse().ok())
                .or(context_copies);
            if copies.is_none() && !raw_scores {
                return line_error(
                    n,
                    "cannot tell how many copies this table is for: put e.g. \"1 copy\" or \
                     \"72 copies\" in its title or on the line above it",
                );
            }
            if let Some(k) = copies {
                partial.insert(k, title.to_ascii_lowercase().contains("partial"));
            }
            block = Some((cols, copies, raw_scores));
            continue;
        }
        let Some((cols, copies, raw_scores)) = block else {
            continue;
        };
        let name = cells[0].as_str();
        let Some(kind) = row_kind(name) else {
            return line_error(
                n,
                format!(
                    "{name:?} is not a UnixBench test name (a posted table's rows are the \
                     index tests, as UnixBench names them, and Total or System Benchmarks \
                     Index Score)"
                ),
            );
        };
        let row_copies = ROW_COPIES
            .captures(name)
            .and_then(|c| c[2].parse().ok())
            .or(copies);
        let Some(row_copies) = row_copies else {
            return line_error(n, format!("{name:?}: no copy count ([copies=N])"));
        };
        if cells.len() <= cols.2 {
            return line_error(
                n,
                format!(
                    "the row has {} cells, the header {}",
                    cells.len(),
                    cols.2 + 1
                ),
            );
        }
        let value = |col: usize| -> Result<Option<f64>, LineError> {
            let cell = cells[col].as_str();
            if cell == "-" {
                return Ok(None);
            }
            match cell.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
                Ok(v) => line_error(
                    n,
                    format!("{name}: the value {v} is not a finite number ≥ 0"),
                ),
                Err(_) => line_error(n, format!("{name}: {cell:?} is not a number")),
            }
        };
        let values = [value(cols.0)?, value(cols.1)?];
        check_cmp(
            &cells[cols.0],
            &cells[cols.1],
            &cells[cols.2],
            values,
            name,
            n,
        )?;
        rows.push(Row {
            kind,
            copies: row_copies,
            values,
            scores: raw_scores,
        });
    }
    let Some((base, patched, _)) = labels else {
        return line_error(0, "no comparison table (a header with a cmp column) found");
    };
    if rows.is_empty() {
        return line_error(0, "the comparison table has no rows");
    }
    Ok(vec![
        build(&rows, 0, &base, &partial),
        build(&rows, 1, &patched, &partial),
    ])
}

/// The cmp cell must follow from the two values to the precision printed.
fn check_cmp(
    b: &str,
    p: &str,
    cmp: &str,
    values: [Option<f64>; 2],
    name: &str,
    line: usize,
) -> Result<(), LineError> {
    let [Some(vb), Some(vp)] = values else {
        return Ok(());
    };
    let Ok(posted) = cmp.trim_end_matches('%').parse::<f64>() else {
        return Ok(());
    };
    if vb == 0.0 {
        return Ok(());
    }
    let ulp = |s: &str| 10f64.powi(-(s.split_once('.').map(|x| x.1.len()).unwrap_or(0) as i32));
    let computed = 100.0 * (vp - vb) / vb;
    let tolerance = ulp(cmp.trim_end_matches('%'))
        + 100.0 * (0.5 * ulp(b) / vb + 0.5 * ulp(p) / vp.max(f64::MIN_POSITIVE)) * (vp / vb);
    if (posted - computed).abs() > tolerance + 1e-9 {
        return line_error(
            line,
            format!(
                "{name}: cmp {cmp} does not follow from {b} and {p} ({computed:+.2}%); are the \
                 columns swapped or the row edited?"
            ),
        );
    }
    Ok(())
}

fn build(rows: &[Row], side: usize, label: &str, partial: &BTreeMap<u32, bool>) -> RunRecord {
    let mut metrics = Vec::new();
    let mut tests = Vec::new();
    let mut indexes = Vec::new();
    let mut copies_list: Vec<u32> = Vec::new();
    for r in rows {
        let Some(v) = r.values[side] else { continue };
        if !copies_list.contains(&r.copies) {
            copies_list.push(r.copies);
        }
        match r.kind {
            RowKind::Index => {
                metrics.push(Metric::new(
                    "unixbench.index",
                    &[("copies", r.copies.to_string())],
                    format!("{SYSTEM_CATEGORY} Index Score"),
                    "index",
                    Direction::HigherIsBetter,
                    v,
                    Vec::new(),
                ));
                indexes.push(IndexScore {
                    copies: r.copies,
                    category: SYSTEM_CATEGORY.into(),
                    score: v,
                    full: !partial.get(&r.copies).copied().unwrap_or(false),
                    tests: rows
                        .iter()
                        .filter(|t| t.copies == r.copies && matches!(t.kind, RowKind::Test(_)))
                        .count(),
                });
            }
            RowKind::Test(t) => {
                // An index value v stands for the score with 10 × score / baseline = v.
                let (score, index) = match (t.baseline, r.scores) {
                    (Some(bl), false) => (v * bl / 10.0, Some(v)),
                    (Some(bl), true) => (v, Some(10.0 * v / bl)),
                    (None, _) => (v, None),
                };
                metrics.push(Metric::new(
                    "unixbench.score",
                    &[("test", t.id.to_string()), ("copies", r.copies.to_string())],
                    t.name,
                    t.unit,
                    Direction::HigherIsBetter,
                    score,
                    Vec::new(),
                ));
                tests.push(TestResult {
                    test: t.id.into(),
                    name: t.name.into(),
                    unit: t.unit.into(),
                    timebase: t.timebase,
                    copies: r.copies,
                    baseline: t.baseline,
                    duration: 0.0,
                    passes: Vec::new(),
                    score,
                    time: 0.0,
                    samples: 0,
                    index,
                    precision_pct: None,
                    precision_capped: None,
                    divisor: None,
                    overlap: None,
                    shared_rate: None,
                    stderr: None,
                    warnings: Vec::new(),
                });
            }
        }
    }
    let mut config = BTreeMap::new();
    config.insert("copies".to_string(), serde_json::json!(copies_list));
    config.insert("posted_table".to_string(), serde_json::json!(true));
    let mut record = imported_record(Kind::Unixbench, SystemInfo::default(), config, metrics);
    record.label = Some(label.to_string());
    record.tests = tests;
    record.indexes = indexes;
    record
}
