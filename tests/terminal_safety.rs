//! Data never drives the terminal, tested through the real binary: a stored run whose host
//! name, kernel and CPU strings, test names and metric titles carry escape sequences, a forged
//! line and 100 KB of text is shown by `runs`, `show`, `show --report`, every text format of
//! `compare` (and its warnings), `export --format csv` and `import`'s confirmation with every
//! control character escaped, on lines of bounded length, and with CSV cells that a
//! spreadsheet would take for formulas neutralised; its JSON export keeps the exact strings.
//! Another process's `comm` (set by naming a program so) is shown escaped in `check` and in
//! a run's noise lines. A label with a control character is refused at the door.

mod common;

use common::{fixture, patchbench_with_store, std_patchbench};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A host name that clears the screen, sets the title, and is 100 KB long.
fn hostile_host() -> String {
    format!("\x1b[2J\x1b]0;pwned\x07{}", "h".repeat(100_000))
}

const FORGED: &str = "verdict: everything improved +50%";
const FORMULA: &str = "=HYPERLINK(\"http://evil.example\",\"click\")";

/// The fixture run with hostile strings everywhere a run carries text.
fn hostile_run(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(fixture("patchbench-run.json")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["system"]["hostname"] = hostile_host().into();
    doc["system"]["kernel_release"] = "6.1\x1b]0;title\x07".into();
    doc["system"]["cpu_model"] = format!("CPU\n{FORGED}").into();
    doc["tests"][0]["name"] = format!("{FORMULA}\x1b[31m").into();
    for m in doc["metrics"].as_array_mut().unwrap() {
        m["title"] = format!("{FORMULA}\r\n{FORGED}").into();
    }
    doc.as_object_mut().unwrap().remove("uuid");
    let path = dir.join("hostile.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    path
}

/// No control character but newlines and tabs, no forged line, no endless line.
fn assert_safe(what: &str, bytes: &[u8]) {
    assert_no_controls(what, bytes);
    let text = String::from_utf8_lossy(bytes);
    for line in text.lines() {
        assert!(
            !line.trim_start().starts_with(FORGED),
            "{what}: a data string forged a line: {line:.300}"
        );
        assert!(
            line.chars().count() <= 1000,
            "{what}: a line of {} characters",
            line.chars().count()
        );
    }
}

/// No control character but newlines and tabs (JSON and HTML keep strings whole: JSON
/// escapes a newline itself, HTML shows one as a space).
fn assert_no_controls(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for bad in ['\x1b', '\x07', '\r', '\0'] {
        assert!(
            !text.contains(bad),
            "{what}: raw {bad:?} in output:\n{text:.2000}"
        );
    }
}

fn run(c: &mut Command) -> Output {
    c.output().unwrap()
}

/// Every cell of a CSV document that a spreadsheet would read as a formula.
fn formula_cells(bytes: &[u8]) -> Vec<String> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut bad = Vec::new();
    for rec in r.records() {
        for cell in rec.unwrap().iter() {
            let numeric = cell.trim_end_matches('%').parse::<f64>().is_ok();
            if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) && !numeric {
                bad.push(cell.to_string());
            }
        }
    }
    bad
}

#[test]
fn hostile_strings_of_a_stored_run_never_reach_the_terminal_raw() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    let hostile = hostile_run(dir.path());
    let pb = || patchbench_with_store(&store);

    let out = run(pb().args(["import", "--label", "evil"]).arg(&hostile));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_safe("import", &out.stdout);
    let out = run(pb()
        .args(["import", "--label", "clean"])
        .arg(fixture("patchbench-run.json")));
    assert_eq!(out.status.code(), Some(0));

    let mut outputs: Vec<(String, Output)> = vec![
        ("runs".into(), run(pb().arg("runs"))),
        ("show".into(), run(pb().args(["show", "1"]))),
        (
            "show --report".into(),
            run(pb().args(["show", "1", "--report"])),
        ),
        (
            "export csv".into(),
            run(pb().args(["export", "1", "--format", "csv"])),
        ),
    ];
    for f in [
        "unixbench",
        "lkp",
        "inline",
        "markdown",
        "csv",
        "json",
        "html",
    ] {
        outputs.push((
            format!("compare --format {f}"),
            run(pb().args(["compare", "evil", "clean", "--format", f])),
        ));
    }
    for (what, out) in &outputs {
        assert_eq!(
            out.status.code(),
            Some(0),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if what.ends_with("json") || what.ends_with("html") {
            assert_no_controls(what, &out.stdout);
        } else {
            assert_safe(what, &out.stdout);
        }
        assert_safe(what, &out.stderr);
    }
    let text = |what: &str| {
        let o = &outputs.iter().find(|(w, _)| w == what).unwrap().1;
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    // What the strings look like: escaped, cut with an ellipsis.
    assert!(
        text("runs").contains("\\e[2J\\e]0;pwned\\x07h"),
        "{:.500}",
        text("runs")
    );
    assert!(
        text("show").contains(&format!("cpu 2 × CPU\\n{FORGED}")),
        "{:.3000}",
        text("show")
    );
    assert!(text("show").contains('…'));
    assert!(text("show --report").contains("6.1\\e]0;title\\x07"));
    // The comparison says the hosts differ (quoting both) without the raw strings.
    let unixbench = text("compare --format unixbench");
    assert!(unixbench.contains("not comparable"), "{unixbench:.3000}");
    // Spreadsheets get no formula from a test name or title.
    for what in ["export csv", "compare --format csv"] {
        let o = &outputs.iter().find(|(w, _)| w == what).unwrap().1;
        assert_eq!(formula_cells(&o.stdout), Vec::<String>::new(), "{what}");
        assert!(
            text(what).contains("'=HYPERLINK"),
            "{what}: {:.1000}",
            text(what)
        );
    }
    // JSON keeps the exact strings (escaped as JSON escapes them).
    let o = run(pb().args(["export", "1"]));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["system"]["hostname"], hostile_host());
    assert_eq!(doc["system"]["cpu_model"], format!("CPU\n{FORGED}"));
}

