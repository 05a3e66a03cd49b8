//! `patchbench import`: turns results produced elsewhere into run records with the same metric
//! names and parameters as patchbench's own commands, so imported and native runs compare.
//!
//! Formats, recognised from the content: UnixBench text reports and console logs (5.1.x and
//! 6.0, `unixbench`), AIM7 `multitask` output (`aim7`), will-it-scale `runtest.py` CSV
//! (`will_it_scale`), and patchbench's own JSON. A file that is none of these, or one cut off
//! part-way, is an error naming the file and line.
//!
//! A run's label (in patchbench JSON, or a posted table's header) is refused at the door as
//! `--label` is (`crate::args::label_problem`: no control characters, no commas).
//!
//! A file is taken whole or not at all: one value outside its metric's domain (`crate::record::domain`:
//! finite, scores > 0, whole task counts), one result given twice, or one malformed row
//! refuses the file with its line and field. Files larger than [`MAX_IMPORT_BYTES`] (8 MiB;
//! real result files are a few KiB) or giving more than [`MAX_RESULTS`] results are refused
//! without being read whole, so memory stays bounded whatever the input (`/dev/zero` too).

/// A regular expression written in this code. A pattern that does not compile is a bug of
/// ours, not of the input, and every test that reads its format finds it: the one `expect`
/// allowed outside tests.
#[allow(clippy::expect_used)]
fn constant_regex(pattern: &str) -> regex::Regex {
    regex::Regex::new(pattern).expect("a constant pattern")
}

mod aim7;
mod posted;
mod unixbench;
mod will_it_scale;

use crate::error::Usage;
use crate::record::{Kind, Metric, RunRecord};
use crate::sysinfo::SystemInfo;
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;

/// The largest file an import reads (8 MiB).
pub const MAX_IMPORT_BYTES: u64 = 8 << 20;
/// The most results (metrics) one file may give.
pub const MAX_RESULTS: usize = 10_000;

/// Options that apply to every imported file.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// Label for the imported runs (overrides a label inside patchbench JSON).
    pub label: Option<String>,
    /// Test name for formats that do not name it (AIM7, will-it-scale); default: file stem.
    pub test: Option<String>,
}

/// Reads one file into a run record (nothing is stored here).
pub fn import_file(path: &Path, opts: &ImportOptions) -> anyhow::Result<RunRecord> {
    let shown = path.display().to_string();
    let bytes = read_capped(path, &shown)?;
    let text = String::from_utf8_lossy(&bytes);
    parse_text(&text, &shown, path, opts)
}

/// One run from a file's text (`shown` names it in errors and in the run's source).
fn parse_text(
    text: &str,
    shown: &str,
    path: &Path,
    opts: &ImportOptions,
) -> anyhow::Result<RunRecord> {
    let test = opts.test.clone().unwrap_or_else(|| {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "unknown".to_string())
    });
    let record = if text.trim_start().starts_with('{') {
        json_record(RunRecord::from_json(text), shown)?
    } else if will_it_scale::looks_like(text) {
        will_it_scale::parse(text, &test).map_err(|e| located(shown, e))?
    } else if aim7::looks_like(text) {
        aim7::parse(text, &test).map_err(|e| located(shown, e))?
    } else if posted::looks_like(text) {
        return Err(Usage(format!(
            "{shown}: a posted comparison table holds two sides; `patchbench import {shown}` \
             stores one run for each, labelled by its header, then compare those labels"
        ))
        .into());
    } else if unixbench::looks_like(text) {
        unixbench::parse(text).map_err(|e| located(shown, e))?
    } else {
        return Err(Usage(format!(
            "{shown}: not a known result format (expected a UnixBench report or log, AIM7 \
             multitask output, a will-it-scale CSV, or patchbench JSON)"
        ))
        .into());
    };
    finish(record, shown, opts)
}

/// A patchbench JSON document as parsed, checked as every imported document is.
fn json_record(parsed: anyhow::Result<RunRecord>, shown: &str) -> anyhow::Result<RunRecord> {
    let record = parsed.map_err(|e| Usage(format!("{shown}: {e}")))?;
    Ok(json_checked(record).map_err(|e| Usage(format!("{shown}: {e}")))?)
}

