//! Integration tests of `patchbench check`: one line per noise source, each starting with a
//! known status word; exit status 0 or 1 agreeing with the warnings; the JSON form carries
//! the same findings; a tmpfs `--dir` is recognised; bad input exits 2 with one line; a closed
//! stdout ends quietly. The machine's state (busy or quiet) is not assumed.

mod common;

use common::{patchbench, std_patchbench};

const STATUSES: [&str; 3] = ["ok", "warn", "not exposed"];

#[test]
fn every_line_has_a_status_and_the_exit_status_follows_the_warnings() {
    let out = patchbench()
        .args(["check", "--sample", "0.2"])
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    assert!(code == 0 || code == 1, "exit status {code}");
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 15, "{text}");
    let mut warned = false;
    for line in &lines {
        let status = STATUSES
            .iter()
            .find(|s| line.starts_with(&format!("{s} ")))
            .unwrap_or_else(|| panic!("no status word: {line:?}"));
        warned |= *status == "warn";
        if *status == "warn" {
            assert!(line.contains("; fix: "), "a warning without a fix: {line}");
        }
    }
    assert_eq!(code, i32::from(warned), "{text}");
    for source in [
        "load average",
        "hypervisor steal",
        "cpufreq governor",
        "ASLR",
        "swap",
    ] {
        assert!(
            lines.iter().any(|l| l.contains(source)),
            "{source} missing:\n{text}"
        );
    }
}

#[test]
fn json_has_the_documented_fields() {
    let out = patchbench()
        .args(["check", "--sample", "0.2", "--format", "json"])
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["schema"], "patchbench.check/1");
    assert_eq!(r["sample_secs"], 0.2);
    let findings = r["findings"].as_array().unwrap();
    assert!(findings.len() >= 15);
    let mut warned = false;
    for f in findings {
        for key in ["id", "source", "kind", "status", "value"] {
            assert!(f[key].is_string(), "{key} in {f}");
        }
        let status = f["status"].as_str().unwrap();
        assert!(["ok", "warn", "not_exposed"].contains(&status), "{f}");
        assert!(["setting", "activity"].contains(&f["kind"].as_str().unwrap()));
        warned |= status == "warn";
        assert_eq!(status == "warn", f["fix"].is_string(), "{f}");
    }
    assert_eq!(code, i32::from(warned));
    let a = &r["activity"];
    assert!(a["total_ticks"].as_u64().unwrap() > 0, "{a}");
    assert!(a["busiest"].is_array());
}

#[test]
fn a_tmpfs_dir_is_memory() {
    // A tmpfs of the test's own (not /dev/shm, which a machine may lack or mount otherwise).
    let fs = common::Tmpfs::mount("size=1m");
    let out = patchbench()
        .args(["check", "--sample", "0.1", "--dir"])
        .arg(&fs.path)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("file tests' directory"))
        .unwrap();
    let want = format!("{}: memory (tmpfs)", fs.path.display());
    assert!(line.contains(&want), "{line}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for args in [
        vec!["check", "--dir", "/nonexistent/patchbench-check"],
        vec!["check", "--sample", "0"],
        vec!["check", "--sample", "soon"],
    ] {
        let out = patchbench().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(!err.contains("panicked"), "{err}");
        assert!(out.stdout.is_empty());
    }
    let out = patchbench()
        .args(["check", "--dir", "/nonexistent/patchbench-check"])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no such directory"), "{err}");
}

#[test]
fn a_reader_that_stops_early_ends_quietly_with_141() {
    // `check | head -0`: stdout closes before the table is written; as every command does, the
    // check ends quietly with 128 + SIGPIPE (no error line, no panic).
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = std_patchbench()
        .args(["check", "--sample", "0.1", "--format", "json"])
        .stdout(writer)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(141));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
