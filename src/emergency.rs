//! What a patchbench process still does when it must stop at once, where no destructor will
//! run (an allocation failed, or a bug panicked under `panic = "abort"`): kill the task
//! groups it started and reap them, remove the private directories it made, say so in one
//! line, and exit. Nothing on this path allocates: the registries are fixed arrays of atomics
//! (process group ids, and pointers to the directories' NUL-terminated paths, made when they
//! were registered), directories are removed with system calls alone
//! ([`crate::remove_tree::remove_tree`]), and the line is written with write(2) from
//! buffers on the stack.
//!
//! Only the process that registered something cleans it up: a child forked from it (between
//! fork and exec) shares the registries' memory but not their ownership.

use crate::remove_tree::{remove_tree, RemoveError};
use std::ffi::{CStr, CString};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, Ordering};
use std::time::Duration;

/// Task groups alive at once (one per pass or load point; a few at most).
const GROUP_SLOTS: usize = 16;
/// Private directories alive at once.
const DIR_SLOTS: usize = 16;

#[allow(clippy::declare_interior_mutable_const)]
const NO_GROUP: AtomicI32 = AtomicI32::new(0);
#[allow(clippy::declare_interior_mutable_const)]
const NO_DIR: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

static GROUPS: [AtomicI32; GROUP_SLOTS] = [NO_GROUP; GROUP_SLOTS];
static DIRS: [AtomicPtr<libc::c_char>; DIR_SLOTS] = [NO_DIR; DIR_SLOTS];
/// The process that registered groups or directories (0: none yet).
static OWNER: AtomicI32 = AtomicI32::new(0);
/// Set on the way out, so a failure inside the clean-up ends at once.
static DYING: AtomicBool = AtomicBool::new(false);

fn pid() -> i32 {
    // SAFETY: getpid has no preconditions.
    unsafe { libc::getpid() }
}

fn own() {
    OWNER.store(pid(), Ordering::SeqCst);
}

/// Remembers a task group to kill on the way out. False when every slot is taken (the group
/// is then only stopped by its owner's normal paths).
pub fn register_group(pgid: libc::pid_t) -> bool {
    if pgid <= 0 {
        return false;
    }
    own();
    GROUPS.iter().any(|slot| {
        slot.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    })
}

/// Forgets a task group (its members are reaped).
pub fn unregister_group(pgid: libc::pid_t) {
    for slot in &GROUPS {
        let _ = slot.compare_exchange(pgid, 0, Ordering::SeqCst, Ordering::SeqCst);
    }
}

/// Remembers a directory to remove on the way out. False when it cannot be (a NUL byte in
/// the path, every slot taken).
pub fn register_dir(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    own();
    let raw = c.into_raw();
    for slot in &DIRS {
        if slot
            .compare_exchange(
                std::ptr::null_mut(),
                raw,
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .is_ok()
        {
            return true;
        }
    }
    // SAFETY: `raw` came from into_raw above and was stored nowhere.
    drop(unsafe { CString::from_raw(raw) });
    false
}

/// Forgets a directory (removed, or to be removed by its owner's normal path).
pub fn unregister_dir(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    for slot in &DIRS {
        let p = slot.load(Ordering::SeqCst);
        if p.is_null() {
            continue;
        }
        // SAFETY: a registered pointer is a live CString until taken out of its slot.
        if unsafe { CStr::from_ptr(p) }.to_bytes() != bytes {
            continue;
        }
        if slot
            .compare_exchange(p, std::ptr::null_mut(), Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            // SAFETY: taken out of the slot by this call, so freed once.
            drop(unsafe { CString::from_raw(p) });
        }
    }
}

/// True when `path` is registered (for tests).
pub fn is_registered_dir(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    DIRS.iter().any(|slot| {
        let p = slot.load(Ordering::SeqCst);
        // SAFETY: as in unregister_dir.
        !p.is_null() && unsafe { CStr::from_ptr(p) }.to_bytes() == path.as_os_str().as_bytes()
    })
}

fn nap(ms: u64) {
    let d = Duration::from_millis(ms);
    let t = libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    };
    // SAFETY: sleeping on a local timespec.
    unsafe { libc::nanosleep(&t, std::ptr::null_mut()) };
}

/// Kills every registered group and reaps its members (waiting at most a few seconds);
/// returns how many groups there were.
fn stop_groups() -> usize {
    let mut stopped = 0;
    for slot in &GROUPS {
        let pgid = slot.swap(0, Ordering::SeqCst);
        if pgid <= 0 {
            continue;
        }
        stopped += 1;
        // SAFETY: a registered group still has unreaped members of ours holding its id.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
        for _ in 0..500 {
            let mut status = 0;
            // SAFETY: reaping our own children of that group.
            let r = unsafe { libc::waitpid(-pgid, &mut status, libc::WNOHANG) };
            if r > 0 {
                continue;
            }
            if r < 0 {
                break;
            }
            nap(10);
        }
    }
    stopped
}

