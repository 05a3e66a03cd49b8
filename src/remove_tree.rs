//! Removes a directory tree with system calls alone: `openat`, `getdents64` into a buffer on
//! the stack, `unlinkat`. Nothing is allocated, so it works where memory has run out (the
//! standard library's `remove_dir_all` allocates a directory stream and every name, and fails
//! with ENOMEM under a tight address-space limit), and it can run in the exit path taken when
//! an allocation fails. Symbolic links are removed, never followed (`O_NOFOLLOW`, and
//! `O_DIRECTORY` on every directory opened); a tree deeper than [`MAX_DEPTH`] is refused.

use std::ffi::CStr;

/// Directory levels below the top; patchbench's trees are a few levels deep.
pub const MAX_DEPTH: usize = 32;
/// Bytes of directory entries read at a time (per level, on the stack).
const DIRENT_BUF: usize = 2048;

/// What failed: the call and its errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoveError {
    pub call: &'static str,
    pub errno: i32,
}

impl RemoveError {
    fn last(call: &'static str) -> RemoveError {
        RemoveError {
            call,
            errno: errno(),
        }
    }
}

impl std::fmt::Display for RemoveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {}",
            self.call,
            std::io::Error::from_raw_os_error(self.errno)
        )
    }
}

fn errno() -> i32 {
    // SAFETY: reading the thread's errno.
    unsafe { *libc::__errno_location() }
}

/// Closes a descriptor when dropped.
struct Fd(i32);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: closing a descriptor this module opened.
        unsafe { libc::close(self.0) };
    }
}

fn open_dir_at(dirfd: i32, name: *const libc::c_char) -> Result<Fd, RemoveError> {
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: `name` is NUL-terminated (a CStr or a dirent name).
    let fd = unsafe { libc::openat(dirfd, name, flags) };
    if fd < 0 {
        Err(RemoveError::last("open"))
    } else {
        Ok(Fd(fd))
    }
}

/// Empties the directory open at `dir` (its entries, recursively).
fn empty(dir: &Fd, depth: usize) -> Result<(), RemoveError> {
    if depth > MAX_DEPTH {
        return Err(RemoveError {
            call: "descend",
            errno: libc::ELOOP,
        });
    }
    let mut buf = [0u8; DIRENT_BUF];
    loop {
        // SAFETY: getdents64 fills at most buf.len() bytes of the buffer.
        let n = unsafe {
            libc::syscall(
                libc::SYS_getdents64,
                dir.0,
                buf.as_mut_ptr(),
                buf.len() as libc::c_ulong,
            )
        };
        if n < 0 {
            return Err(RemoveError::last("getdents64"));
        }
        if n == 0 {
            return Ok(());
        }
        let mut off = 0usize;
        let mut removed_any = false;
        while off < n as usize {
            // linux_dirent64: u64 ino, i64 off, u16 reclen, u8 type, name (NUL-terminated).
            let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
            let kind = buf[off + 18];
            let name_ptr = buf[off + 19..].as_ptr() as *const libc::c_char;
            // SAFETY: the kernel NUL-terminates every name inside its record.
            let name = unsafe { CStr::from_ptr(name_ptr) };
            off += reclen.max(1);
            let bytes = name.to_bytes();
            if bytes == b"." || bytes == b".." {
                continue;
            }
            remove_entry(dir, name, kind, depth)?;
            removed_any = true;
        }
        if removed_any {
            // Entries were removed while the directory was being read: start again from
            // the beginning rather than trust the stream's position.
            // SAFETY: rewinding our own directory descriptor.
            unsafe { libc::lseek(dir.0, 0, libc::SEEK_SET) };
        }
    }
}

