//! The private working directory every command makes inside the user's `--dir`: a fresh random
//! name, mode 0700, removed at the end with everything patchbench wrote in it (and nothing
//! else: the user's directory itself is never emptied).
//!
//! patchbench is built with `panic = "abort"` (see Cargo.toml), so if it ever panics (a bug) no
//! destructor runs, and an allocation that fails ends the process at once
//! (`crate::out_of_memory`). Every private directory is therefore registered with
//! `crate::emergency`, whose exit path (the panic hook installed by [`install_panic_hook`], the
//! allocator's) removes it, only in the process that made it: a forked task leaves it to its
//! driver. The removal (`crate::remove_tree`) allocates nothing, so it works when memory has run out,
//! and [`PrivateDir::close`] says when it failed.
//!
//! A SIGKILL leaves the directory behind: its name carries its process's id
//! (`PREFIX<pid>-XXXXXX`), so [`sweep_dead`] can later remove the ones whose process is gone
//! from this host, and only those (made by this user, mode 0700, of a dead process).

use std::path::{Path, PathBuf};

/// A private directory, removed when dropped or closed.
pub struct PrivateDir {
    path: Option<PathBuf>,
}

impl PrivateDir {
    /// Creates `<parent>/<prefix><pid>-XXXXXX` with mode 0700.
    pub fn create(parent: &Path, prefix: &str) -> std::io::Result<PrivateDir> {
        use std::os::unix::fs::PermissionsExt;
        // tempfile's default is 0777 less the umask (0755 here): ask for 0700 explicitly.
        // tempfile only picks the name and makes the directory: removing it is ours (below),
        // with system calls alone, so that it works when memory is short and says why not.
        let path = tempfile::Builder::new()
            .prefix(&format!("{prefix}{}-", std::process::id()))
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(parent)?
            .keep();
        crate::emergency::register_dir(&path);
        Ok(PrivateDir { path: Some(path) })
    }

    pub fn path(&self) -> &Path {
        self.path.as_deref().unwrap_or(Path::new(""))
    }

    /// Moves the directory to `dest` (one `rename`, on the same file system) and keeps it
    /// there: it is no longer removed by patchbench (a staged build published into the
    /// cache). On failure it stays private and is removed as before.
    pub fn rename_to(mut self, dest: &Path) -> std::io::Result<()> {
        let Some(p) = self.path.as_deref() else {
            return Err(std::io::Error::other("the private directory is gone"));
        };
        std::fs::rename(p, dest)?;
        if let Some(p) = self.path.take() {
            crate::emergency::unregister_dir(&p);
        }
        Ok(())
    }

    /// Removes the directory now; an error names the directory, the call that failed and
    /// why, and the directory is then left for the user to remove.
    pub fn close(mut self) -> anyhow::Result<()> {
        match self.path.take() {
            Some(p) => remove_now(&p),
            None => Ok(()),
        }
    }
}

/// Removes the private directories in `parent` that a patchbench process now gone from this
/// host left behind (a SIGKILL, a power loss): named `patchbench-...-<pid>-XXXXXX`, a
/// directory (not a link) of this user with mode 0700, whose process does not exist. Returns
/// what it removed; what it could not remove is left.
pub fn sweep_dead(parent: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let Ok(rd) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let mut removed = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = dead_owner(&name) else {
            continue;
        };
        let path = e.path();
        let Ok(m) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !m.is_dir() || m.uid() != me || m.permissions().mode() & 0o777 != 0o700 {
            continue;
        }
        if !crate::sysinfo::process_gone(pid) || pid == std::process::id() as i32 {
            continue;
        }
        if remove_now(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// The process id in a private directory's name `patchbench-...-<pid>-XXXXXX`.
fn dead_owner(name: &str) -> Option<i32> {
    if !name.starts_with("patchbench-") {
        return None;
    }
    let (head, random) = name.rsplit_once('-')?;
    if random.len() != 6 || !random.chars().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    let (_, pid) = head.rsplit_once('-')?;
    if pid.is_empty() || !pid.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok().filter(|p| *p > 1)
}

/// Removes `path` (our private directory) and forgets it.
fn remove_now(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    crate::emergency::unregister_dir(path);
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    crate::remove_tree::remove_tree(&c).map_err(|e| {
        anyhow::anyhow!(
            "cannot remove the private directory {} ({e}); remove it by hand: rm -r {}",
            path.display(),
            path.display()
        )
    })
}

impl Drop for PrivateDir {
    /// Removes the directory; an error is lost here: call [`PrivateDir::close`] to see it.
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            let _ = remove_now(&p);
        }
    }
}

/// Prints a panic as one line asking for a report, and (in the process that made them) stops
/// the task groups and removes the private directories before the process aborts.
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
        crate::emergency::clean_up();
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_private_directories_of_dead_processes_are_swept() {
        use std::os::unix::fs::PermissionsExt;
        let parent = tempfile::tempdir().unwrap();
        let mine = PrivateDir::create(parent.path(), "patchbench-campaign-").unwrap();
        // A pid no process has (above pid_max's largest possible value).
        let dead = parent.path().join("patchbench-campaign-99999999-AbC123");
        let foreign = parent.path().join("patchbench-pg-Zx81qq");
        let not_private = parent.path().join("patchbench-99999998-Qw12er");
        for d in [&dead, &foreign, &not_private] {
            std::fs::create_dir(d).unwrap();
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        std::fs::set_permissions(&not_private, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dead.join("step-1.json"), b"{}").unwrap();
        assert_eq!(sweep_dead(parent.path()), vec![dead.clone()]);
        assert!(!dead.exists());
        assert!(mine.path().exists() && foreign.exists() && not_private.exists());
        assert_eq!(dead_owner("patchbench-7719-abcdef"), Some(7719));
        assert_eq!(dead_owner("patchbench-vm-12-abcdef"), Some(12));
        assert_eq!(dead_owner("patchbench-vm-abcdef"), None);
    }

    #[test]
    fn private_dirs_are_0700_registered_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let parent = tempfile::tempdir().unwrap();
        let d = PrivateDir::create(parent.path(), "t-").unwrap();
        let path = d.path().to_path_buf();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(crate::emergency::is_registered_dir(&path));
        std::fs::create_dir_all(path.join("a/b")).unwrap();
        std::fs::write(path.join("a/b/f"), b"x").unwrap();
        d.close().unwrap();
        assert!(!path.exists());
        assert!(!crate::emergency::is_registered_dir(&path));
        assert!(parent.path().exists(), "the parent is never removed");
    }
}
