//! The modules of a kernel patchbench built (`campaign start --tree --executor kexec`): a boot
//! of that kernel on this machine's root finds its modules in `/lib/modules/<release>`, so
//! they are copied there from the build before the first reboot, with a marker file naming
//! the build. A `/lib/modules/<release>` without the marker is someone else's (a package, a
//! `make modules_install` by hand): it is never overwritten, and the campaign is refused
//! before anything changes. One patchbench installed is replaced by the new build's.

use std::path::{Path, PathBuf};

/// The marker a modules directory patchbench installed carries (holding the build's id).
pub const MARKER: &str = ".patchbench-build";

/// Where `release`'s modules go below `root` (`/lib/modules`), checked: free, or installed by
/// patchbench. The error says what to do.
pub fn target(root: &Path, release: &str) -> Result<PathBuf, String> {
    let dir = root.join(release);
    if dir.exists() && !dir.join(MARKER).is_file() {
        return Err(format!(
            "{} exists and patchbench did not install it: a kexec campaign installs its built \
             kernel's modules there and never overwrites another's; remove it (or build \
             another ref) and start again",
            dir.display()
        ));
    }
    Ok(dir)
}

/// Copies the build's modules `from` into `root/release` (replacing a copy patchbench made
/// before), the marker written last; returns the directory.
pub fn install(root: &Path, release: &str, from: &Path, build_id: &str) -> Result<PathBuf, String> {
    let dir = target(root, release)?;
    let tmp = root.join(format!(".{release}.patchbench-tmp"));
    let _ = std::fs::remove_dir_all(&tmp);
    copy_tree(from, &tmp).map_err(|e| {
        let _ = std::fs::remove_dir_all(&tmp);
        format!(
            "cannot copy the modules {} to {}: {e}",
            from.display(),
            tmp.display()
        )
    })?;
    std::fs::write(tmp.join(MARKER), format!("{build_id}\n"))
        .map_err(|e| format!("cannot write {}: {e}", tmp.join(MARKER).display()))?;
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .map_err(|e| format!("cannot replace {}: {e}", dir.display()))?;
    }
    std::fs::rename(&tmp, &dir).map_err(|e| format!("cannot install {}: {e}", dir.display()))?;
    Ok(dir)
}

/// Copies a directory tree (files, directories, symbolic links as links).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let t = e.file_type()?;
        if t.is_dir() {
            copy_tree(&src, &dst)?;
        } else if t.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src)?, &dst)?;
        } else {
            std::fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_are_installed_with_a_marker_and_never_over_someone_elses() {
        let d = tempfile::tempdir().unwrap();
        let build = d.path().join("build/lib/modules/6.1.192-pbabc");
        std::fs::create_dir_all(build.join("kernel/fs")).unwrap();
        std::fs::write(build.join("modules.dep"), "kernel/fs/x.ko:\n").unwrap();
        std::fs::write(build.join("kernel/fs/x.ko"), "module").unwrap();
        let root = d.path().join("lib/modules");
        std::fs::create_dir_all(&root).unwrap();
        let at = install(&root, "6.1.192-pbabc", &build, "0123456789abcdef").unwrap();
        assert_eq!(
            std::fs::read_to_string(at.join("kernel/fs/x.ko")).unwrap(),
            "module"
        );
        assert_eq!(
            std::fs::read_to_string(at.join(MARKER)).unwrap(),
            "0123456789abcdef\n"
        );
        // Ours: replaced by the next build's.
        std::fs::write(build.join("modules.dep"), "new\n").unwrap();
        install(&root, "6.1.192-pbabc", &build, "fedcba9876543210").unwrap();
        assert_eq!(
            std::fs::read_to_string(at.join("modules.dep")).unwrap(),
            "new\n"
        );
        // Someone else's: refused, untouched.
        let theirs = root.join("6.1.0-27-amd64");
        std::fs::create_dir_all(&theirs).unwrap();
        std::fs::write(theirs.join("modules.dep"), "theirs").unwrap();
        let e = install(&root, "6.1.0-27-amd64", &build, "0123456789abcdef").unwrap_err();
        assert!(e.contains("did not install it"), "{e}");
        assert_eq!(
            std::fs::read_to_string(theirs.join("modules.dep")).unwrap(),
            "theirs"
        );
        assert!(target(&root, "6.1.0-27-amd64").is_err());
        assert!(target(&root, "7.0").is_ok());
    }
}
