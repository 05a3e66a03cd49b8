//! The build cache: where finished builds live, and the work places that make them.
//!
//! ```text
//! CACHE/                        $XDG_CACHE_HOME/patchbench/builds, or --cache DIR
//!   <id>/                       a finished build (id: 16 hex digits of its key)
//!     build.json                what it is (the `Build`), written last inside the build
//!     boot/                     the image (its distribution name, `KernelSpec::image_file_name`),
//!                               System.map-RELEASE, config-RELEASE
//!     vmlinux                   for profiles
//!     lib/modules/RELEASE/      the modules, when the config has any
//!     build.log                 make's whole output
//!   .work/repos/<tree>.git      our bare repository for a user tree (objects borrowed)
//!   .work/slots/<slot>/src      a build slot: a worktree, its object tree in src/.patchbench-obj
//!   .work/configs/<memo>.json   resolved configs, by what they were resolved from
//!   .work/logs/<id>.log         the log of the last failed build of a key
//!   .work/failed/<id>.txt       a key that did not build, with its message (not built again)
//!   .work/tmp/                  private staging directories (build-PID-*, config-PID-*)
//!   .work/*.lock                locks (flock) of repositories and slots
//! ```
//!
//! A build is staged in a private directory and published by one `rename` into `CACHE/<id>`:
//! a directory there is a finished build, and nothing else ever is (a Ctrl-C, a crash or a
//! full disk leaves a staging directory, which the next build removes once its process is
//! gone). A key is never built twice: a build that finds `CACHE/<id>` uses it.

use super::disk_full::full_or;
use crate::error::Usage;
use crate::private_dir::PrivateDir;
use crate::proc::signals::Signals;
use crate::progress::Progress;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file a finished build is described by.
pub const BUILD_FILE: &str = "build.json";

/// The cache.
#[derive(Debug, Clone)]
pub struct Cache {
    pub root: PathBuf,
}

/// The default cache directory: `$XDG_CACHE_HOME/patchbench/builds`, else
/// `~/.cache/patchbench/builds`.
pub fn default_dir() -> anyhow::Result<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|x| !x.is_empty()) {
        return Ok(PathBuf::from(x).join("patchbench/builds"));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or_else(|| {
            Usage("neither XDG_CACHE_HOME nor HOME is set: give --cache DIR".to_string())
        })?;
    Ok(PathBuf::from(home).join(".cache/patchbench/builds"))
}

/// True for a build id: 16 lowercase hex digits.
pub fn is_id(s: &str) -> bool {
    s.len() == 16
        && s.chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
}

impl Cache {
    /// The cache at `dir` (default: [`default_dir`]), made if missing.
    pub fn open(dir: Option<&Path>) -> anyhow::Result<Cache> {
        let root = match dir {
            Some(d) => d.to_path_buf(),
            None => default_dir()?,
        };
        if root.exists() && !root.is_dir() {
            return Err(Usage(format!("--cache {} is not a directory", root.display())).into());
        }
        let cache = Cache { root };
        for d in ["repos", "slots", "configs", "logs", "tmp"] {
            let p = cache.work().join(d);
            std::fs::create_dir_all(&p)
                .map_err(|e| full_or(&cache.root, e, &format!("cannot make {}", p.display())))?;
        }
        let root = cache
            .root
            .canonicalize()
            .map_err(|e| anyhow::anyhow!("cannot find {}: {e}", cache.root.display()))?;
        Ok(Cache { root })
    }

    /// The cache, only if it exists (for listing).
    pub fn existing(dir: Option<&Path>) -> anyhow::Result<Option<Cache>> {
        let root = match dir {
            Some(d) => d.to_path_buf(),
            None => default_dir()?,
        };
        Ok(root.is_dir().then_some(Cache { root }))
    }

    pub fn work(&self) -> PathBuf {
        self.root.join(".work")
    }

    /// Where build `id` lives once finished.
    pub fn build_dir(&self, id: &str) -> PathBuf {
        self.root.join(id)
    }

    pub fn repo_dir(&self, tree_key: &str) -> PathBuf {
        self.work().join("repos").join(format!("{tree_key}.git"))
    }

