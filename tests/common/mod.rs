//! Helpers shared by the integration tests: the binaries with a clean environment, fixtures,
//! JSON files, directory listings, the processes of a run, waiting with a limit, lowered
//! resource limits, a run bounded in time in a session of its own (with what it left running),
//! a tmpfs for the full-disk cases, a store's fingerprint, synthetic records for the store
//! tests, Debian's kernel for the vm tests ([`test_kernel`]), Debian's kernel source as a git
//! tree with a shared build cache ([`kernel_tree`]); `pg_server` starts a real
//! PostgreSQL server.
#![allow(dead_code)]

pub mod kernel_tree;
pub mod pg_server;
pub mod test_kernel;

use patchbench::record::{Direction, Kind, Metric, RunRecord};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Short sampling for the harness commands: two 0.25 s samples, no warm-up.
pub const SHORT: [&str; 6] = [
    "--duration",
    "0.5",
    "--warmup",
    "0",
    "--sample-interval",
    "0.25",
];

fn clean(c: &mut std::process::Command) {
    c.env("PATCHBENCH_WORKER", env!("CARGO_BIN_EXE_patchbench-worker"));
    c.env(
        "PATCHBENCH_AIM7_TASK",
        env!("CARGO_BIN_EXE_patchbench-aim7-task"),
    );
    c.env_remove("PATCHBENCH_STORE");
    // A measurement lock of its own for every command a test starts: the tests of one binary
    // run side by side, and the machine-wide lock would queue them one behind another
    // (tests/run.rs tests the lock itself, with a file it shares on purpose).
    c.env(
        patchbench::proc::measure_lock::LOCK_ENV,
        private_measure_lock(),
    );
    // No patchbench a test starts on this machine may load a kernel or reboot it (that would
    // end every test at once): kexec is tested inside a QEMU guest (tests/campaign_kexec.rs).
    c.env(patchbench::campaign::kexec::load::FORBID_ENV, "1");
    // libpq's variables, which a PostgreSQL store reads: none from the test's environment.
    for var in [
        "PGHOST",
        "PGPORT",
        "PGUSER",
        "PGPASSWORD",
        "PGDATABASE",
        "PGSSLMODE",
        "PGSSLROOTCERT",
        "PGPASSFILE",
        "PGCONNECT_TIMEOUT",
        "PGAPPNAME",
    ] {
        c.env_remove(var);
    }
}

/// The prefix of a test process's directory of measurement lock files in the temp directory.
const MEASURE_LOCKS: &str = "pb-test-measure-locks-";

/// A measurement lock file no other command uses: one per command in this test process's
/// directory of them (zero-byte files, in the temp directory; the directory is world-readable
/// and the files are 0644). A test binary exits without destructors, so the directories of
/// test processes that are gone are removed when the next one makes its own.
pub fn private_measure_lock() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| {
        remove_dead_measure_lock_dirs();
        let dir = std::env::temp_dir().join(format!("{MEASURE_LOCKS}{}", std::process::id()));
        if std::fs::create_dir_all(&dir).is_ok() {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755));
        }
        dir
    });
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("{n}.lock"));
    // Made here, readable by all: a command a test runs as another user opens it read-only,
    // as it would open the machine's lock file that root made.
    if let Ok(f) = std::fs::File::create(&path) {
        use std::os::unix::fs::PermissionsExt;
        let _ = f.set_permissions(std::fs::Permissions::from_mode(0o644));
    }
    path
}

/// Removes the lock directories of test processes that no longer run (only ours: the name's
/// prefix and a process id with no /proc entry).
fn remove_dead_measure_lock_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(MEASURE_LOCKS))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// `patchbench` for assert_cmd, with the worker and the AIM7 task program found and no store
/// from the environment.
pub fn patchbench() -> assert_cmd::Command {
    assert_cmd::Command::from_std(std_patchbench())
}

/// The same as a plain `std::process::Command`, for tests that signal the run.
pub fn std_patchbench() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_patchbench"));
    clean(&mut c);
    c
}

/// Runs `cmd` to its end and returns its output, failing the test with its stderr unless it
/// succeeded.
pub fn succeed(cmd: &mut std::process::Command) -> std::process::Output {
    let out = cmd.output().expect("the command starts");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// [`std_patchbench`] with `store` as its store (PATCHBENCH_STORE).
pub fn patchbench_with_store(store: &Path) -> std::process::Command {
    let mut c = std_patchbench();
    c.env("PATCHBENCH_STORE", store);
    c
}

/// The path of a file in tests/fixtures.
pub fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The bytes of a gzip-compressed fixture (`tests/fixtures/NAME`).
pub fn gunzipped(name: &str) -> Vec<u8> {
    use std::io::Read;
    let path = fixture(name);
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap())
        .read_to_end(&mut bytes)
        .unwrap_or_else(|e| panic!("{path}: not gzip ({e})"));
    bytes
}

