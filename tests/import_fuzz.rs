//! Fuzzing every importer through the real binary: proptest mutates the real files in
//! tests/fixtures/ (every file there, so an importer added with its fixture is covered too):
//! truncations, byte flips, duplicated, deleted and swapped lines, numbers replaced by huge,
//! NaN, infinite, negative, zero and fractional values, non-UTF-8 bytes. Each mutated file is
//! given to `patchbench import` with a 10 s bound, and the property is:
//!
//! - no panic (exit 0 or 2 only, never "internal error") and no hang;
//! - a refused file (exit 2) gets one line naming it, and leaves the store byte-identical;
//! - an accepted file stores only finite values in their metric's domain (checked here
//!   independently of `src/record/domain.rs`: scores > 0, JTI in −100..=100, the rest ≥ 0, counts
//!   whole numbers from 1 to 4194304), and its stored record reads back.
//!
//! `cargo test` runs 48 cases (a few seconds). `PATCHBENCH_FUZZ_CASES=5000 cargo test --test
//! import_fuzz -- --nocapture` runs more and prints the counts. The case generator is seeded
//! the same every run, so a failure reproduces; `PATCHBENCH_FUZZ_SEED=N` picks other cases.

mod common;

use common::{fingerprint, patchbench_with_store, run_bounded};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Values a number in a file is replaced with.
const HOSTILE_NUMBERS: &[&str] = &[
    "inf",
    "-inf",
    "Infinity",
    "NaN",
    "nan",
    "1e309",
    "1e400",
    "-1e400",
    "-5",
    "-0.0",
    "0",
    "0.0",
    "1.5",
    "0.5",
    "1e-320",
    "18446744073709551616",
    "4294967296",
    "4194305",
    "123456789012345678901234567890",
    "99999999999999999999999999999999999999.9",
];

/// Byte sequences that are not UTF-8.
const NOT_UTF8: &[&[u8]] = &[
    b"\xff",
    b"\xfe\xff",
    b"\x80",
    b"\xc0\xaf",
    b"\xed\xa0\x80",
    b"\0",
];