    pub fn slot_dir(&self, slot_key: &str) -> PathBuf {
        self.work().join("slots").join(slot_key)
    }

    pub fn config_memo(&self, memo: &str) -> PathBuf {
        self.work().join("configs").join(format!("{memo}.json"))
    }

    pub fn failed_log(&self, id: &str) -> PathBuf {
        self.work().join("logs").join(format!("{id}.log"))
    }

    /// The record of build `id`'s failure to build: its one-line message. A key that failed
    /// is not built again (its commit, config and compiler fail the same way); removing the
    /// record retries it.
    pub fn failed_record(&self, id: &str) -> PathBuf {
        self.work().join("failed").join(format!("{id}.txt"))
    }

    /// The stored failure of build `id`, if it failed before.
    pub fn failed_before(&self, id: &str) -> Option<String> {
        std::fs::read_to_string(self.failed_record(id))
            .ok()
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty())
    }

    /// Remembers that build `id` failed with `message`. Only a shortcut: a record that cannot
    /// be written means the key is built (and fails) again next time.
    pub fn remember_failure(&self, id: &str, message: &str) {
        let path = self.failed_record(id);
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = write_atomic(&path, message.as_bytes());
    }

    /// Takes the lock called `name` if it is free now; None when another process holds it.
    pub fn try_lock(&self, name: &str) -> anyhow::Result<Option<Lock>> {
        let path = self.work().join(format!("{name}.lock"));
        let file = File::create(&path)
            .map_err(|e| anyhow::anyhow!("cannot open {}: {e}", path.display()))?;
        match nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock) {
            Ok(held) => Ok(Some(Lock { _held: held })),
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(None),
            Err((_, e)) => anyhow::bail!("cannot lock {}: {e}", path.display()),
        }
    }

    /// Takes the lock called `name` (`repo-KEY`, `slot-KEY`), waiting (interruptibly) while
    /// another process holds it; `waiting` says what for, once, when it has to wait.
    pub fn lock(
        &self,
        name: &str,
        waiting: &str,
        progress: &Progress,
        signals: &Signals,
    ) -> anyhow::Result<Lock> {
        let path = self.work().join(format!("{name}.lock"));
        let mut said = false;
        loop {
            let file = File::create(&path)
                .map_err(|e| full_or(&self.root, e, &format!("cannot make {}", path.display())))?;
            match nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock) {
                Ok(held) => return Ok(Lock { _held: held }),
                Err((file, nix::errno::Errno::EWOULDBLOCK)) => {
                    if !said {
                        let holder = crate::proc::lock_holder::describe(&file)
                            .map(|h| format!(" ({h})"))
                            .unwrap_or_default();
                        progress.line(&format!("patchbench: waiting: {waiting}{holder}"));
                        said = true;
                    }
                    signals.sleep(Duration::from_millis(250))?;
                }
                Err((_, e)) => anyhow::bail!("cannot lock {}: {e}", path.display()),
            }
        }
    }

    /// A private staging directory for a build (`tmp/build-PID-...`), after removing those
    /// whose process is gone.
    pub fn staging(&self, kind: &str) -> anyhow::Result<PrivateDir> {
        self.sweep();
        let tmp = self.work().join("tmp");
        PrivateDir::create(&tmp, &format!("{kind}-{}-", std::process::id()))
            .map_err(|e| full_or(&self.root, e, "cannot make a staging directory"))
    }

    /// Removes staging directories left by processes that are gone (killed mid-build).
    pub fn sweep(&self) {
        let tmp = self.work().join("tmp");
        let Ok(entries) = std::fs::read_dir(&tmp) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let pid = name.split('-').nth(1).and_then(|p| p.parse::<i32>().ok());
            let Some(pid) = pid else {
                continue;
            };
            let gone =
                pid != std::process::id() as i32 && !Path::new(&format!("/proc/{pid}")).exists();
            if gone {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }

    /// Publishes a staged build as `id` (one rename); when another process published the same
    /// key meanwhile, its build stays and ours is dropped. The directory of the build.
    pub fn publish(&self, staged: PrivateDir, id: &str) -> anyhow::Result<PathBuf> {
        let dest = self.build_dir(id);
        if dest.join(BUILD_FILE).is_file() {
            drop(staged);
            return Ok(dest);
        }
        let from = staged.path().to_path_buf();
        sync_tree(&from).map_err(|e| full_or(&self.root, e, "cannot flush the build"))?;
        staged.rename_to(&dest).map_err(|e| {
            anyhow::anyhow!(
                "cannot publish {} as {}: {e}",
                from.display(),
                dest.display()
            )
        })?;
        if let Ok(d) = File::open(&self.root) {
            let _ = d.sync_all();
        }
        Ok(dest)
    }

    /// The finished builds, oldest first.
    pub fn list(&self) -> Vec<super::Build> {
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return Vec::new();
        };
        let mut out: Vec<super::Build> = entries
            .flatten()
            .filter(|e| is_id(&e.file_name().to_string_lossy()))
            .filter_map(|e| super::Build::read(&e.path()).ok())
            .collect();
        out.sort_by(|a, b| a.built_at.cmp(&b.built_at));
        out
    }
}

