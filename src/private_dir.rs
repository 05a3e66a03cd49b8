//! The private working directory every command makes inside the user's `--dir`: a fresh random
//! name, mode 0700, removed at the end with everything patchbench wrote in it (and nothing
//! else: the user's directory itself is never emptied).
//!
//! patchbench is built with `panic = "abort"` (see Cargo.toml), so if it ever panics (a bug) no
//! destructor runs. The panic hook installed by [`install_panic_hook`] therefore removes the
//! directories registered here before the process aborts, and only in the process that made
//! them: a forked task that panics leaves them to its driver.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

static REGISTERED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// PID of the process that registered directories (0: none yet).
static OWNER: AtomicI32 = AtomicI32::new(0);

/// A private directory, removed when dropped or closed.
pub struct PrivateDir {
    dir: Option<tempfile::TempDir>,
}

impl PrivateDir {
    /// Creates `<parent>/<prefix>XXXXXX` with mode 0700.
    pub fn create(parent: &Path, prefix: &str) -> std::io::Result<PrivateDir> {
        use std::os::unix::fs::PermissionsExt;
        // tempfile's default is 0777 less the umask (0755 here): ask for 0700 explicitly.
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(parent)?;
        OWNER.store(std::process::id() as i32, Ordering::SeqCst);
        if let Ok(mut r) = REGISTERED.lock() {
            r.push(dir.path().to_path_buf());
        }
        Ok(PrivateDir { dir: Some(dir) })
    }

    pub fn path(&self) -> &Path {
        self.dir.as_ref().map(|d| d.path()).unwrap_or(Path::new(""))
    }

    /// Removes the directory now, reporting an error instead of ignoring it.
    pub fn close(mut self) -> std::io::Result<()> {
        self.unregister();
        match self.dir.take() {
            Some(d) => d.close(),
            None => Ok(()),
        }
    }

    fn unregister(&self) {
        let path = self.path().to_path_buf();
        if let Ok(mut r) = REGISTERED.lock() {
            r.retain(|p| *p != path);
        }
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        self.unregister();
    }
}

/// Prints a panic as one line asking for a report, and removes the registered private
/// directories when the panicking process is the one that made them.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        crate::safe_text::eprint_line(&format!(
            "patchbench: internal error (a bug, please report it): {msg}{place}"
        ));
        if OWNER.load(Ordering::SeqCst) == std::process::id() as i32 {
            if let Ok(dirs) = REGISTERED.try_lock() {
                for d in dirs.iter() {
                    let _ = std::fs::remove_dir_all(d);
                }
            }
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_dirs_are_0700_registered_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let parent = tempfile::tempdir().unwrap();
        let d = PrivateDir::create(parent.path(), "t-").unwrap();
        let path = d.path().to_path_buf();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(REGISTERED.lock().unwrap().contains(&path));
        d.close().unwrap();
        assert!(!path.exists());
        assert!(!REGISTERED.lock().unwrap().contains(&path));
        assert!(parent.path().exists(), "the parent is never removed");
    }
}
