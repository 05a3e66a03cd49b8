//! AIM's fake source tree `fakeh` and its `dirlist`, which disk_src searches (aim7-jobs.md §3).
//! AIM ships it as `fakeh.tar`; the driver builds the same layout in each private directory.
//!
//! Eight leaf directories (the top, `bin`, `usr/spool/uucp/XTMP`,
//! `usr/ja/sun.rex628/src/man/man1`, `usr/steiny/bin/src/bied`, `usr/tony`,
//! `usr/dist/Tuner/sccs/source`, `usr/ja.apr17/port/tools/compress`) hold 40 empty files
//! `fake00`..`fake39` each; the intermediate directories on their paths hold nothing else.
//! `dirlist` lists the tree line by line (382 lines, 10,726 bytes, as AIM's): 57 names marked
//! `s ` to stat (all exist) and 43 marked `c ` to create (`notexistK`, K in 1..7, none exist),
//! spread over the leaves as in AIM's list; a few existing files are not listed, as in AIM's.
//! `usr/spool/uucp/TM.` is listed too; the list does not say what it is, so it is made an
//! empty directory (no test touches it).

use std::fmt::Write as _;
use std::path::Path;

/// Files per leaf directory.
const FILES: u8 = 40;

/// One leaf directory and how `dirlist` lists it.
struct Leaf {
    /// Directories the list names before this leaf's files (new intermediates, then the leaf).
    dirs: &'static [&'static str],
    /// `fakeNN` marked `s ` (to stat).
    stats: &'static [u8],
    /// `notexistK` marked `c ` (to create).
    creates: &'static [u8],
    /// `fakeNN` that exist but are not listed.
    unlisted: &'static [u8],
}

const ALL_STATS: &[u8] = &[4, 8, 14, 18, 24, 28, 34, 38];
const ALL_CREATES: &[u8] = &[1, 2, 3, 4, 5, 6, 7];

const LEAVES: &[Leaf] = &[
    Leaf {
        dirs: &["bin"],
        stats: &[4, 8, 14, 18, 24, 38],
        creates: ALL_CREATES,
        unlisted: &[28, 34],
    },
    Leaf {
        dirs: &[
            "usr",
            "usr/spool",
            "usr/spool/uucp",
            "usr/spool/uucp/TM.",
            "usr/spool/uucp/XTMP",
        ],
        stats: &[4, 8, 14, 18, 28, 34, 38],
        creates: &[1, 2, 3, 5, 6, 7],
        unlisted: &[24],
    },
    Leaf {
        dirs: &[
            "usr/ja",
            "usr/ja/sun.rex628",
            "usr/ja/sun.rex628/src",
            "usr/ja/sun.rex628/src/man",
            "usr/ja/sun.rex628/src/man/man1",
        ],
        stats: &[4, 14, 18, 24, 28, 34, 38],
        creates: &[1, 3, 4, 5, 6, 7],
        unlisted: &[8],
    },
    Leaf {
        dirs: &[
            "usr/steiny",
            "usr/steiny/bin",
            "usr/steiny/bin/src",
            "usr/steiny/bin/src/bied",
        ],
        stats: &[4, 8, 18, 24, 28, 38],
        creates: &[1, 2, 3, 4, 5, 7],
        unlisted: &[14, 34],
    },
    Leaf {
        dirs: &["usr/tony"],
        stats: &[4, 8, 14, 18, 24, 28, 38],
        creates: &[1, 3, 4, 6, 7],
        unlisted: &[34],
    },
    Leaf {
        dirs: &[
            "usr/dist",
            "usr/dist/Tuner",
            "usr/dist/Tuner/sccs",
            "usr/dist/Tuner/sccs/source",
        ],
        stats: ALL_STATS,
        creates: &[1, 2, 3, 5, 6, 7],
        unlisted: &[],
    },
    Leaf {
        dirs: &[
            "usr/ja.apr17",
            "usr/ja.apr17/port",
            "usr/ja.apr17/port/tools",
            "usr/ja.apr17/port/tools/compress",
        ],
        stats: ALL_STATS,
        creates: ALL_CREATES,
        unlisted: &[],
    },
];

