//! Recognising a full disk and saying so: an ENOSPC/EDQUOT error, a tool's complaint in
//! words, a file system with almost no room left, and the one message that tells the user to
//! free space or give `--cache DIR` on another disk.

use crate::error::Usage;
use std::path::Path;

/// True when a tool's complaint (git's, a make line) says the disk is full.
pub fn says_disk_full(text: &str) -> bool {
    text.contains("No space left on device") || text.contains("Disk quota exceeded")
}

/// Bytes free for this user on the file system holding `path` (or its nearest existing
/// parent).
pub fn free_bytes(path: &Path) -> Option<u64> {
    let mut p = Some(path);
    while let Some(at) = p {
        if let Ok(s) = nix::sys::statvfs::statvfs(at) {
            return Some(s.blocks_available().saturating_mul(s.fragment_size()));
        }
        p = at.parent();
    }
    None
}

/// True when the file system holding `path` has almost no room left (a tool that does not
/// say ENOSPC in words).
pub fn nearly_full(path: &Path) -> bool {
    free_bytes(path).is_some_and(|f| f < 16 << 20)
}

/// True for an error that says the disk is full.
pub fn is_disk_full(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}

/// The full-disk message (bad input: the user frees space or names another cache).
pub fn disk_full(cache: &Path, what: &str) -> anyhow::Error {
    Usage(format!(
        "the disk holding the build cache {} is full ({what}: no space left on device); free \
         space there or give --cache DIR on another disk (nothing was stored as a build)",
        cache.display()
    ))
    .into()
}

/// `e` as the full-disk message when it is one, else with `context`.
pub fn full_or(cache: &Path, e: std::io::Error, context: &str) -> anyhow::Error {
    if is_disk_full(&e) {
        disk_full(cache, context)
    } else {
        anyhow::anyhow!("{context}: {e}")
    }
}
