//! The build cache's work area measured and pruned (`patchbench builds [--prune]`).
//!
//! The work area (`CACHE/.work`) holds what builds are made with, not what they give: the
//! build slots (a worktree and make's objects per tree, what makes the next build of that
//! tree incremental: about 1.5 GB for a tiny kernel), our repositories of the user's trees
//! (commits of applied patches; the objects are borrowed), the logs of failed builds and
//! their records, the memo of resolved configs and staging directories.
//!
//! `--prune` removes the slots not in use (each taken with its lock without waiting: a slot a
//! build is using is left and named), the failed builds' logs and records, and the staging
//! left by dead processes. The repositories and config memos stay (small, and they let a
//! cached build be found without a checkout). `--older-than DAYS` also removes finished
//! builds built before then: each is first renamed into the private staging area (so no
//! reader ever sees half a build), then removed.

use super::cache::{Cache, Lock};

/// The work area's parts and their sizes in bytes.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct WorkArea {
    pub slots: u64,
    pub repos: u64,
    /// Failed builds' logs and records, config memos, staging.
    pub other: u64,
}

impl WorkArea {
    /// Measures `cache`'s work area.
    pub fn of(cache: &Cache) -> WorkArea {
        let work = cache.work();
        let slots = super::cache::size_of(&work.join("slots"));
        let repos = super::cache::size_of(&work.join("repos"));
        let all = super::cache::size_of(&work);
        WorkArea {
            slots,
            repos,
            other: all.saturating_sub(slots + repos),
        }
    }

    pub fn total(&self) -> u64 {
        self.slots + self.repos + self.other
    }
}

/// What a prune did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Pruned {
    pub freed_bytes: u64,
    pub slots_removed: usize,
    /// Slots a running build holds, left as they are.
    pub slots_in_use: Vec<String>,
    pub builds_removed: Vec<String>,
}

/// Prunes `cache` (see the module's doc); with `older_than_days`, also the finished builds
/// built more than that many days ago.
pub fn prune(cache: &Cache, older_than_days: Option<f64>) -> anyhow::Result<Pruned> {
    let mut out = Pruned::default();
    cache.sweep();
    std::fs::create_dir_all(cache.work().join("tmp"))
        .map_err(|e| anyhow::anyhow!("cannot make the cache's staging area: {e}"))?;
    let slots = cache.work().join("slots");
    for e in std::fs::read_dir(&slots).into_iter().flatten().flatten() {
        let key = e.file_name().to_string_lossy().into_owned();
        let Some(_held): Option<Lock> = cache.try_lock(&format!("slot-{key}"))? else {
            out.slots_in_use.push(key);
            continue;
        };
        let bytes = super::cache::size_of(&e.path());
        std::fs::remove_dir_all(e.path())
            .map_err(|err| anyhow::anyhow!("cannot remove {}: {err}", e.path().display()))?;
        out.freed_bytes += bytes;
        out.slots_removed += 1;
    }
    for dir in ["logs", "failed"] {
        let d = cache.work().join(dir);
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let bytes = e.metadata().map(|m| m.len()).unwrap_or(0);
            if std::fs::remove_file(e.path()).is_ok() {
                out.freed_bytes += bytes;
            }
        }
    }
    if let Some(days) = older_than_days {
        for b in cache.list() {
            let old = crate::clock::secs_since(&b.built_at).is_some_and(|s| s > days * 86400.0);
            if !old {
                continue;
            }
            let bytes = super::cache::size_of(&b.dir);
            // Unpublished by one rename, then removed.
            let staged = cache.staging("prune")?;
            let moved = staged.path().join("build");
            std::fs::rename(&b.dir, &moved)
                .map_err(|e| anyhow::anyhow!("cannot take build {} out of the cache: {e}", b.id))?;
            staged.close().map_err(|e| {
                anyhow::anyhow!("cannot remove build {} (taken out of the cache): {e}", b.id)
            })?;
            out.freed_bytes += bytes;
            out.builds_removed.push(b.id.clone());
        }
    }
    // The slots' worktrees are gone: the repositories forget them.
    for e in std::fs::read_dir(cache.work().join("repos"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let _ = super::tree::run(
            super::tree::git(&e.path()).args(["worktree", "prune"]),
            "git worktree prune",
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_slots_and_logs_go_a_slot_in_use_stays() {
        let d = tempfile::tempdir().unwrap();
        let cache = Cache::open(Some(d.path())).unwrap();
        let work = cache.work();
        for (slot, bytes) in [("aaaa", 3000), ("bbbb", 5000)] {
            let obj = work.join("slots").join(slot).join("src/.patchbench-obj");
            std::fs::create_dir_all(&obj).unwrap();
            std::fs::write(obj.join("vmlinux"), vec![0u8; bytes]).unwrap();
        }
        std::fs::create_dir_all(work.join("logs")).unwrap();
        std::fs::write(work.join("logs/0123456789abcdef.log"), "error\n").unwrap();
        let before = WorkArea::of(&cache);
        assert_eq!(before.slots, 8000);
        // A build is using slot bbbb.
        let busy = cache.try_lock("slot-bbbb").unwrap().unwrap();
        let p = prune(&cache, None).unwrap();
        assert_eq!(p.slots_removed, 1);
        assert_eq!(p.slots_in_use, vec!["bbbb".to_string()]);
        assert_eq!(p.freed_bytes, 3000 + 6);
        assert!(!work.join("slots/aaaa").exists());
        assert!(work
            .join("slots/bbbb/src/.patchbench-obj/vmlinux")
            .is_file());
        assert!(!work.join("logs/0123456789abcdef.log").exists());
        drop(busy);
        assert_eq!(prune(&cache, None).unwrap().slots_removed, 1);
        assert_eq!(WorkArea::of(&cache).slots, 0);
    }
}
