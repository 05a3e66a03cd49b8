//! The files some jobs need in each private directory before the tasks start: `tmpa.common`
//! (read by disk_rd and disk_cp, one per-task file size long) and the `fakeh` tree (disk_src).
//! Created by the driver outside the timed region and removed when the job's load point ends.

use super::jobs::{disk_src, Fixture, Job, BLOCK, COMMON_FILE, FAKE_TREE};
use std::io::Write;
use std::path::Path;

/// Creates what `job` needs in `private`.
pub fn prepare(job: &Job, private: &Path, disk_blocks: usize) -> std::io::Result<()> {
    match job.fixture {
        Fixture::None => Ok(()),
        Fixture::CommonFile => {
            let mut f = std::fs::File::create(private.join(COMMON_FILE))?;
            let block = vec![b'a'; BLOCK];
            for _ in 0..disk_blocks {
                f.write_all(&block)?;
            }
            f.sync_all()
        }
        Fixture::FakeTree => {
            let root = private.join(FAKE_TREE);
            if root.exists() {
                std::fs::remove_dir_all(&root)?;
            }
            disk_src::build_tree(&root)
        }
    }
}

/// Removes what [`prepare`] created.
pub fn remove(job: &Job, private: &Path) {
    match job.fixture {
        Fixture::None => {}
        Fixture::CommonFile => {
            let _ = std::fs::remove_file(private.join(COMMON_FILE));
        }
        Fixture::FakeTree => {
            let _ = std::fs::remove_dir_all(private.join(FAKE_TREE));
        }
    }
}

/// Entries left in `private` besides the fixtures: files tasks created and did not remove.
pub fn leftovers(private: &Path) -> u64 {
    std::fs::read_dir(private)
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name() != COMMON_FILE && e.file_name() != FAKE_TREE)
                .count() as u64
        })
        .unwrap_or(0)
}