/// The names in a directory.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Every path below a directory.
pub fn walk(d: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(d) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            }
            out.push(p);
        }
    }
    out
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The permission bits of a file.
pub fn mode_of(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

fn other_pids() -> impl Iterator<Item = u32> {
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(move |pid| *pid != me)
}

/// Processes whose command line mentions `marker` (forked tasks carry the driver's command
/// line with its unique --dir).
pub fn processes_mentioning(marker: &str) -> Vec<u32> {
    other_pids()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(marker))
                .unwrap_or(false)
        })
        .collect()
}

/// Processes whose working directory is below `dir` (UnixBench workers).
pub fn processes_in(dir: &str) -> Vec<u32> {
    other_pids()
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd"))
                .is_ok_and(|cwd| cwd.to_string_lossy().contains(dir))
        })
        .collect()
}

/// Waits until `cond` holds, failing the test after `limit`.
pub fn wait_until(limit: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !cond() {
        assert!(Instant::now() < deadline, "{what} within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for a child to exit, killing it and failing after `limit`.
pub fn wait_with_timeout(
    child: &mut std::process::Child,
    limit: Duration,
) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("patchbench did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `signal` to a child.
pub fn signal(child: &std::process::Child, signal: i32) {
    // SAFETY: signalling a child this test started.
    unsafe { libc::kill(child.id() as i32, signal) };
}

/// A tmpfs with `opts` mounted on a fresh directory, unmounted when dropped. The full-disk and
/// read-only cases need one; where it cannot be mounted the test FAILS, saying why and what to
/// do (a test that cannot run must not pass): the tests run as root (CI does), with util-linux's
/// `mount` and a kernel with tmpfs.
pub struct Tmpfs {
    _parent: tempfile::TempDir,
    pub path: PathBuf,
}

impl Tmpfs {
    pub fn mount(opts: &str) -> Tmpfs {
        let parent = tempfile::tempdir().expect("a temporary directory for a tmpfs");
        let path = parent.path().join("mnt");
        std::fs::create_dir(&path).expect("a mount point for a tmpfs");
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", opts, "tmpfs"])
            .arg(&path)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| {
                panic!(
                    "this test mounts a tmpfs, but `mount` cannot be run ({e}): install util-linux"
                )
            });
        assert!(
            out.status.success(),
            "this test mounts a tmpfs (-o {opts}) on {}, which failed ({}): {}; run the tests as \
             root (mounting needs CAP_SYS_ADMIN), e.g. `sudo scripts/test.sh`, on a kernel \
             with tmpfs",
            path.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
        Tmpfs {
            _parent: parent,
            path,
        }
    }

    /// Fills the filesystem: writes a file until the disk refuses more.
    pub fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.path.join("filler")).unwrap();
        let block = vec![0u8; 4096];
        while f.write_all(&block).is_ok() {}
        let _ = f.sync_all();
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.path)
            .status();
    }
}

/// A record with the given `unixbench.score` values (test, value) at 1 copy.
pub fn sample_record(label: &str, values: &[(&str, f64)]) -> RunRecord {
    RunRecord {
        label: Some(label.to_string()),
        started_at: "2025-01-01T00:00:00Z".to_string(),
        finished_at: "2025-01-01T00:01:00Z".to_string(),
        metrics: values
            .iter()
            .map(|(test, v)| {
                Metric::new(
                    "unixbench.score",
                    &[("test", test.to_string()), ("copies", "1".to_string())],
                    *test,
                    "lps",
                    Direction::HigherIsBetter,
                    *v,
                    vec![*v * 0.99, *v, *v * 1.01],
                )
            })
            .collect(),
        ..RunRecord::new(
            Kind::Unixbench,
            patchbench::sysinfo::SystemInfo::collect(),
            &(),
        )
    }
}

/// Checks that a result document's fingerprint carries the noise check the command took as it
/// started (`system.noise`, schema `patchbench.check/1`), describing `dir` as the file tests'
/// directory.
pub fn assert_noise_check(doc: &serde_json::Value, dir: &Path) {
    let noise = &doc["system"]["noise"];
    assert_eq!(noise["schema"], "patchbench.check/1", "{noise}");
    assert_eq!(noise["sample_secs"], 0.25, "{noise}");
    let findings = noise["findings"].as_array().unwrap();
    assert!(findings.len() >= 15, "{noise}");
    for id in ["load", "steal", "governor", "aslr", "dir"] {
        assert!(findings.iter().any(|f| f["id"] == id), "no {id} in {noise}");
    }
    let dir = std::fs::canonicalize(dir).unwrap();
    assert_eq!(noise["dir"], dir.display().to_string(), "{noise}");
    assert!(
        noise["activity"]["total_ticks"].as_u64().unwrap() > 0,
        "{noise}"
    );
}

/// The metric of a result document with this name and these params.
pub fn metric<'a>(
    doc: &'a serde_json::Value,
    name: &str,
    params: &[(&str, &str)],
) -> &'a serde_json::Value {
    doc["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name && params.iter().all(|(k, v)| m["params"][*k] == *v))
        .unwrap_or_else(|| panic!("no metric {name} {params:?}"))
}

