//! One measurement at a time on a machine: every measuring command (`run`, `aim7`, `scale`,
//! `model`, and with them a local campaign's or an agent's step, which run those commands)
//! holds an exclusive `flock` on one machine-wide file while it measures, whatever its store.
//!
//! - **The file** is `/run/lock/patchbench-measure.lock` (`/tmp/patchbench-measure.lock` where
//!   there is no `/run/lock`), or `$PATCHBENCH_MEASURE_LOCK`. It is opened read-only (a flock
//!   needs no write access), never through a symbolic link, and made readable by every user,
//!   so the processes of all users on the machine queue on the same lock.
//! - **Waiting** says once who holds it ([`super::lock_holder`]: the pid from `/proc/locks`,
//!   its command line and start). The lock is the kernel's: it is released when its holder exits or dies,
//!   even by SIGKILL, so no stale lock survives a crash.
//! - **`--allow-overlap`** measures even while another measurement runs: the lock is taken if
//!   it is free (so that others still wait for this one), else the run goes on and its record
//!   says whom it overlapped ([`MeasureLock::overlapped`]), and `compare` warns.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

/// The environment variable that names another lock file (tests; a machine whose `/run/lock`
/// is private to a container but whose CPUs are not).
pub const LOCK_ENV: &str = "PATCHBENCH_MEASURE_LOCK";

/// How the line a waiting command prints begins (a campaign keeps its step's such line in its
/// own output, not only in the passing status line).
pub const WAITING: &str = "patchbench: waiting for ";

/// A held (or, with `--allow-overlap`, possibly not held) measurement lock; released on drop.
#[derive(Debug)]
pub struct MeasureLock {
    /// The open lock file, while this process holds the lock.
    _file: Option<File>,
    /// With `--allow-overlap` when another measurement held the lock: who it was.
    pub overlapped: Option<String>,
}

/// The lock this process holds until it exits (a measuring command measures, reports and
/// exits; its record and report take moments, and the kernel releases the lock at exit).
static HELD: std::sync::Mutex<Option<MeasureLock>> = std::sync::Mutex::new(None);

/// Takes the lock as [`acquire`] does and keeps it until this process exits; returns whom
/// the measurement overlaps (with `allow_overlap`), for the record. Taking it again in the
/// same process is a no-op.
pub fn hold_for_process(
    allow_overlap: bool,
    say: &mut dyn FnMut(&str),
) -> anyhow::Result<Option<String>> {
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(lock) = held.as_ref() {
        return Ok(lock.overlapped.clone());
    }
    let lock = acquire(allow_overlap, say)?;
    let overlapped = lock.overlapped.clone();
    *held = Some(lock);
    Ok(overlapped)
}

/// The machine-wide lock file.
pub fn path() -> PathBuf {
    if let Some(p) = std::env::var_os(LOCK_ENV).filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let run_lock = std::path::Path::new("/run/lock");
    if run_lock.is_dir() {
        run_lock.join("patchbench-measure.lock")
    } else {
        PathBuf::from("/tmp/patchbench-measure.lock")
    }
}

/// Takes the measurement lock, waiting while another process holds it (`say` gets one line
/// naming the holder, once); with `allow_overlap`, takes it only if it is free and otherwise
/// goes on, saying and recording whom it overlaps.
pub fn acquire(allow_overlap: bool, say: &mut dyn FnMut(&str)) -> anyhow::Result<MeasureLock> {
    let path = path();
    let file = open(&path)?;
    if try_lock(&file)? {
        return Ok(MeasureLock {
            _file: Some(file),
            overlapped: None,
        });
    }
    let holder =
        super::lock_holder::describe(&file).unwrap_or_else(|| "another process".to_string());
    if allow_overlap {
        say(&format!(
            "patchbench: measuring beside {holder} (--allow-overlap): the record says so, and \
             compare warns"
        ));
        return Ok(MeasureLock {
            _file: None,
            overlapped: Some(holder),
        });
    }
    say(&format!(
        "{WAITING}{holder} to finish measuring: one measurement at a time on this machine \
         (lock {}; --allow-overlap measures beside it)",
        path.display()
    ));
    // A blocking wait: the kernel wakes the waiter as the lock is released, before the
    // holder's campaign can start its next step (a poll lost that race to every next step of a
    // running campaign, which then measured all its steps first).
    loop {
        // SAFETY: flock on a valid descriptor has no other preconditions.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(MeasureLock {
                _file: Some(file),
                overlapped: None,
            });
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(anyhow::anyhow!("cannot lock the measurement lock: {e}"));
        }
    }
}

/// Opens the lock file read-only without following a link, creating it (readable by all)
/// when it is missing.
fn open(path: &std::path::Path) -> anyhow::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let flags = libc::O_NOFOLLOW | libc::O_CLOEXEC;
    let err = |e: std::io::Error| {
        anyhow::anyhow!(
            "cannot open the measurement lock {} ({e}); set {LOCK_ENV} to another file",
            path.display()
        )
    };
    for _ in 0..3 {
        match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(flags)
            .open(path)
        {
            Ok(f) => return Ok(f),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(err(e)),
        }
        // Created exclusively (a second process that loses the race opens the winner's).
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(flags)
            .open(path)
        {
            Ok(f) => {
                use std::os::unix::fs::PermissionsExt;
                // Readable by every user whatever the umask, so all queue on it.
                let _ = f.set_permissions(std::fs::Permissions::from_mode(0o644));
                return Ok(f);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(err(e)),
        }
    }
    Err(err(std::io::Error::other(
        "it keeps appearing and vanishing",
    )))
}

/// Takes the lock without waiting: true when this process holds it now.
fn try_lock(file: &File) -> anyhow::Result<bool> {
    // SAFETY: flock on a valid descriptor has no other preconditions.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EWOULDBLOCK) | Some(libc::EINTR) => Ok(false),
        _ => Err(anyhow::anyhow!("cannot lock the measurement lock: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_waits_for_the_first_and_overlap_names_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.lock");
        let first = open(&file).unwrap();
        assert!(try_lock(&first).unwrap());
        // Another open file description (as another process has) cannot take it.
        let second = open(&file).unwrap();
        assert!(!try_lock(&second).unwrap());
        let me = super::super::lock_holder::describe(&second).unwrap();
        assert!(
            me.starts_with(&format!("pid {} (", std::process::id())),
            "{me}"
        );
        drop(first);
        assert!(try_lock(&second).unwrap());
        // A link is never followed.
        let link = dir.path().join("link.lock");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(open(&link).is_err());
    }
}