/// Removes one entry of `dir`: a directory after emptying it, anything else with unlink.
fn remove_entry(dir: &Fd, name: &CStr, kind: u8, depth: usize) -> Result<(), RemoveError> {
    let is_dir = match kind {
        libc::DT_DIR => true,
        libc::DT_UNKNOWN => {
            // SAFETY: stat into a local struct, not following a link.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            let r =
                // SAFETY: a directory descriptor we hold, a NUL-terminated name and a stat buffer.
                unsafe { libc::fstatat(dir.0, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
            r == 0 && (st.st_mode & libc::S_IFMT) == libc::S_IFDIR
        }
        _ => false,
    };
    if is_dir {
        let sub = open_dir_at(dir.0, name.as_ptr())?;
        empty(&sub, depth + 1)?;
        drop(sub);
        // SAFETY: removing an (now empty) directory entry of a directory we hold open.
        if unsafe { libc::unlinkat(dir.0, name.as_ptr(), libc::AT_REMOVEDIR) } != 0 {
            return Err(RemoveError::last("rmdir"));
        }
    } else {
        // SAFETY: removing a non-directory entry of a directory we hold open.
        if unsafe { libc::unlinkat(dir.0, name.as_ptr(), 0) } != 0 && errno() != libc::ENOENT {
            return Err(RemoveError::last("unlink"));
        }
    }
    Ok(())
}

/// Removes the tree at `path` (which must be a directory, not a link to one). A path that is
/// already gone is not an error.
pub fn remove_tree(path: &CStr) -> Result<(), RemoveError> {
    let top = match open_dir_at(libc::AT_FDCWD, path.as_ptr()) {
        Ok(fd) => fd,
        Err(e) if e.errno == libc::ENOENT => return Ok(()),
        Err(e) => return Err(e),
    };
    empty(&top, 0)?;
    drop(top);
    // SAFETY: removing the (now empty) top directory by its path.
    if unsafe { libc::rmdir(path.as_ptr()) } != 0 && errno() != libc::ENOENT {
        return Err(RemoveError::last("rmdir"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    fn c(p: &std::path::Path) -> std::ffi::CString {
        std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap()
    }

    #[test]
    fn a_deep_wide_tree_goes_and_links_are_not_followed() {
        let outer = tempfile::tempdir().unwrap();
        let keep = outer.path().join("keep");
        std::fs::create_dir(&keep).unwrap();
        std::fs::write(keep.join("precious"), b"x").unwrap();
        let top = outer.path().join("top");
        let mut d = top.clone();
        for level in 0..6 {
            d = d.join(format!("level{level}"));
            std::fs::create_dir_all(&d).unwrap();
            // More names than one getdents64 buffer holds.
            for f in 0..150 {
                std::fs::write(d.join(format!("file-with-a-long-name-{f:04}")), b"").unwrap();
            }
        }
        std::os::unix::fs::symlink(&keep, top.join("link-to-keep")).unwrap();
        std::os::unix::fs::symlink(&keep, d.join("deep-link")).unwrap();
        remove_tree(&c(&top)).unwrap();
        assert!(!top.exists());
        assert!(
            keep.join("precious").exists(),
            "a link's target is left alone"
        );
        // Gone already: fine. A file or a link instead of a directory: refused.
        remove_tree(&c(&top)).unwrap();
        let link = outer.path().join("link");
        std::os::unix::fs::symlink(&keep, &link).unwrap();
        assert!(remove_tree(&c(&link)).is_err());
        assert!(keep.join("precious").exists());
    }

    #[test]
    fn a_tree_too_deep_is_refused_with_its_call_named() {
        let outer = tempfile::tempdir().unwrap();
        let top = outer.path().join("top");
        let mut d = top.clone();
        for _ in 0..=MAX_DEPTH + 1 {
            d = d.join("d");
        }
        std::fs::create_dir_all(&d).unwrap();
        let e = remove_tree(&c(&top)).unwrap_err();
        assert_eq!((e.call, e.errno), ("descend", libc::ELOOP));
        assert!(e.to_string().starts_with("descend: "), "{e}");
        assert!(top.exists());
        std::fs::remove_dir_all(&top).unwrap();
    }
}
