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

/// Standard output of a run on a pseudo-terminal in raw mode (so the bytes read are the
/// bytes written), as a user's terminal.
fn on_terminal(args: &[&str], env: &[(&str, &str)]) -> String {
    use std::io::Read;
    use std::os::fd::FromRawFd;
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty writes two new descriptors into the pointers; no name, default modes.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors are ours and open; termios is plain data.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        assert_eq!(libc::tcgetattr(slave, &mut t), 0);
        libc::cfmakeraw(&mut t);
        assert_eq!(libc::tcsetattr(slave, libc::TCSANOW, &t), 0);
    }
    // SAFETY: each descriptor is owned by exactly one File from here on.
    let (mut master, slave) = unsafe {
        (
            std::fs::File::from_raw_fd(master),
            std::fs::File::from_raw_fd(slave),
        )
    };
    let mut c = command(args);
    c.env("TERM", "xterm-256color").stdout(slave);
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().unwrap();
    // The parent's copy of the terminal's slave side goes with the Command, so reading the
    // master ends (EIO) when the child has exited.
    drop(c);
    let mut out = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match master.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.raw_os_error() == Some(libc::EIO) => break,
            Err(e) => panic!("reading the terminal: {e}"),
        }
    }
    assert!(child.wait().unwrap().success(), "{args:?}");
    String::from_utf8(out).unwrap()
}

#[test]
fn verdicts_are_coloured_on_a_terminal_only_and_no_color_turns_it_off() {
    use patchbench::report::color::strip;
    for (format, every_case) in [
        ("unixbench", true),
        ("lkp", true),
        ("inline", false),
        ("markdown", false),
    ] {
        let args = compare_args(format);
        let mut never = args.clone();
        never.extend(["--color", "never"]);
        let plain = piped(&never, &[]);
        assert!(!plain.contains('\x1b'), "{format}");
        // A pipe, NO_COLOR and --color never: the same bytes (and the snapshot's, above).
        assert_eq!(piped(&args, &[]), plain, "{format}: piped");
        assert_eq!(
            piped(&args, &[("NO_COLOR", "1")]),
            plain,
            "{format}: NO_COLOR piped"
        );
        assert_eq!(
            on_terminal(&args, &[("NO_COLOR", "1")]),
            plain,
            "{format}: NO_COLOR on a terminal"
        );
        if every_case {
            assert_eq!(
                on_terminal(&never, &[]),
                plain,
                "{format}: --color never on a terminal"
            );
            assert_eq!(
                on_terminal(&args, &[("TERM", "dumb")]),
                plain,
                "{format}: TERM=dumb"
            );
        }
        // On a terminal: regressed red, improved green, inconclusive dim, no change plain;
        // nothing else changes.
        let coloured = on_terminal(&args, &[]);
        assert!(
            coloured.contains("\x1b[31mregressed\x1b[0m"),
            "{format}: {coloured}"
        );
        assert!(coloured.contains("\x1b[32mimproved\x1b[0m"), "{format}");
        assert!(coloured.contains("\x1b[2minconclusive\x1b[0m"), "{format}");
        assert!(
            !coloured.contains("m no change"),
            "{format}: no change stays plain"
        );
        assert_eq!(strip(&coloured), plain, "{format}: only the escapes differ");
        if !every_case {
            continue;
        }
        // Forced colour through a pipe, unless NO_COLOR says no.
        let mut always = args.clone();
        always.extend(["--color", "always"]);
        assert_eq!(strip(&piped(&always, &[])), plain);
        assert!(
            piped(&always, &[("NO_COLOR", "1")]).contains('\x1b'),
            "--color always wins"
        );
        assert!(piped(&args, &[("CLICOLOR_FORCE", "1")]).contains('\x1b'));
        assert_eq!(
            piped(&args, &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]),
            plain
        );
    }
}

#[test]
fn machine_formats_are_never_coloured_even_on_a_terminal() {
    for format in ["json", "csv", "html"] {
        let text = on_terminal(&compare_args(format), &[]);
        assert!(!text.contains('\x1b'), "{format}");
    }
}
