//! Colour and terminal habits: the verdicts of `compare` are coloured only on a terminal (or
//! with `--color always`); `--color never`, `NO_COLOR` (any non-empty value) and a pipe all
//! give the uncoloured output, byte for byte the output patchbench printed before colour
//! existed (the snapshots under tests/snapshots were taken from that build).

mod common;

use std::path::Path;

/// The fixtures' three base and three patched UnixBench reports: rows improved, regressed,
/// no change and inconclusive.
const BASE: &str = "ub60-base-1.txt,ub60-base-2.txt,ub60-base-3.txt";
const PATCHED: &str = "ub60-patched-1.txt,ub60-patched-2.txt,ub60-patched-3.txt";

fn fixtures() -> String {
    format!("{}/tests/fixtures", env!("CARGO_MANIFEST_DIR"))
}

/// `patchbench ARGS` in the fixtures directory (so the side names are the short file names),
/// with no store and no colour variables from the environment.
fn command(args: &[&str]) -> std::process::Command {
    let mut c = common::std_patchbench();
    c.current_dir(fixtures())
        .env(
            "PATCHBENCH_STORE",
            Path::new(&fixtures()).join("no-such-store.db"),
        )
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CLICOLOR")
        .args(args);
    c
}

/// Standard output of a run through a pipe (what assert_cmd and a shell pipe see).
fn piped(args: &[&str], env: &[(&str, &str)]) -> String {
    let mut c = command(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn compare_args(format: &str) -> Vec<&str> {
    vec!["compare", BASE, PATCHED, "--format", format]
}

/// insta trims trailing newlines; the marker keeps them in the snapshot.
fn marked(text: &str) -> String {
    format!("{text}[end of output]")
}

#[test]
fn compare_output_is_todays_byte_for_byte() {
    for format in ["unixbench", "lkp", "inline", "markdown"] {
        let text = piped(&compare_args(format), &[]);
        insta::assert_snapshot!(format!("compare_{format}"), marked(&text));
    }
    insta::assert_snapshot!("list", marked(&piped(&["list"], &[])));
}
