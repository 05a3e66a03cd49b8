//! The A/A corpus of real runs (tests/fixtures/corpus, recorded by scripts/record-corpus.sh):
//! one gzip-compressed JSON-lines file of `patchbench.run/2` documents per workload. Reads
//! every file there, and fails with a clear message when there is none.

#![allow(dead_code)]

use flate2::read::GzDecoder;
use patchbench::record::{RunRecord, SCHEMA};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The corpus directory.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus")
}

/// Every corpus file, by name (`syscall`, `campaign-pipe`, …), sorted; panics with how to
/// record one when there is none.
pub fn files() -> Vec<(String, PathBuf)> {
    let d = dir();
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(&d)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter_map(|p| {
            let name = p
                .file_name()?
                .to_str()?
                .strip_suffix(".jsonl.gz")?
                .to_string();
            Some((name, p))
        })
        .collect();
    out.sort();
    assert!(
        !out.is_empty(),
        "no A/A corpus in {}: record one with `scripts/record-corpus.sh {}` \
         (`--quick` for a small one)",
        d.display(),
        d.display()
    );
    out
}

/// The documents of one file, each as its text (one line) and its record.
pub fn read(path: &Path) -> Vec<(String, RunRecord)> {
    let mut text = String::new();
    GzDecoder::new(std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .read_to_string(&mut text)
        .unwrap_or_else(|e| panic!("{}: not gzip-compressed text: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, line)| {
            let r: RunRecord = serde_json::from_str(line).unwrap_or_else(|e| {
                panic!("{} line {}: not a run document: {e}", path.display(), i + 1)
            });
            assert_eq!(r.schema, SCHEMA, "{} line {}", path.display(), i + 1);
            (line.to_string(), r)
        })
        .collect()
}