#[test]
fn a_label_with_a_control_character_is_refused_at_the_door() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    let forged = format!("base\n{FORGED}");
    for args in [
        vec!["run", "syscall", "--no-store", "--label", &forged],
        vec!["aim7", "creat-clo", "--no-store", "--label", &forged],
        vec!["scale", "getppid1", "--no-store", "--label", &forged],
        vec!["import", "--label", &forged, "x.json"],
        vec!["runs", "--label", "\x1b[2J"],
    ] {
        let out = run(patchbench_with_store(&store).args(&args));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("control character"), "{args:?}: {err}");
        assert_safe("refusal", &out.stderr);
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // A JSON run carrying such a label is refused too, unless relabelled.
    let text = std::fs::read_to_string(fixture("patchbench-run.json")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["label"] = forged.clone().into();
    let file = dir.path().join("labelled.json");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    let out = run(patchbench_with_store(&store).arg("import").arg(&file));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--label"), "{err}");
    assert_safe("import refusal", &out.stderr);
    assert!(!store.exists(), "nothing stored");
    let out = run(patchbench_with_store(&store)
        .args(["import", "--label", "base"])
        .arg(&file));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_bar_in_a_label_does_not_break_the_markdown_table() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    for (label, file) in [("a|b", "ub60-base-1.txt"), ("c", "ub60-patched-1.txt")] {
        let out = run(patchbench_with_store(&store)
            .args(["import", "--label", label])
            .arg(fixture(file)));
        assert_eq!(out.status.code(), Some(0));
    }
    let out =
        run(patchbench_with_store(&store).args(["compare", "a|b", "c", "--format", "markdown"]));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let table: Vec<&str> = text.lines().filter(|l| l.starts_with('|')).collect();
    assert!(!table.is_empty(), "{text}");
    let bars = |l: &str| l.matches('|').count() - l.matches("\\|").count();
    let first = bars(table[0]);
    for l in &table {
        assert_eq!(bars(l), first, "every row has the header's cells: {text}");
    }
    assert!(table[0].contains("a\\|b"), "{}", table[0]);
}

/// A process named `comm` (by the name of the program it runs) spinning at high priority, so
/// it is busy however loaded the machine is; killed on drop.
struct Spinner(std::process::Child);

impl Spinner {
    fn start(dir: &Path, comm: &str) -> Spinner {
        let link = dir.join(comm);
        std::os::unix::fs::symlink("/bin/sh", &link).unwrap();
        use std::os::unix::process::CommandExt;
        let mut c = Command::new(&link);
        c.args(["-c", "while :; do :; done"]);
        // SAFETY: setpriority is async-signal-safe; nothing else runs before exec.
        unsafe {
            c.pre_exec(|| {
                libc::setpriority(libc::PRIO_PROCESS, 0, -20);
                Ok(())
            });
        }
        Spinner(c.spawn().unwrap())
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn another_processs_comm_is_shown_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let comm = "\x1b[2J\nforged";
    let spinner = Spinner::start(dir.path(), comm);
    let stat = std::fs::read_to_string(format!("/proc/{}/comm", spinner.0.id())).unwrap();
    assert_eq!(
        stat,
        format!("{comm}\n"),
        "the spinner carries the hostile name"
    );

    let out = run(std_patchbench().args(["check", "--sample", "0.5"]));
    assert_safe("check", &out.stdout);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\\e[2J\\nforged (pid"), "{text}");

    let out = run(std_patchbench()
        .args([
            "run",
            "syscall",
            "--copies",
            "1",
            "--passes",
            "1",
            "--duration",
            "0.5",
        ])
        .args(["--no-settle", "--no-store", "--dir"])
        .arg(dir.path()));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_safe("run stdout", &out.stdout);
    assert_safe("run stderr", &out.stderr);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("noise: another process used the CPU: \\e[2J\\nforged"),
        "{err}"
    );
    drop(spinner);
}

#[test]
fn every_refusal_of_the_command_line_is_one_line() {
    for (args, want) in [
        (
            vec!["run", "--copiez", "3"],
            "unexpected argument '--copiez'",
        ),
        (
            vec!["campaign", "start"],
            "required arguments were not provided",
        ),
        (
            vec!["run", "--copies", "x"],
            "invalid value 'x' for '--copies",
        ),
        (vec!["frobnicate"], "unrecognized subcommand 'frobnicate'"),
        (
            vec!["campaign", "start", "c", "--until", "1e-300", "--", "run"],
            "0.01 to 50",
        ),
        (
            vec!["run", "--label", "a\x1b[2Jb", "--copiez"],
            "unexpected argument",
        ),
    ] {
        let out = run(common::std_patchbench().args(&args));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("patchbench: error: ") && err.contains(want),
            "{args:?}: {err}"
        );
        assert!(err.trim_end().ends_with("--help`"), "{args:?}: {err}");
        assert_safe("clap refusal", &out.stderr);
    }
    // Asking for help is no error.
    let out = run(common::std_patchbench().args(["run", "--help"]));
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).lines().count() > 10);
}
