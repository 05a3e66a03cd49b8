//! Stores on odd paths (issue #20, item 4), each case as it was reproduced: a store on a
//! read-only mount (queries work, writes say "read-only", nothing is created beside it), one
//! this user may not write, character devices (`/dev/null`, `/dev/full`, one made with
//! `mknod`), a FIFO and a directory as a store (refused with one line, nothing created), a
//! healthy store under a memory limit (named as memory, never "corrupt"), and a run
//! interrupted before its first result (no run left behind). The mounts and `mknod` need
//! root; without it these tests fail with the reason.

mod common;

use common::{entries, fixture};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn patchbench(store: &Path) -> assert_cmd::Command {
    let mut c = common::patchbench();
    c.env("PATCHBENCH_STORE", store);
    c
}

/// A store with two imported runs (labels base and patched) in `dir`.
fn store_in(dir: &Path) -> PathBuf {
    let path = dir.join("s.db");
    for label in ["base", "patched"] {
        patchbench(&path)
            .args(["import", "--label", label, &fixture("ub60-base-1.txt")])
            .assert()
            .success();
    }
    path
}

fn must(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed (this test needs root): {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A read-only bind mount of a directory, undone when dropped.
struct ReadOnlyMount {
    path: PathBuf,
}

impl ReadOnlyMount {
    fn of(source: &Path, at: &Path) -> ReadOnlyMount {
        std::fs::create_dir(at).unwrap();
        must(
            Command::new("mount").arg("--bind").arg(source).arg(at),
            "mount --bind",
        );
        let m = ReadOnlyMount {
            path: at.to_path_buf(),
        };
        must(
            Command::new("mount")
                .args(["-o", "remount,bind,ro"])
                .arg(at),
            "mount -o remount,bind,ro",
        );
        m
    }
}

impl Drop for ReadOnlyMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.path).status();
    }
}

#[test]
fn a_store_on_read_only_media_is_read_but_not_written() {
    let d = tempfile::tempdir().unwrap();
    let source = d.path().join("src");
    std::fs::create_dir(&source).unwrap();
    store_in(&source);
    let before = entries(&source);
    let mount = ReadOnlyMount::of(&source, &d.path().join("ro"));
    let store = mount.path.join("s.db");
    for args in [
        &["runs"][..],
        &["show", "1"],
        &["export", "2"],
        &["compare", "base", "patched"],
    ] {
        patchbench(&store).args(args).assert().success();
    }
    for args in [
        &["import", &fixture("ub60-base-1.txt")][..],
        &["rm", "1"],
        &[
            "run",
            "syscall",
            "--duration",
            "0.2",
            "--passes",
            "1",
            "--no-settle",
        ],
    ] {
        let out = patchbench(&store).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("read-only") && err.contains("mounted read-only"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("corrupt"), "{err}");
        assert!(!String::from_utf8_lossy(&out.stdout).contains("Benchmark Run"));
    }
    assert_eq!(
        entries(&source),
        before,
        "something was created beside the store"
    );
}

