//! What an output option does with each kind of path, through the real binary (as root, as
//! kernel developers run it): a character device made with `mknod` stays a character device
//! (`--json` on a full device fails to write, says so, and replaces nothing; on a null device
//! it succeeds), a FIFO is written in place for the test's reader, a symbolic link is followed
//! and its target replaced (the link stays), `/dev/stdout` writes to standard output (a file
//! redirected there keeps the report too; the command sees /dev through an overlay, so /dev
//! is provably untouched and the machine's never at risk), and a directory or a block device
//! is refused with one line, exit status 2, before any work, for every output option.

mod common;

use common::{patchbench, std_patchbench, SHORT};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// `run syscall` with one short pass, no settle pauses, no store.
const QUICK: [&str; 10] = [
    "run",
    "syscall",
    "--copies",
    "1",
    "--passes",
    "1",
    "--duration",
    "0.5",
    "--no-settle",
    "--no-store",
];

/// Makes a device node at `path` (`kind` S_IFCHR or S_IFBLK) with Linux's numbers.
fn mknod(path: &Path, kind: libc::mode_t, major: u32, minor: u32) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string; mknod only makes a node in the test's own directory.
    let rc = unsafe { libc::mknod(c.as_ptr(), kind | 0o666, libc::makedev(major, minor)) };
    assert_eq!(
        rc,
        0,
        "mknod {} failed ({}): these tests need root (CAP_MKNOD)",
        path.display(),
        std::io::Error::last_os_error()
    );
}

/// The kind of file at `path`, not following a link.
fn kind(path: &Path) -> std::fs::FileType {
    std::fs::symlink_metadata(path).unwrap().file_type()
}

/// Runs `patchbench args` with `--dir work`; returns (status, stdout, stderr).
fn run(args: &[&str], work: &Path) -> (Option<i32>, String, String) {
    let out = std_patchbench()
        .args(args)
        .arg("--dir")
        .arg(work)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn quick_with(option: &str, path: &Path) -> Vec<String> {
    let mut v: Vec<String> = QUICK.iter().map(|s| s.to_string()).collect();
    v.push(option.to_string());
    v.push(path.display().to_string());
    v
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn json_on_a_character_device_leaves_it_a_character_device() {
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full");
    mknod(&full, libc::S_IFCHR, 1, 7);
    let null = dir.path().join("null");
    mknod(&null, libc::S_IFCHR, 1, 3);
    let rdev = |p: &Path| std::os::unix::fs::MetadataExt::rdev(&std::fs::metadata(p).unwrap());
    let (full_rdev, null_rdev) = (rdev(&full), rdev(&null));

    // A full device takes nothing: the run says so and fails, and the device stays.
    let (status, stdout, stderr) = run(&strs(&quick_with("--json", &full)), dir.path());
    assert_eq!(status, Some(2), "{stderr}");
    assert!(
        stderr.contains("--json") && stderr.contains("No space left on device"),
        "{stderr}"
    );
    assert!(
        stdout.contains("System Call Overhead"),
        "the report is still printed: {stdout}"
    );
    assert!(kind(&full).is_char_device(), "--json replaced the device");
    assert_eq!(rdev(&full), full_rdev);

    // A null device takes everything: every output option succeeds and leaves it a device.
    for option in ["--json", "--html", "--csv"] {
        let (status, _, stderr) = run(&strs(&quick_with(option, &null)), dir.path());
        assert_eq!(status, Some(0), "{option}: {stderr}");
        assert!(kind(&null).is_char_device(), "{option} replaced the device");
        assert_eq!(rdev(&null), null_rdev);
    }
    let mut names = common::entries(dir.path());
    names.retain(|n| n != "full" && n != "null");
    assert!(names.is_empty(), "nothing else was made: {names:?}");
}

#[test]
fn a_fifo_is_written_in_place_for_its_reader() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("results.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(&fifo).unwrap())
    };
    let work = tempfile::tempdir().unwrap();
    let (status, _, stderr) = run(&strs(&quick_with("--json", &fifo)), work.path());
    assert_eq!(status, Some(0), "{stderr}");
    let text = reader.join().unwrap();
    // One whole document, written once at the end (not once per finished test).
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["schema"], "patchbench.run/2");
    assert_eq!(doc["tests"].as_array().unwrap().len(), 1);
    assert!(kind(&fifo).is_fifo(), "the FIFO is still a FIFO");
    assert_eq!(common::entries(dir.path()), ["results.fifo"]);
}