/// What every imported run gets whatever its format: `--label` (or its own label checked), its
/// source, and the backstop checks.
fn finish(mut record: RunRecord, shown: &str, opts: &ImportOptions) -> anyhow::Result<RunRecord> {
    if opts.label.is_some() {
        record.label = opts.label.clone();
    } else if let Some(why) = record.label.as_deref().and_then(crate::args::label_problem) {
        return Err(Usage(format!(
            "{shown}: the run's {why}; give --label NAME to label it yourself"
        ))
        .into());
    }
    if record.source.as_deref().is_none_or(|s| s == "patchbench") {
        record.source = Some(match record.source {
            Some(_) => format!("patchbench JSON {shown}"),
            None => shown.to_string(),
        });
    }
    if record.metrics.is_empty() {
        return Err(Usage(format!("{shown}: no results found in the file")).into());
    }
    // Every parser checks its values at their lines; this is the backstop for all of them.
    record
        .validate()
        .map_err(|e| Usage(format!("{shown}: {e}")))?;
    Ok(record)
}

/// Reads at most [`MAX_IMPORT_BYTES`], refusing a larger file (by its size when it has one,
/// so a 1 GB file is refused without reading it; by reading one byte past the limit for a
/// pipe or a device).
fn read_capped(path: &Path, shown: &str) -> anyhow::Result<Vec<u8>> {
    let cannot = |e: std::io::Error| Usage(format!("{shown}: cannot read: {e}"));
    let file = std::fs::File::open(path).map_err(cannot)?;
    let too_big = || {
        Usage(format!(
            "{shown}: larger than the {} MiB an import reads (result files are a few KiB); \
             give the report, log or CSV itself, or cut the file to the part with the results",
            MAX_IMPORT_BYTES >> 20
        ))
    };
    if file
        .metadata()
        .is_ok_and(|m| m.is_file() && m.len() > MAX_IMPORT_BYTES)
    {
        return Err(too_big().into());
    }
    let mut bytes = Vec::new();
    file.take(MAX_IMPORT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_IMPORT_BYTES {
        return Err(too_big().into());
    }
    Ok(bytes)
}

/// Patchbench JSON: every number in its domain, no metric twice, at most [`MAX_RESULTS`].
fn json_checked(record: RunRecord) -> Result<RunRecord, String> {
    record.validate()?;
    if record.metrics.len() > MAX_RESULTS {
        return Err(format!(
            "{} results, more than the {MAX_RESULTS} one import takes",
            record.metrics.len()
        ));
    }
    let mut seen = HashMap::new();
    for (i, m) in record.metrics.iter().enumerate() {
        if let Some(first) = seen.insert(m.key(), i) {
            return Err(format!(
                "metrics[{i}] {} repeats metrics[{first}]; a run gives each metric once",
                m.key()
            ));
        }
    }
    Ok(record)
}

/// The metrics a text parser has read, each checked at its line: in its domain, not given
/// before, and no more than [`MAX_RESULTS`] of them.
#[derive(Default)]
pub(crate) struct Results {
    metrics: Vec<Metric>,
    lines: HashMap<String, usize>,
}

impl Results {
    pub fn add(&mut self, m: Metric, line: usize) -> Result<(), LineError> {
        m.validate().or_else(|e| line_error(line, e))?;
        let key = m.key();
        if let Some(first) = self.lines.get(&key) {
            return line_error(
                line,
                format!(
                    "{key} is given a second time (first at line {first}); a file is one run, \
                     so import each run as its own file"
                ),
            );
        }
        if self.metrics.len() >= MAX_RESULTS {
            return line_error(
                line,
                format!("more than {MAX_RESULTS} results in one file; split it into runs"),
            );
        }
        self.lines.insert(key, line);
        self.metrics.push(m);
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.metrics.is_empty()
    }

    pub fn into_vec(self) -> Vec<Metric> {
        self.metrics
    }
}

/// Parses a number read from `field` and checks it against `domain`.
pub(crate) fn field_number(
    line: usize,
    field: &str,
    s: &str,
    domain: crate::record::domain::Domain,
) -> Result<f64, LineError> {
    let v: f64 = match s.trim().parse() {
        Ok(v) => v,
        Err(_) => return line_error(line, format!("field {field}: {s:?} is not a number")),
    };
    if !domain.admits(v) {
        return line_error(
            line,
            format!("field {field} is {}, but {}", s.trim(), domain.describe()),
        );
    }
    Ok(v)
}

/// Parses a count (tasks, copies, load) read from `field`.
pub(crate) fn field_count(line: usize, field: &str, s: &str) -> Result<u64, LineError> {
    crate::record::domain::parse_count(&format!("field {field}"), s)
        .or_else(|e| line_error(line, e))
}

/// Reads a result file given directly as a side of `compare` (nothing is stored). Other
/// tools' formats are imported as by [`import_file`]; a patchbench JSON document is taken as
/// written, without the store's domain rules, because a run whose workload stopped working
/// records a score of 0 in its `--json` file (the store refuses it) and that drop to zero is
/// exactly what `compare --fail-on-regression` must see. `compare` itself refuses non-finite
/// and negative values, naming the metric and the run.
pub fn read_side_file(path: &Path, opts: &ImportOptions) -> anyhow::Result<RunRecord> {
    let shown = path.display().to_string();
    let bytes = read_capped(path, &shown)?;
    let text = String::from_utf8_lossy(&bytes);
    if text.trim_start().starts_with('{') {
        return RunRecord::from_json(&text).map_err(|e| Usage(format!("{shown}: {e}")).into());
    }
    import_file(path, opts)
}

/// Reads one file into its runs: one record; one per document for patchbench JSON lines
/// (documents one after the other, as `scripts/record-corpus.sh` writes them); or two for a
/// posted comparison table (one per side, labelled by the table's header; `--label` cannot
/// apply to both). A bad document refuses the whole file, naming the document.
pub fn import_file_runs(path: &Path, opts: &ImportOptions) -> anyhow::Result<Vec<RunRecord>> {
    let shown = path.display().to_string();
    let bytes = read_capped(path, &shown)?;
    let text = String::from_utf8_lossy(&bytes);
    if text.trim_start().starts_with('{') {
        return json_documents(&text, &shown, opts);
    }
    if !posted::looks_like(&text) {
        return Ok(vec![parse_text(&text, &shown, path, opts)?]);
    }
    if opts.label.is_some() {
        return Err(Usage(format!(
            "{shown}: a posted comparison table labels its two sides by its header; drop \
             --label"
        ))
        .into());
    }
    let mut records = posted::parse(&text).map_err(|e| located(&shown, e))?;
    for r in &mut records {
        if let Some(why) = r.label.as_deref().and_then(crate::args::label_problem) {
            return Err(Usage(format!(
                "{shown}: the table's header names a side that cannot be a label: {why}"
            ))
            .into());
        }
        r.validate().map_err(|e| Usage(format!("{shown}: {e}")))?;
        r.source = Some(format!(
            "{shown} ({} column of a posted table)",
            r.label.as_deref().unwrap_or("-")
        ));
    }
    Ok(records)
}

/// The runs of patchbench JSON `text`: its documents one after the other (JSON lines, or
/// pretty documents back to back), each parsed once and checked as it comes; an error names
/// the document (when there are several) or says where the JSON breaks.
fn json_documents(text: &str, shown: &str, opts: &ImportOptions) -> anyhow::Result<Vec<RunRecord>> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<serde_json::Value>();
    let mut runs = Vec::new();
    while let Some(doc) = stream.next() {
        let doc = doc.map_err(|e| Usage(format!("{shown}: not valid JSON ({e})")))?;
        let more = !text[stream.byte_offset()..].trim().is_empty();
        let named = if runs.is_empty() && !more {
            shown.to_string()
        } else {
            format!("{shown} (document {})", runs.len() + 1)
        };
        runs.push(finish(
            json_record(RunRecord::from_value(doc), &named)?,
            &named,
            opts,
        )?);
    }
    Ok(runs)
}

/// A parse error at a line of the file.
#[derive(Debug)]
pub(crate) struct LineError {
    pub line: usize,
    pub message: String,
}

pub(crate) fn line_error<T>(line: usize, message: impl Into<String>) -> Result<T, LineError> {
    Err(LineError {
        line,
        message: message.into(),
    })
}

fn located(file: &str, e: LineError) -> anyhow::Error {
    if e.line == 0 {
        Usage(format!("{file}: {}", e.message)).into()
    } else {
        Usage(format!("{file}:{}: {}", e.line, e.message)).into()
    }
}

/// A record for imported numbers: the system is whatever the file says (the rest unknown).
pub(crate) fn imported_record(
    kind: Kind,
    system: SystemInfo,
    config: BTreeMap<String, serde_json::Value>,
    metrics: Vec<Metric>,
) -> RunRecord {
    let record = RunRecord::new(kind, system, &config);
    RunRecord {
        source: None,
        finished_at: record.started_at.clone(),
        metrics,
        ..record
    }
}