#[derive(Debug, Clone)]
enum Mutation {
    Truncate(f64),
    FlipByte(f64, u8),
    DuplicateLine(f64),
    DeleteLine(f64),
    SwapLines(f64, f64),
    ReplaceNumber(f64, usize),
    InsertBytes(f64, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = 0.0..1.0f64;
    prop_oneof![
        1 => at.clone().prop_map(Mutation::Truncate),
        1 => (at.clone(), 1..=255u8).prop_map(|(p, m)| Mutation::FlipByte(p, m)),
        1 => at.clone().prop_map(Mutation::DuplicateLine),
        1 => at.clone().prop_map(Mutation::DeleteLine),
        1 => (at.clone(), at.clone()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        3 => (at.clone(), 0..HOSTILE_NUMBERS.len())
            .prop_map(|(p, v)| Mutation::ReplaceNumber(p, v)),
        1 => (at, 0..NOT_UTF8.len()).prop_map(|(p, v)| Mutation::InsertBytes(p, v)),
    ]
}

fn index(fraction: f64, len: usize) -> usize {
    ((fraction * len as f64) as usize).min(len.saturating_sub(1))
}

/// Line boundaries of `b`: (start, end including the newline).
fn lines(b: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in b.iter().enumerate() {
        if *c == b'\n' {
            out.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < b.len() {
        out.push((start, b.len()));
    }
    out
}

/// Spans of decimal numbers (digits with an optional sign, point and fraction).
fn numbers(b: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) {
            let start = if i > 0 && b[i - 1] == b'-' { i - 1 } else { i };
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'.') {
                j += 1;
            }
            out.push((start, j));
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

fn apply(mut b: Vec<u8>, m: &Mutation) -> Vec<u8> {
    match *m {
        Mutation::Truncate(p) => b.truncate(index(p, b.len() + 1)),
        Mutation::FlipByte(p, mask) if !b.is_empty() => {
            let i = index(p, b.len());
            b[i] ^= mask;
        }
        Mutation::DuplicateLine(p) => {
            let l = lines(&b);
            if !l.is_empty() {
                let (s, e) = l[index(p, l.len())];
                let line = b[s..e].to_vec();
                b.splice(e..e, line);
            }
        }
        Mutation::DeleteLine(p) => {
            let l = lines(&b);
            if !l.is_empty() {
                let (s, e) = l[index(p, l.len())];
                b.drain(s..e);
            }
        }
        Mutation::SwapLines(p, q) => {
            let l = lines(&b);
            let (i, j) = (index(p, l.len()), index(q, l.len()));
            if !l.is_empty() && i != j {
                let (a, c) = (l[i.min(j)], l[i.max(j)]);
                let mut out = b[..a.0].to_vec();
                out.extend_from_slice(&b[c.0..c.1]);
                out.extend_from_slice(&b[a.1..c.0]);
                out.extend_from_slice(&b[a.0..a.1]);
                out.extend_from_slice(&b[c.1..]);
                b = out;
            }
        }
        Mutation::ReplaceNumber(p, v) => {
            let n = numbers(&b);
            if !n.is_empty() {
                let (s, e) = n[index(p, n.len())];
                b.splice(s..e, HOSTILE_NUMBERS[v].bytes());
            }
        }
        Mutation::InsertBytes(p, v) => {
            let i = index(p, b.len() + 1);
            b.splice(i..i, NOT_UTF8[v].iter().copied());
        }
        Mutation::FlipByte(..) => {}
    }
    b
}

/// Every file under tests/fixtures/.
fn fixtures() -> Vec<(PathBuf, Vec<u8>)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.path());
        for e in entries {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(Path::new(&common::fixture("")), &mut out);
    out
}

/// The metric domains, written out again here so the test does not trust the code it tests.
fn in_domain(name: &str, v: f64) -> bool {
    const POSITIVE: &[&str] = &[
        "unixbench.score",
        "unixbench.index",
        "aim7.jobs-per-min",
        "aim7.jobs-per-min-per-task",
        "aim7.real",
        "will-it-scale.per_process_ops",
        "will-it-scale.per_thread_ops",
    ];
    v.is_finite()
        && if POSITIVE.contains(&name) {
            v > 0.0
        } else if name == "aim7.jti" {
            (-100.0..=100.0).contains(&v)
        } else {
            v >= 0.0
        }
}

fn count_ok(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| b.is_ascii_digit())
        && s.parse::<u64>().is_ok_and(|n| (1..=4_194_304).contains(&n))
}

/// What is wrong with the runs stored after `after_id`, if anything.
fn bad_values(store: &Path, after_id: i64) -> Vec<String> {
    let db =
        rusqlite::Connection::open_with_flags(store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut bad = Vec::new();
    let mut q = db
        .prepare(
            "SELECT run_id, name, params_json, value, samples_json FROM metrics WHERE run_id > ?1",
        )
        .unwrap();
    let rows = q
        .query_map([after_id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Option<f64>>(3)?,
                r.get::<_, String>(4)?,
            ))
        })
        .unwrap();
    for row in rows {
        let (id, name, params, value, samples) = row.unwrap();
        match value {
            Some(v) if in_domain(&name, v) => {}
            other => bad.push(format!("run {id} {name} {params}: value {other:?}")),
        }
        let samples: Vec<Option<f64>> = serde_json::from_str(&samples).unwrap_or_default();
        if samples
            .iter()
            .any(|s| !s.is_some_and(|s| s.is_finite() && (s >= 0.0 || name == "aim7.jti")))
        {
            bad.push(format!("run {id} {name}: samples {samples:?}"));
        }
        let params: std::collections::BTreeMap<String, String> =
            serde_json::from_str(&params).unwrap_or_default();
        for k in ["tasks", "copies", "load"] {
            if let Some(c) = params.get(k).filter(|c| !count_ok(c)) {
                bad.push(format!("run {id} {name}: {k} = {c:?}"));
            }
        }
    }
    drop(q);
    drop(db);
    let stored = patchbench::store::db::Store::open(
        &patchbench::store::Location::File(store.to_path_buf()),
        patchbench::store::Access::Read,
        None,
    )
    .unwrap();
    let ids: Vec<i64> = stored
        .list(None)
        .unwrap()
        .iter()
        .map(|r| r.id)
        .filter(|id| *id > after_id)
        .collect();
    for id in ids {
        let doc = stored.stored_document(id).unwrap().unwrap();
        match patchbench::record::RunRecord::from_value(doc) {
            Err(e) => bad.push(format!("run {id} does not read back: {e}")),
            Ok(r) => {
                for m in &r.metrics {
                    if !in_domain(&m.name, m.value) {
                        bad.push(format!("run {id} record: {} = {}", m.key(), m.value));
                    }
                }
                for t in &r.tests {
                    if !(t.score.is_finite() && t.score >= 0.0 && t.copies >= 1) {
                        bad.push(format!("run {id} test {}: score {}", t.test, t.score));
                    }
                }
            }
        }
    }
    bad
}

#[derive(Debug, Default)]
struct Counts {
    cases: usize,
    panics: usize,
    hangs: usize,
    bad_values: usize,
    refused: usize,
    accepted: usize,
    store_changed: usize,
    slowest_seconds: f64,
}

#[test]
fn mutated_fixtures_never_panic_hang_or_store_bad_values() {
    let cases: u32 = std::env::var("PATCHBENCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48);
    let seed: u64 = std::env::var("PATCHBENCH_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let files = fixtures();
    assert!(files.len() >= 8, "fixtures missing: {}", files.len());
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("fuzz.db");
    // Start from a store with one good run, so "byte-identical" compares something.
    let first = patchbench_with_store(&store)
        .arg("import")
        .arg(common::fixture("brk2.csv"))
        .output()
        .unwrap();
    assert!(first.status.success(), "{first:?}");

    let counts = RefCell::new(Counts::default());
    let last_id = RefCell::new(1i64);
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 64,
        ..Config::default()
    };
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let strategy = (0..files.len(), proptest::collection::vec(mutation(), 1..=4));
    let result = runner.run(&strategy, |(which, mutations)| {
        let (source, original) = &files[which];
        let mutated = mutations.iter().fold(original.clone(), apply);
        let ext = source
            .extension()
            .map(|e| e.to_string_lossy().into_owned())
            .unwrap_or_else(|| "txt".into());
        let file = d.path().join(format!(
            "{}.{ext}",
            source.file_stem().unwrap().to_string_lossy()
        ));
        std::fs::write(&file, &mutated).unwrap();
        let before = fingerprint(&store);
        let out = run_bounded(
            patchbench_with_store(&store).arg("import").arg(&file),
            Duration::from_secs(10),
        );
        let mut c = counts.borrow_mut();
        c.cases += 1;
        c.slowest_seconds = c.slowest_seconds.max(out.seconds);
        let what = || format!("{} with {mutations:?}", source.display());
        if out.timed_out {
            c.hangs += 1;
            return Err(TestCaseError::fail(format!("hang: {}", what())));
        }
        let internal = out.stderr.contains("internal error") || out.stderr.contains("panicked");
        match out.code {
            Some(2) if !internal => {
                c.refused += 1;
                if fingerprint(&store) != before {
                    c.store_changed += 1;
                    return Err(TestCaseError::fail(format!(
                        "store changed by a refused file: {}",
                        what()
                    )));
                }
                let named = out
                    .stderr
                    .starts_with(&format!("patchbench: error: {}", file.display()));
                if !named || out.stderr.lines().count() != 1 {
                    return Err(TestCaseError::fail(format!(
                        "refusal not one line naming the file: {:?} for {}",
                        out.stderr,
                        what()
                    )));
                }
            }
            Some(0) => {
                c.accepted += 1;
                let bad = bad_values(&store, *last_id.borrow());
                let newest: i64 = rusqlite::Connection::open(&store)
                    .unwrap()
                    .query_row("SELECT max(id) FROM runs", [], |r| r.get(0))
                    .unwrap();
                *last_id.borrow_mut() = newest;
                if !bad.is_empty() {
                    c.bad_values += 1;
                    return Err(TestCaseError::fail(format!(
                        "bad values stored from {}: {bad:?}",
                        what()
                    )));
                }
            }
            _ => {
                c.panics += 1;
                return Err(TestCaseError::fail(format!(
                    "exit {:?} ({}) for {}",
                    out.code,
                    out.stderr.trim(),
                    what()
                )));
            }
        }
        Ok(())
    });
    let c = counts.into_inner();
    eprintln!(
        "import fuzz: {} cases (seed {seed}): {} panics, {} hangs over 10 s, {} with bad values \
         stored, {} refused ({} changed the store), {} accepted; slowest case {:.2} s",
        c.cases,
        c.panics,
        c.hangs,
        c.bad_values,
        c.refused,
        c.store_changed,
        c.accepted,
        c.slowest_seconds
    );
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(
        c.refused > 0 && c.accepted > 0,
        "the mutations should give both: {c:?}"
    );
}
