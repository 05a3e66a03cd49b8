//! The harness side of a duet's start barrier, for real, without a guest: `PATCHBENCH_BARRIER`
//! names a pseudo-terminal (raw mode) standing in for the guest's virtio-serial port; the test
//! plays the host, reading each `ready` line and answering `go`. UnixBench waits once per pass,
//! AIM7 once per load point, will-it-scale once per point, each before its measured start; a run
//! whose port never answers stays parked (it does not start measuring on its own); and without
//! the variable nothing is asked.

mod common;

use std::io::{BufRead, Write};
use std::os::fd::OwnedFd;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A raw pseudo-terminal: the host's end and the path of the harness's end.
fn port() -> (std::fs::File, String, OwnedFd) {
    let pty = nix::pty::openpty(None, None).unwrap();
    let mut t = nix::sys::termios::tcgetattr(&pty.slave).unwrap();
    nix::sys::termios::cfmakeraw(&mut t);
    nix::sys::termios::tcsetattr(&pty.slave, nix::sys::termios::SetArg::TCSANOW, &t).unwrap();
    let path = std::fs::read_link(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&pty.slave)
    ))
    .unwrap()
    .display()
    .to_string();
    (std::fs::File::from(pty.master), path, pty.slave)
}

/// Runs `args` with the barrier on a pty, answering `go` to every `ready`; returns the
/// `ready` lines.
fn run_answering(args: &[&str]) -> Vec<String> {
    let (host, path, _keep) = port();
    let dir = tempfile::tempdir().unwrap();
    let mut child = common::std_patchbench()
        .args(args)
        .arg("--dir")
        .arg(dir.path())
        .env("PATCHBENCH_BARRIER", &path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut answer = host.try_clone().unwrap();
    let reader = std::thread::spawn(move || {
        let mut lines = Vec::new();
        let mut r = std::io::BufReader::new(host);
        let mut line = String::new();
        // Ends when the pty closes (EIO once the child and the test's slave are gone).
        while r.read_line(&mut line).is_ok_and(|n| n > 0) {
            if line.starts_with("ready") {
                lines.push(line.trim().to_string());
                answer.write_all(b"go\n").unwrap();
            }
            line.clear();
        }
        lines
    });
    let status = common::wait_with_timeout(&mut child, Duration::from_secs(300));
    assert!(status.success(), "{args:?}: {status}");
    drop(_keep);
    reader.join().unwrap()
}

#[test]
fn unixbench_waits_at_the_barrier_once_per_pass() {
    let lines = run_answering(&[
        "run",
        "syscall",
        "--duration",
        "0.2",
        "--passes",
        "2",
        "--no-settle",
        "--copies",
        "1",
        "--no-store",
    ]);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].contains("pass 1") && lines[1].contains("pass 2"),
        "{lines:?}"
    );
}

#[test]
fn aim7_waits_once_per_load_point_and_will_it_scale_once_per_point() {
    let lines = run_answering(&[
        "aim7",
        "fork_test",
        "--load",
        "1,2",
        "--no-store",
        "--no-start-delay",
    ]);
    assert_eq!(lines, ["ready aim7 load 1", "ready aim7 load 2"]);
    let mut scale = vec![
        "scale",
        "getppid1",
        "--tasks",
        "1,2",
        "--mode",
        "process",
        "--no-store",
    ];
    scale.extend(common::SHORT);
    let lines = run_answering(&scale);
    assert_eq!(lines, ["ready 1 tasks", "ready 2 tasks"]);
}

#[test]
fn an_unanswered_barrier_keeps_the_run_parked_and_no_variable_asks_nothing() {
    let (host, path, _keep) = port();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut child = common::std_patchbench()
        .args([
            "run",
            "syscall",
            "--duration",
            "0.2",
            "--passes",
            "1",
            "--no-settle",
            "--copies",
            "1",
            "--no-store",
            "--json",
        ])
        .arg(&json)
        .arg("--dir")
        .arg(dir.path())
        .env("PATCHBENCH_BARRIER", &path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut r = std::io::BufReader::new(host.try_clone().unwrap());
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    assert!(line.starts_with("ready"), "{line:?}");
    // Unanswered, the pass does not start: well past its 0.2 s the run is still there.
    let parked_until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < parked_until {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run did not wait for go"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (&host).write_all(b"go\n").unwrap();
    let status = common::wait_with_timeout(&mut child, Duration::from_secs(300));
    assert!(status.success());
    assert!(json.exists());
    // Without the variable the same run asks nothing of anyone.
    let out = common::std_patchbench()
        .args([
            "run",
            "syscall",
            "--duration",
            "0.2",
            "--passes",
            "1",
            "--no-settle",
            "--copies",
            "1",
            "--no-store",
            "--dir",
        ])
        .arg(dir.path())
        .env_remove("PATCHBENCH_BARRIER")
        .output()
        .unwrap();
    assert!(out.status.success());
}
