//! The one way patchbench writes an output file (`--json`, `--csv`, `--svg`, `export -o`):
//! into a temporary file in the same directory, flushed to disk, then renamed over the target,
//! so a kill or a full disk never leaves half a file. Every output file gets one mode: an
//! existing file keeps its mode, a new one gets 0644 less the umask.

use anyhow::Context;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The mode a new output file gets before the umask.
pub const NEW_FILE_MODE: u32 = 0o644;

/// The process's umask (from /proc/self/status; without it, read and restored at once).
pub fn umask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(m) = status
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
    {
        return m;
    }
    // SAFETY: umask only swaps the process's file creation mask; it is restored at once.
    unsafe {
        let old = libc::umask(0o022);
        libc::umask(old);
        old as u32
    }
}

/// The mode `path` will have once written: its present mode, or [`NEW_FILE_MODE`] less the
/// umask.
pub fn mode_for(path: &Path) -> u32 {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => m.permissions().mode() & 0o7777,
        _ => NEW_FILE_MODE & !umask(),
    }
}

fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Writes `bytes` to `path` atomically with the output mode.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let shown = path.display();
    let mode = mode_for(path);
    let mut tmp = tempfile::Builder::new()
        .prefix(".patchbench-")
        .tempfile_in(directory_of(path))
        .with_context(|| format!("cannot write {shown}"))?;
    tmp.write_all(bytes)
        .and_then(|_| {
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(mode))
        })
        .and_then(|_| tmp.as_file().sync_all())
        .with_context(|| format!("cannot write {shown}"))?;
    tmp.persist(path)
        .with_context(|| format!("cannot write {shown}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_gets_0644_less_the_umask_and_an_old_one_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        write_atomic(&path, b"one").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, NEW_FILE_MODE & !umask());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&path, b"two").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o640);
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left behind");
    }
}