/// A held lock; released when dropped.
pub struct Lock {
    _held: nix::fcntl::Flock<File>,
}

impl Lock {
    /// Lets every process started while this lock is held inherit its descriptor, so the lock
    /// stays held until the last of them is gone, not only until this process ends: a build
    /// slot whose patchbench was killed (SIGKILL) stays locked while its make's compilers,
    /// reparented to init, still write into the object directory.
    pub fn held_by_children_too(&self) -> anyhow::Result<()> {
        use std::os::fd::AsRawFd;
        // SAFETY: F_SETFD on a descriptor this lock owns.
        if unsafe { libc::fcntl(self._held.as_raw_fd(), libc::F_SETFD, 0) } != 0 {
            anyhow::bail!(
                "cannot let the build inherit its slot's lock: {}",
                std::io::Error::last_os_error()
            );
        }
        Ok(())
    }
}

/// Writes a file atomically: a temporary beside it, flushed, renamed over it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Flushes every file below `dir` to disk (before the rename that publishes it).
fn sync_tree(dir: &Path) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let t = e.file_type()?;
        if t.is_dir() {
            sync_tree(&e.path())?;
        } else if t.is_file() {
            File::open(e.path())?.sync_all()?;
        }
    }
    File::open(dir)?.sync_all()
}

/// Bytes used below `dir`.
pub fn size_of(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => size_of(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map(|m| m.len()).unwrap_or(0),
            _ => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_sixteen_hex_digits() {
        assert!(is_id("0123456789abcdef"));
        assert!(!is_id("0123456789ABCDEF"));
        assert!(!is_id(".work"));
        assert!(!is_id("0123456789abcde"));
    }

    #[test]
    fn staging_dirs_of_dead_processes_are_swept_and_publishing_is_one_rename() {
        let d = tempfile::tempdir().unwrap();
        let cache = Cache::open(Some(d.path())).unwrap();
        // A process that is gone left a staging directory.
        let dead = cache.work().join("tmp/build-999999999-abc");
        std::fs::create_dir_all(dead.join("boot")).unwrap();
        let staged = cache.staging("build").unwrap();
        assert!(!dead.exists());
        std::fs::write(staged.path().join(BUILD_FILE), "{}").unwrap();
        let at = cache.publish(staged, "0123456789abcdef").unwrap();
        assert!(at.join(BUILD_FILE).is_file());
        assert!(crate::private_dir::PrivateDir::create(&cache.work().join("tmp"), "x-").is_ok());
        // The same key published again keeps the first.
        let again = cache.staging("build").unwrap();
        std::fs::write(again.path().join(BUILD_FILE), "second").unwrap();
        let path = again.path().to_path_buf();
        cache.publish(again, "0123456789abcdef").unwrap();
        assert_eq!(std::fs::read_to_string(at.join(BUILD_FILE)).unwrap(), "{}");
        assert!(!path.exists());
    }
}
