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
//!   says whom it overlapped (`system.extra.measured_beside`), and `compare` warns.

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use std::fs::File;
use std::path::PathBuf;

/// The environment variable that names another lock file (tests; a machine whose `/run/lock`
/// is private to a container but whose CPUs are not).
pub const LOCK_ENV: &str = "PATCHBENCH_MEASURE_LOCK";

/// How the line a waiting command prints begins (a campaign keeps its step's such line in its
/// own output, not only in the passing status line).
pub const WAITING: &str = "patchbench: waiting for ";

/// The lock this process holds until it exits (a measuring command measures, reports and
/// exits; its record and report take moments, and the kernel releases the lock at exit), and
/// whom it measured beside when `--allow-overlap` found the lock taken (then it holds none).
#[allow(clippy::type_complexity)]
static HELD: std::sync::Mutex<Option<(Option<Flock<File>>, Option<String>)>> =
    std::sync::Mutex::new(None);

/// Takes the measurement lock and keeps it until this process exits, waiting while another
/// process holds it (`say` gets one line naming the holder, once); with `allow_overlap`,
/// takes it only if it is free, and otherwise goes on, saying whom it overlaps and returning
/// that for the record. Taking it again in the same process is a no-op.
pub fn hold_for_process(
    allow_overlap: bool,
    say: &mut dyn FnMut(&str),
) -> anyhow::Result<Option<String>> {
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, overlapped)) = held.as_ref() {
        return Ok(overlapped.clone());
    }
    let (lock, overlapped) = acquire(allow_overlap, say)?;
    *held = Some((lock, overlapped.clone()));
    Ok(overlapped)
}

/// The measurement lock held by a value and released when it is dropped: a `vm` step's, whose
/// guest measures while this process only waits for QEMU. It holds no lock inside a process
/// that holds the lock for itself already ([`hold_for_process`]).
pub struct Held {
    _lock: Option<Flock<File>>,
}

/// Takes the lock for as long as the returned value lives, waiting while another process
/// holds it: `say` gets one line naming the holder, and `pause` runs between tries (a short
/// sleep that an interruption ends: its error ends the wait, returned as the inner `Err`).
/// Polling leaves the lock to the commands already blocked on it, which the kernel wakes the
/// moment it is released, so a campaign's next step never jumps the queue.
pub fn hold_while<E>(
    say: &mut dyn FnMut(&str),
    pause: &mut dyn FnMut() -> Result<(), E>,
) -> anyhow::Result<Result<Held, E>> {
    if HELD.lock().unwrap_or_else(|e| e.into_inner()).is_some() {
        return Ok(Ok(Held { _lock: None }));
    }
    hold_while_at(&path(), say, pause)
}

/// [`hold_while`] on the lock file `path`.
fn hold_while_at<E>(
    path: &std::path::Path,
    say: &mut dyn FnMut(&str),
    pause: &mut dyn FnMut() -> Result<(), E>,
) -> anyhow::Result<Result<Held, E>> {
    let mut file = open(path)?;
    let mut said = false;
    loop {
        match try_lock(file)? {
            Ok(held) => return Ok(Ok(Held { _lock: Some(held) })),
            Err(f) => {
                if !said {
                    let holder = super::lock_holder::describe(&f)
                        .unwrap_or_else(|| "another process".to_string());
                    say(&format!(
                        "{WAITING}{holder} to finish measuring: one measurement at a time on \
                         this machine (lock {})",
                        path.display()
                    ));
                    said = true;
                }
                if let Err(e) = pause() {
                    return Ok(Err(e));
                }
                file = f;
            }
        }
    }
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

/// The lock (None when `allow_overlap` found it taken) and whom it overlaps.
fn acquire(
    allow_overlap: bool,
    say: &mut dyn FnMut(&str),
) -> anyhow::Result<(Option<Flock<File>>, Option<String>)> {
    let path = path();
    let file = match try_lock(open(&path)?)? {
        Ok(held) => return Ok((Some(held), None)),
        Err(file) => file,
    };
    let holder =
        super::lock_holder::describe(&file).unwrap_or_else(|| "another process".to_string());
    if allow_overlap {
        say(&format!(
            "patchbench: measuring beside {holder} (--allow-overlap): the record says so, and \
             compare warns"
        ));
        return Ok((None, Some(holder)));
    }
    say(&format!(
        "{WAITING}{holder} to finish measuring: one measurement at a time on this machine \
         (lock {}; --allow-overlap measures beside it)",
        path.display()
    ));
    // A blocking wait: the kernel wakes the waiter as the lock is released, before the
    // holder's campaign can start its next step (a poll lost that race to every next step of a
    // running campaign, which then measured all its steps first).
    let mut file = file;
    loop {
        match Flock::lock(file, FlockArg::LockExclusive) {
            Ok(held) => return Ok((Some(held), None)),
            Err((f, Errno::EINTR)) => file = f,
            Err((_, e)) => anyhow::bail!("cannot lock the measurement lock: {e}"),
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

/// Takes the lock without waiting: the held lock, or the file back when another process
/// holds it.
fn try_lock(file: File) -> anyhow::Result<Result<Flock<File>, File>> {
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(held) => Ok(Ok(held)),
        Err((file, Errno::EWOULDBLOCK | Errno::EINTR)) => Ok(Err(file)),
        Err((_, e)) => anyhow::bail!("cannot lock the measurement lock: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_waits_for_the_first_and_overlap_names_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.lock");
        let first = try_lock(open(&file).unwrap()).unwrap().unwrap();
        // Another open file description (as another process has) cannot take it.
        let second = try_lock(open(&file).unwrap()).unwrap().unwrap_err();
        let me = super::super::lock_holder::describe(&second).unwrap();
        assert!(
            me.starts_with(&format!("pid {} (", std::process::id())),
            "{me}"
        );
        drop(first);
        assert!(try_lock(second).unwrap().is_ok());
        // A held lock makes `hold_while` wait, saying so once, until its pause gives up.
        let first = try_lock(open(&file).unwrap()).unwrap().unwrap();
        let (mut said, mut pauses) = (Vec::new(), 0);
        let waited = hold_while_at(&file, &mut |l| said.push(l.to_string()), &mut || {
            pauses += 1;
            if pauses < 3 {
                Ok(())
            } else {
                Err("interrupted")
            }
        })
        .unwrap();
        assert!(matches!(waited, Err("interrupted")));
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].starts_with(WAITING), "{said:?}");
        drop(first);
        let held = hold_while_at(&file, &mut |_| {}, &mut || Err::<(), _>("not asked")).unwrap();
        assert!(held.is_ok());
        // A link is never followed.
        let link = dir.path().join("link.lock");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(open(&link).is_err());
    }
}
