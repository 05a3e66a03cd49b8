//! Helpers shared by the fault and fuzz tests: running the real binary with lowered limits in
//! a session of its own and a time bound, finding what it left running, mounting a small
//! tmpfs (root only), and fingerprinting a store.

#![allow(dead_code)]

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The patchbench binary built for these tests.
pub fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("patchbench")
}

/// A patchbench command with a store of its own.
pub fn patchbench(store: &Path) -> Command {
    let mut c = Command::new(bin());
    c.env("PATCHBENCH_STORE", store);
    c
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// What a bounded run gave.
#[derive(Debug)]
pub struct Outcome {
    /// The exit status, None when killed by a signal (or by the time bound).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// Killed because it ran past the bound.
    pub timed_out: bool,
    pub seconds: f64,
    /// Processes of its session still alive after it ended (before they were killed).
    pub left_behind: usize,
}

/// Lowers a resource limit (soft and hard) in the child before it execs.
pub fn limit(cmd: &mut Command, resource: libc::__rlimit_resource_t, value: u64) {
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let r = libc::rlimit {
                rlim_cur: value,
                rlim_max: value,
            };
            if libc::setrlimit(resource, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Lowers only the soft limit (root keeps the right to act above it).
pub fn soft_limit(cmd: &mut Command, resource: libc::__rlimit_resource_t, value: u64) {
    // SAFETY: as in `limit`.
    unsafe {
        cmd.pre_exec(move || {
            let mut r = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::getrlimit(resource, &mut r);
            r.rlim_cur = value;
            if libc::setrlimit(resource, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Runs `cmd` in a new session, for at most `bound`; kills the whole session on time-out and
/// counts what was still alive in it when the command ended.
pub fn run_bounded(cmd: &mut Command, bound: Duration) -> Outcome {
    // SAFETY: setsid is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("start patchbench");
    let sid = child.id() as i32;
    let out = child.stdout.take().expect("stdout");
    let err = child.stderr.take().expect("stderr");
    let (o, e) = (drain(out), drain(err));
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > bound {
            timed_out = true;
            // SAFETY: signalling the session's process group we created.
            unsafe { libc::kill(-sid, libc::SIGKILL) };
            break child.wait().expect("wait");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let seconds = start.elapsed().as_secs_f64();
    // Children die with their parent (PR_SET_PDEATHSIG) or are reaped; give them a moment.
    let mut left_behind = session_members(sid);
    for _ in 0..100 {
        if left_behind == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
        left_behind = session_members(sid);
    }
    if left_behind > 0 {
        // SAFETY: as above; do not leave anything running after the test.
        unsafe { libc::kill(-sid, libc::SIGKILL) };
    }
    Outcome {
        code: status.code(),
        stdout: o.join().unwrap_or_default(),
        stderr: e.join().unwrap_or_default(),
        timed_out,
        seconds,
        left_behind,
    }
}

/// Reads a pipe to its end in a thread.
fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = r.read_to_end(&mut v);
        String::from_utf8_lossy(&v).into_owned()
    })
}

/// Live (not zombie) processes whose session id is `sid`.
pub fn session_members(sid: i32) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            let Some((_, rest)) = stat.rsplit_once(')') else {
                return false;
            };
            let f: Vec<&str> = rest.split_whitespace().collect();
            // After the command name: state, ppid, pgrp, session.
            f.len() > 3 && f[0] != "Z" && f[3] == sid.to_string()
        })
        .count()
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A tmpfs of `size` (e.g. "1m") mounted on a fresh directory; unmounted when dropped.
pub struct Tmpfs {
    pub dir: tempfile::TempDir,
}

impl Tmpfs {
    /// None (with a message) when not root or mounting is not allowed here.
    pub fn mount(size: &str) -> Option<Tmpfs> {
        if !is_root() {
            eprintln!("skipped: mounting a small tmpfs needs root");
            return None;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped: cannot mount a tmpfs here");
            return None;
        }
        Some(Tmpfs { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills the filesystem until a write fails with ENOSPC.
    pub fn fill(&self, name: &str) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.path().join(name)).expect("fill file");
        let block = vec![0u8; 4096];
        while f.write_all(&block).is_ok() {}
        let _ = f.sync_all();
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// The store's bytes and which of its side files exist: equal fingerprints mean the store was
/// not touched.
pub fn fingerprint(store: &Path) -> (Option<Vec<u8>>, bool, bool) {
    let side = |ext: &str| {
        let mut p = store.as_os_str().to_owned();
        p.push(ext);
        Path::new(&p).exists()
    };
    (std::fs::read(store).ok(), side("-wal"), side("-shm"))
}