/// Starts `cmd` with stderr piped, waits for the `count`-th stderr line containing `needle`,
/// sends `sig`, reads stderr to the end (a closed pipe would fail the run's last message) and
/// returns the exit status and the lines after the signal.
pub fn interrupt_after(
    cmd: &mut std::process::Command,
    needle: &str,
    count: usize,
    sig: i32,
) -> (std::process::ExitStatus, Vec<String>) {
    use std::io::BufRead;
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = 0;
    for line in lines.by_ref().map_while(Result::ok) {
        if line.contains(needle) {
            seen += 1;
            if seen == count {
                break;
            }
        }
    }
    assert_eq!(seen, count, "never saw {needle:?} {count} times");
    signal(&child, sig);
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    (wait_with_timeout(&mut child, Duration::from_secs(30)), rest)
}

/// Makes `cmd` start with RLIMIT_NPROC (`ulimit -u`) lowered to `limit`.
pub fn with_process_limit(cmd: &mut std::process::Command, limit: u64) {
    with_limit(cmd, libc::RLIMIT_NPROC, limit);
}

/// The users the process-limit tests run patchbench as (the kernel exempts root, and
/// CAP_SYS_ADMIN and CAP_SYS_RESOURCE, from RLIMIT_NPROC, and so does patchbench's check): one
/// per test, with no other process, since RLIMIT_NPROC counts every process of the user and
/// the tests run at the same time.
pub mod unprivileged {
    pub const AIM7: u32 = 61001;
    pub const RUN: u32 = 61002;
    pub const SCALE: u32 = 61003;
    pub const FAULTS: u32 = 61004;
    /// tests/perf_stat.rs: a user without CAP_PERFMON.
    pub const PERF_STAT: u32 = 61005;
}

/// Makes `cmd` run as user and group `uid` (no supplementary groups, so no capabilities),
/// after any limit set before; `paths` are given to that user first, so it may work there.
/// Needs root (the tests run as root).
pub fn as_unprivileged(cmd: &mut std::process::Command, uid: u32, paths: &[&Path]) {
    use std::os::unix::process::CommandExt;
    for p in paths {
        std::os::unix::fs::chown(p, Some(uid), Some(uid))
            .unwrap_or_else(|e| panic!("chown {}: {e} (these tests need root)", p.display()));
    }
    // SAFETY: setgroups, setgid and setuid are async-signal-safe; nothing else runs between
    // fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(uid) != 0
                || libc::setuid(uid) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Makes `cmd` start with `resource` lowered to `value` (soft and hard limit).
pub fn with_limit(
    cmd: &mut std::process::Command,
    resource: libc::__rlimit_resource_t,
    value: u64,
) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: value,
                rlim_max: value,
            };
            if libc::setrlimit(resource, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Makes `cmd` start with only the soft limit of `resource` lowered (root keeps the right to
/// act above it).
pub fn with_soft_limit(
    cmd: &mut std::process::Command,
    resource: libc::__rlimit_resource_t,
    value: u64,
) {
    use std::os::unix::process::CommandExt;
    // SAFETY: as in `with_limit`.
    unsafe {
        cmd.pre_exec(move || {
            let mut lim = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::getrlimit(resource, &mut lim);
            lim.rlim_cur = value;
            if libc::setrlimit(resource, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
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

/// Runs `cmd` in a new session, for at most `bound`; kills the whole session on time-out and
/// counts what was still alive in it when the command ended.
pub fn run_bounded(cmd: &mut std::process::Command, bound: Duration) -> Outcome {
    use std::os::unix::process::CommandExt;
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
fn drain(mut r: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = r.read_to_end(&mut v);
        String::from_utf8_lossy(&v).into_owned()
    })
}

/// Live (not zombie) processes whose session id is `sid`.
pub fn session_members(sid: i32) -> usize {
    session_pids(sid).len()
}

/// The live (not zombie) processes of session `sid`, with their command names.
pub fn session_pids(sid: i32) -> Vec<(i32, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let (head, rest) = stat.rsplit_once(')')?;
            let name = head.split_once('(')?.1.to_string();
            let f: Vec<&str> = rest.split_whitespace().collect();
            // After the command name: state, ppid, pgrp, session.
            (f.len() > 3 && f[0] != "Z" && f[3] == sid.to_string()).then_some((pid, name))
        })
        .collect()
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

/// The children of process `pid`, in the order they were forked.
pub fn children(pid: u32) -> Vec<i32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// A store file as a location.
pub fn file(path: impl AsRef<Path>) -> patchbench::store::Location {
    patchbench::store::Location::File(path.as_ref().to_path_buf())
}

/// Opens the store file at `path` for reading (read-write when it may be written).
pub fn open_store(path: impl AsRef<Path>) -> patchbench::store::db::Store {
    patchbench::store::db::Store::open(&file(path), patchbench::store::Access::Read, None).unwrap()
}

/// Opens the store file at `path`, creating it if needed.
pub fn create_store(path: impl AsRef<Path>) -> patchbench::store::db::Store {
    patchbench::store::db::Store::open(&file(path), patchbench::store::Access::Create, None)
        .unwrap()
}