/// A directory that could not be removed: its path (a registered CString, now leaked) and why.
#[derive(Clone, Copy)]
pub struct Left {
    pub path: *const libc::c_char,
    pub error: RemoveError,
}

/// What [`clean_up`] did.
#[derive(Clone, Copy, Default)]
pub struct Cleaned {
    /// Task groups killed and reaped.
    pub groups: usize,
    /// Directories removed.
    pub dirs: usize,
    /// The first directory left behind.
    pub left: Option<Left>,
}

/// Stops the registered groups and removes the registered directories, when this process
/// registered them. Allocates nothing.
pub fn clean_up() -> Cleaned {
    let mut done = Cleaned::default();
    if OWNER.load(Ordering::SeqCst) != pid() {
        return done;
    }
    done.groups = stop_groups();
    let mut left = None;
    for slot in &DIRS {
        let p = slot.swap(std::ptr::null_mut(), Ordering::SeqCst);
        if p.is_null() {
            continue;
        }
        // SAFETY: taken out of its slot: ours alone, and never freed (the process is ending).
        let path = unsafe { CStr::from_ptr(p) };
        let mut result = remove_tree(path);
        // A killed task's last file operations may still be finishing: try again briefly.
        for _ in 0..5 {
            if result.is_ok() {
                break;
            }
            nap(50);
            result = remove_tree(path);
        }
        match (result, left) {
            (Ok(()), _) => done.dirs += 1,
            (Err(error), None) => left = Some(Left { path: p, error }),
            (Err(_), Some(_)) => {}
        }
    }
    done.left = left;
    done
}

/// Writes `parts` to standard error with write(2).
pub fn write_stderr(parts: &[&[u8]]) {
    for part in parts {
        let mut rest = *part;
        while !rest.is_empty() {
            // SAFETY: writing a valid byte slice.
            let n = unsafe { libc::write(2, rest.as_ptr().cast(), rest.len()) };
            if n <= 0 {
                if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return;
            }
            rest = &rest[n as usize..];
        }
    }
}

/// `n` in decimal, in `buf`.
pub fn decimal(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
}

/// Cleans up, writes `line` (its parts, then what was left behind, then a newline; nothing
/// when `line` is empty) and exits with `status`, without allocating. A second call (a
/// failure during the clean-up) exits at once.
pub fn exit(line: &[&[u8]], status: i32) -> ! {
    if DYING.swap(true, Ordering::SeqCst) {
        // SAFETY: leaving at once.
        unsafe { libc::_exit(status) };
    }
    let done = clean_up();
    if !line.is_empty() {
        write_stderr(line);
        if done.groups > 0 {
            write_stderr(&[b"; stopped every task"]);
        }
        if done.dirs > 0 {
            write_stderr(&[b"; removed the temporary directories"]);
        }
        if let Some(l) = done.left {
            let mut num = [0u8; 20];
            // SAFETY: a registered path, NUL-terminated and never freed (see clean_up).
            let path = unsafe { CStr::from_ptr(l.path) }.to_bytes();
            write_stderr(&[
                b"; could not remove ",
                path,
                b" (",
                l.error.call.as_bytes(),
                b": errno ",
                decimal(l.error.errno as u64, &mut num),
                b"): remove it by hand",
            ]);
        }
        write_stderr(&[b"\n"]);
    }
    // SAFETY: ending the process without running anything else.
    unsafe { libc::_exit(status) }
}

/// The line a bus error (SIGBUS) ends the process with.
const BUS_ERROR: &[u8] =
    b"patchbench: error: a memory-mapped file could not be accessed (SIGBUS): \
most likely the result store's shared-memory index (the store's -shm file: made immutable or \
read-only, or its file system full or failing); what the store had committed is kept: fix \
that file (chattr -i, free space) and run the command again (`campaign resume` continues a \
campaign)";

extern "C" fn on_bus_error(_sig: libc::c_int) {
    exit(&[BUS_ERROR], 2)
}

/// From now on a SIGBUS (a memory-mapped file that can no longer be read or written, such as a
/// SQLite store's `-shm` index made immutable mid-run) ends the process with one line, after
/// the clean-up, instead of a core dump; exit status 2. On the alternate signal stack.
pub fn install_bus_error_handler() {
    // SAFETY: a handler that only does what `exit` does (no allocation), installed once.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_bus_error as extern "C" fn(libc::c_int) as usize;
        action.sa_flags = libc::SA_ONSTACK;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_without_allocating() {
        let mut b = [0u8; 20];
        assert_eq!(decimal(0, &mut b), b"0");
        assert_eq!(decimal(1234567, &mut b), b"1234567");
        assert_eq!(decimal(u64::MAX, &mut b), b"18446744073709551615");
    }

    #[test]
    fn directories_register_and_unregister_by_path() {
        let d = tempfile::tempdir().unwrap();
        assert!(register_dir(d.path()));
        assert!(is_registered_dir(d.path()));
        unregister_dir(d.path());
        assert!(!is_registered_dir(d.path()));
    }
}
