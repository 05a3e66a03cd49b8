//! The files the disk tests need in each private directory, made as AIM's multitask makes
//! them before each load point (aim7-jobs.md §5, §6), outside the timed region:
//!
//! - `tmpa.common`, read by disk_rd, disk_cp and sync_disk_cp: `creat` mode 0666, then B
//!   writes of a 1 KiB block whose byte j is j mod 127 (B = FILESIZE + POOLSIZE / load, so it
//!   is rewritten at every load point);
//! - the `fakeh` tree that disk_src searches (see `fakeh`), made once.
//!
//! AIM makes both whatever the workfile runs, and so does patchbench; they go with the private
//! directory at the end. Before each load point AIM also runs `sync;sync;sync` ([`sync_disks`]).

use super::fakeh;
use super::jobs::{BLOCK, COMMON_FILE, FAKE_TREE};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Writes `tmpa.common` and, if missing, the `fakeh` tree in `private`.
pub fn prepare(private: &Path, disk_blocks: usize) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o666)
        .open(private.join(COMMON_FILE))?;
    let block: Vec<u8> = (0..BLOCK).map(|j| (j % 127) as u8).collect();
    for _ in 0..disk_blocks {
        f.write_all(&block)?;
    }
    let tree = private.join(FAKE_TREE);
    if !tree.exists() {
        fakeh::build(&tree)?;
    }
    Ok(())
}

/// Files tasks made in `private` and did not remove (besides the fixtures).
pub fn leftovers(private: &Path) -> u64 {
    let top = std::fs::read_dir(private)
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name() != COMMON_FILE && e.file_name() != FAKE_TREE)
                .count() as u64
        })
        .unwrap_or(0);
    top + fakeh::strays(&private.join(FAKE_TREE))
}

/// AIM's `system("sync;sync;sync")` before each load point: three sync(2) calls (the same
/// flush, without the shell).
pub fn sync_disks() {
    for _ in 0..3 {
        // SAFETY: sync has no preconditions.
        unsafe { libc::sync() };
    }
}