#[test]
fn a_store_this_user_may_not_write_is_read_but_not_written() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    let store = store_in(&dir);
    use std::os::unix::fs::PermissionsExt;
    for p in [d.path(), dir.as_path()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o644)).unwrap();
    let before = entries(&dir);
    let as_nobody = |args: &[&str]| {
        let mut c = Command::new("runuser");
        c.args(["-u", "nobody", "--", env!("CARGO_BIN_EXE_patchbench")])
            .args(args)
            .arg("--store")
            .arg(&store)
            .env_remove("PATCHBENCH_STORE");
        c.output().expect("runuser (this test needs root)")
    };
    let out = as_nobody(&["runs"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("patched"));
    let out = as_nobody(&["rm", "1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("read-only (this user may not write the file)"),
        "{err}"
    );
    assert_eq!(entries(&dir), before);
}

#[test]
fn devices_fifos_and_directories_are_refused_before_anything_is_created() {
    let d = tempfile::tempdir().unwrap();
    let device = d.path().join("null-like");
    must(
        Command::new("mknod").arg(&device).args(["c", "1", "3"]),
        "mknod",
    );
    let fifo = d.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let dir = d.path().join("a-dir");
    std::fs::create_dir(&dir).unwrap();
    let before = entries(d.path());
    let dev_before = entries(Path::new("/dev"));
    for (store, kind) in [
        (PathBuf::from("/dev/null"), "a character device"),
        (PathBuf::from("/dev/full"), "a character device"),
        (device.clone(), "a character device"),
        (fifo.clone(), "a FIFO"),
        (dir.clone(), "a directory"),
    ] {
        for args in [
            &["runs"][..],
            &["import", &fixture("ub60-base-1.txt")],
            &["debug-slow-writer", "--tests", "1"],
        ] {
            let out = patchbench(&store)
                .args(args)
                .timeout(Duration::from_secs(60))
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{store:?} {args:?}: {err}");
            assert!(
                err.contains(&format!("is not a regular file ({kind})")),
                "{store:?}: {err}"
            );
            assert_eq!(err.trim().lines().count(), 1, "{err}");
        }
    }
    assert_eq!(entries(d.path()), before);
    assert_eq!(entries(&dir), Vec::<String>::new());
    assert_eq!(
        entries(Path::new("/dev")),
        dev_before,
        "something was created in /dev"
    );
    assert!(Path::new("/dev/null").metadata().unwrap().len() == 0);
}

#[test]
fn a_memory_limit_is_named_not_called_corrupt() {
    let d = tempfile::tempdir().unwrap();
    let store = store_in(d.path());
    // From a limit where everything works down to one where the program cannot even be
    // loaded: every failure in between that is the store's must name memory.
    let mut named = 0;
    let mut kb = 64_000;
    loop {
        let mut c = common::std_patchbench();
        c.args(["runs", "--store"]).arg(&store);
        common::with_limit(&mut c, libc::RLIMIT_AS, kb * 1000);
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("corrupt"), "at {kb} KB: {err}");
        if err.contains("error while loading shared libraries") {
            break;
        }
        // Whether SQLite's allocation or our own fails first at a given limit depends on
        // the build (the binary's size moves the window); either must say memory, exit 2.
        // A main stack that cannot grow under the limit is a SIGSEGV from the kernel,
        // like a loader that cannot map: too little to run at all, not a store error.
        if out.status.code() == Some(2) {
            assert!(err.contains("out of memory"), "at {kb} KB: {err}");
            named += 1;
        }
        kb -= 100;
        assert!(kb > 1000, "the program still loaded at 1 MB");
    }
    assert!(
        named > 0,
        "no limit made the program fail with a named error"
    );
    // The store is still healthy.
    assert_eq!(common::open_store(&store).list(None).unwrap().len(), 2);
}

#[test]
fn a_run_interrupted_before_its_first_result_leaves_no_run() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    let mut child = common::std_patchbench()
        .args([
            "run",
            "pipe",
            "--duration",
            "8",
            "--passes",
            "1",
            "--no-settle",
        ])
        .args(["--copies", "1", "--store"])
        .arg(&store)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The store is opened (and created) before the work starts; the first pass takes 8 s.
    common::wait_until(Duration::from_secs(60), "the store opened", || {
        store.exists()
    });
    std::thread::sleep(Duration::from_millis(1500));
    common::signal(&child, libc::SIGINT);
    let status = common::wait_with_timeout(&mut child, Duration::from_secs(60));
    assert_eq!(status.code(), Some(130));
    let runs = common::open_store(&store).list(None).unwrap();
    assert!(runs.is_empty(), "{runs:?}");
    patchbench(&store)
        .arg("runs")
        .assert()
        .success()
        .stdout(predicates::str::contains("incomplete").not());
}

use predicates::prelude::PredicateBooleanExt;