#[test]
fn a_link_is_followed_and_its_target_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.json");
    std::fs::write(&real, "stale").unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink("real.json", &link).unwrap();
    let (status, _, stderr) = run(&strs(&quick_with("--json", &link)), dir.path());
    assert_eq!(status, Some(0), "{stderr}");
    assert!(kind(&link).is_symlink(), "the link stays a link");
    assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("real.json"));
    let doc = common::read_json(&real);
    assert_eq!(doc["tests"][0]["name"], "System Call Overhead");
    let mut names = common::entries(dir.path());
    names.sort();
    assert_eq!(names, ["link.json", "real.json"], "no temporary file left");
}

/// A store holding one imported UnixBench run (run 1).
fn store_with_a_run(dir: &Path) -> PathBuf {
    let store = dir.join("s.db");
    patchbench()
        .args(["import", "--store"])
        .arg(&store)
        .arg(common::fixture("ub60-base-1.txt"))
        .assert()
        .success();
    store
}

/// Makes `cmd` see /dev through an overlay whose upper layer is `upper` (in a mount
/// namespace of its own), so that whatever it would do to /dev/stdout lands in `upper`, where
/// the test sees it, and never on the machine's /dev. (patchbench before issue 20 replaced
/// `/dev/stdout` with a regular file when run as root with `--json /dev/stdout`.)
fn with_private_dev(cmd: &mut std::process::Command, upper: &Path, work: &Path) {
    use std::ffi::CString;
    use std::os::unix::process::CommandExt;
    let root = CString::new("/").unwrap();
    let dev = CString::new("/dev").unwrap();
    let overlay = CString::new("overlay").unwrap();
    let options = CString::new(format!(
        "lowerdir=/dev,upperdir={},workdir={}",
        upper.display(),
        work.display()
    ))
    .unwrap();
    // SAFETY: unshare and mount are system calls (async-signal-safe); the strings were made
    // before the fork.
    unsafe {
        cmd.pre_exec(move || {
            let fail = || Err(std::io::Error::last_os_error());
            if libc::unshare(libc::CLONE_NEWNS) != 0 {
                return fail();
            }
            let private = libc::MS_REC | libc::MS_PRIVATE;
            if libc::mount(
                std::ptr::null(),
                root.as_ptr(),
                std::ptr::null(),
                private,
                std::ptr::null(),
            ) != 0
            {
                return fail();
            }
            if libc::mount(
                overlay.as_ptr(),
                dev.as_ptr(),
                overlay.as_ptr(),
                0,
                options.as_ptr().cast(),
            ) != 0
            {
                return fail();
            }
            Ok(())
        });
    }
}