/// Lists `fake01`..`fake39` of directory `prefix` (`./` or `./bin/`).
fn list_files(out: &mut String, prefix: &str, stats: &[u8], unlisted: &[u8]) {
    for f in 1..FILES {
        if unlisted.contains(&f) {
            continue;
        }
        let mark = if stats.contains(&f) { "s " } else { "" };
        let _ = writeln!(out, "{mark}{prefix}fake{f:02}");
    }
}

/// The text of AIM's `dirlist`.
pub fn dirlist() -> String {
    let mut out = String::from(".\n./fake00\n./dirlist\n");
    for leaf in LEAVES {
        for d in leaf.dirs {
            let _ = writeln!(out, "./{d}");
        }
        let dir = leaf.dirs.last().copied().unwrap_or(".");
        let _ = writeln!(out, "./{dir}/fake00");
        for k in leaf.creates {
            let _ = writeln!(out, "c ./{dir}/notexist{k}");
        }
        list_files(&mut out, &format!("./{dir}/"), leaf.stats, leaf.unlisted);
    }
    list_files(&mut out, "./", ALL_STATS, &[]);
    out
}

/// Builds the tree and its `dirlist` under `root` (which must not exist yet).
pub fn build(root: &Path) -> std::io::Result<()> {
    std::fs::create_dir(root)?;
    let leaves = std::iter::once(".").chain(LEAVES.iter().filter_map(|l| l.dirs.last().copied()));
    for leaf in LEAVES {
        for d in leaf.dirs {
            std::fs::create_dir(root.join(d))?;
        }
    }
    for dir in leaves {
        for f in 0..FILES {
            std::fs::write(root.join(dir).join(format!("fake{f:02}")), b"")?;
        }
    }
    std::fs::write(root.join("dirlist"), dirlist())
}

/// Files under `root` that are not part of the tree (creates left behind by a task).
pub fn strays(root: &Path) -> u64 {
    let mut n = 0;
    for dir in std::iter::once(".").chain(LEAVES.iter().filter_map(|l| l.dirs.last().copied())) {
        if let Ok(entries) = std::fs::read_dir(root.join(dir)) {
            n += entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("notexist"))
                .count() as u64;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dirlist_has_aims_shape() {
        let text = dirlist();
        assert_eq!(text.lines().count(), 382);
        assert_eq!(text.len(), 10_726);
        let stats: Vec<&str> = text.lines().filter(|l| l.starts_with("s ")).collect();
        let creates: Vec<&str> = text.lines().filter(|l| l.starts_with("c ")).collect();
        assert_eq!(stats.len(), 57);
        assert_eq!(creates.len(), 43);
        assert!(text.lines().all(|l| l.len() < 159));
        let in_dir = |list: &[&str], dir: &str| {
            list.iter()
                .filter(|l| l[2..].rsplit_once('/').map(|(d, _)| d) == Some(dir))
                .count()
        };
        assert_eq!(in_dir(&stats, "."), 8);
        assert_eq!(in_dir(&creates, "."), 0);
        assert_eq!(in_dir(&stats, "./bin"), 6);
        assert_eq!(in_dir(&creates, "./usr/tony"), 5);
        assert_eq!(in_dir(&creates, "./usr/ja.apr17/port/tools/compress"), 7);
    }

    #[test]
    fn the_tree_holds_every_name_to_stat_and_none_to_create() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("fakeh");
        build(&root).unwrap();
        let text = std::fs::read_to_string(root.join("dirlist")).unwrap();
        for line in text.lines() {
            match line.split_at_checked(2) {
                Some(("s ", name)) => assert!(root.join(name).is_file(), "{line}"),
                Some(("c ", name)) => assert!(!root.join(name).exists(), "{line}"),
                _ => assert!(root.join(line).exists(), "{line}"),
            }
        }
        let files = walk(&root);
        assert_eq!(files, 8 * 40 + 1);
        assert_eq!(strays(&root), 0);
        std::fs::write(root.join("bin/notexist300123"), b"").unwrap();
        assert_eq!(strays(&root), 1);
    }

    fn walk(d: &Path) -> usize {
        std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .map(|e| {
                if e.file_type().unwrap().is_dir() {
                    walk(&e.path())
                } else {
                    1
                }
            })
            .sum()
    }
}