#[test]
fn dev_stdout_and_dash_write_to_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_a_run(dir.path());
    let (upper, work) = (dir.path().join("dev-upper"), dir.path().join("dev-work"));
    std::fs::create_dir(&upper).unwrap();
    std::fs::create_dir(&work).unwrap();
    let spawned = |c: &mut std::process::Command| {
        c.output().unwrap_or_else(|e| {
            panic!(
                "cannot start patchbench with a private /dev (an overlay mount; needs root): {e}"
            )
        })
    };
    for out in ["/dev/stdout", "-", "/proc/self/fd/1"] {
        let mut c = std_patchbench();
        c.args(["export", "1", "-o", out, "--store"]).arg(&store);
        with_private_dev(&mut c, &upper, &work);
        let got = spawned(&mut c);
        assert_eq!(got.status.code(), Some(0), "{out}");
        let doc: serde_json::Value = serde_json::from_slice(&got.stdout).unwrap();
        assert_eq!(doc["kind"], "unixbench", "{out}");
        assert!(
            common::entries(&upper).is_empty(),
            "{out}: /dev was written: {:?}",
            common::entries(&upper)
        );
    }

    // Standard output redirected to a file: written through the descriptor, so the file
    // keeps the report printed before and after it, and is never replaced.
    let file_path = dir.path().join("both.txt");
    let file = std::fs::File::create(&file_path).unwrap();
    let inode = std::os::unix::fs::MetadataExt::ino(&file.metadata().unwrap());
    let mut c = std_patchbench();
    c.args(QUICK)
        .args(["--json", "/dev/stdout", "--dir"])
        .arg(dir.path())
        .stdout(Stdio::from(file));
    with_private_dev(&mut c, &upper, &work);
    let status = spawned(&mut c).status;
    assert_eq!(status.code(), Some(0));
    assert!(
        common::entries(&upper).is_empty(),
        "/dev was written: {:?}",
        common::entries(&upper)
    );
    let text = std::fs::read_to_string(&file_path).unwrap();
    let inode_after = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&file_path).unwrap());
    assert_eq!(inode, inode_after, "the redirected file was replaced");
    assert!(text.contains("\"schema\": \"patchbench.run/2\""), "{text}");
    assert!(text.contains("System Benchmarks Index"), "{text}");
}

/// Every output option of every command, with `path` as its file.
fn every_output(path: &Path, store: &Path) -> Vec<Vec<String>> {
    let p = path.display().to_string();
    let s = store.display().to_string();
    let mut cases: Vec<Vec<&str>> = Vec::new();
    for o in ["--json", "--html", "--csv"] {
        cases.push([&QUICK[..], &[o, &p]].concat());
    }
    let aim7 = [
        "aim7",
        "creat-clo",
        "--load",
        "1",
        "--jobs",
        "1",
        "--no-store",
        "--no-start-delay",
    ];
    for o in ["--json", "--html"] {
        cases.push([&aim7[..], &[o, &p]].concat());
    }
    let scale = [
        "scale",
        "getppid1",
        "--tasks",
        "1",
        "--mode",
        "process",
        "--no-store",
    ];
    for o in ["--json", "--html", "--svg"] {
        cases.push([&scale[..], &SHORT[..], &[o, &p]].concat());
    }
    let model = ["model", "model-setbit", "--tasks", "1", "--no-store"];
    cases.push([&model[..], &SHORT[..], &["--json", &p]].concat());
    cases.push(vec!["export", "1", "--store", &s, "-o", &p]);
    cases
        .into_iter()
        .map(|c| c.into_iter().map(str::to_string).collect())
        .collect()
}

#[test]
fn a_directory_or_a_block_device_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_a_run(dir.path());
    let block = dir.path().join("loop");
    mknod(&block, libc::S_IFBLK, 7, 0);
    let subdir = dir.path().join("sub");
    std::fs::create_dir(&subdir).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    for (path, what) in [(&block, "is a block device"), (&subdir, "is a directory")] {
        for case in every_output(path, &store) {
            let mut c = std_patchbench();
            c.args(&case);
            if case[0] != "export" {
                c.arg("--dir").arg(&work);
            }
            let out = c.output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{case:?}: {err}");
            assert!(err.contains(what), "{case:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{case:?}: {err}");
            assert!(out.stdout.is_empty(), "{case:?}: nothing ran");
            assert!(common::entries(&work).is_empty(), "{case:?}");
        }
    }
    assert!(kind(&block).is_block_device());
    assert!(kind(&subdir).is_dir());
    assert!(common::entries(&subdir).is_empty());
}
