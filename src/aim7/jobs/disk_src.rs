//! AIM7 `disk_src` ("Directory Searches", factor 75): directory look-ups in a small tree.
//!
//! One job changes into the `fakeh` tree of its directory, reads the tree's `dirlist`, takes
//! the lines marked `s` (names to stat) and `c` (names to create, made unique with the task
//! number), shuffles both lists with five passes of random swaps over AIM's 75 slots, then for
//! each slot stats the `s` name and creates, closes and unlinks the `c` name, and changes back.
//!
//! AIM ships its own tree (`fakeh.tar`); patchbench builds an equivalent one with
//! [`build_tree`]: eight directories at depths 0 to 5, 40 files each, 48 names to stat and 48
//! to create.

use super::{close, creat, unlink, Factor, Fail, Fixture, Job, TaskCtx};
use std::ffi::CString;
use std::path::Path;

/// AIM's number of slots per list (`MFILES`).
pub const SLOTS: usize = 75;
/// Shuffle passes (`MSCR`).
const SHUFFLES: usize = 5;

/// The directories of the tree, relative to `fakeh`.
const DIRS: &[&str] = &[
    ".",
    "bin",
    "usr/spool/queue/tmp",
    "usr/share/man/man1",
    "home/user/bin/src/ed",
    "home/guest",
    "usr/dist/tools/sccs/source",
    "usr/port/tools/compress",
];
const FILES_PER_DIR: usize = 40;
const STAT_PICKS: &[usize] = &[4, 8, 14, 18, 24, 28];
const CREATE_PER_DIR: usize = 6;

pub const JOB: Job = Job {
    name: "disk_src",
    aliases: &[],
    factor: Factor::Fixed(SLOTS as u64),
    units: "Directory Searches",
    uses_dirs: true,
    fixture: Fixture::FakeTree,
    extra_procs: 0,
    counters: &["stat", "creat", "unlink", "dirlist_reads"],
    run,
};

/// Builds the `fakeh` tree and its `dirlist` under `root` (which must not exist yet).
pub fn build_tree(root: &Path) -> std::io::Result<()> {
    let mut list = String::from(".\n./dirlist\n");
    for dir in DIRS {
        let d = if *dir == "." {
            root.to_path_buf()
        } else {
            root.join(dir)
        };
        std::fs::create_dir_all(&d)?;
        for f in 0..FILES_PER_DIR {
            let name = format!("file{f:02}");
            std::fs::write(d.join(&name), b"")?;
            let mark = if STAT_PICKS.contains(&f) { "s " } else { "" };
            list.push_str(&format!("{mark}./{dir}/{name}\n"));
        }
        for c in 1..=CREATE_PER_DIR {
            list.push_str(&format!("c ./{dir}/notexist{c}\n"));
        }
    }
    std::fs::write(root.join("dirlist"), list)
}

/// The `s` and `c` names of a dirlist, each list padded with empty slots to [`SLOTS`].
fn parse_list(text: &[u8], task: u32) -> (Vec<Option<CString>>, Vec<Option<CString>>) {
    let mut stat = Vec::with_capacity(SLOTS);
    let mut create = Vec::with_capacity(SLOTS);
    for line in text.split(|&b| b == b'\n') {
        match line {
            [b's', b' ', name @ ..] if stat.len() < SLOTS => {
                stat.push(CString::new(name.to_vec()).ok());
            }
            [b'c', b' ', name @ ..] if create.len() < SLOTS => {
                let mut n = name.to_vec();
                n.extend_from_slice(format!("{:05}", task % 100_000).as_bytes());
                create.push(CString::new(n).ok());
            }
            _ => {}
        }
    }
    stat.resize(SLOTS, None);
    create.resize(SLOTS, None);
    (stat, create)
}

fn shuffle(ctx: &mut TaskCtx, list: &mut [Option<CString>]) {
    for _ in 0..SHUFFLES {
        for i in 0..list.len() {
            let j = (ctx.random() % list.len() as u64) as usize;
            list.swap(i, j);
        }
    }
}

fn read_dirlist() -> Result<Vec<u8>, Fail> {
    std::fs::read("dirlist").map_err(|e| Fail {
        op: "read dirlist",
        errno: e.raw_os_error().unwrap_or(libc::EIO),
    })
}

fn search(ctx: &mut TaskCtx) -> Result<(), Fail> {
    let text = read_dirlist()?;
    ctx.counters[3] += 1;
    let (mut stat, mut create) = parse_list(&text, ctx.task);
    shuffle(ctx, &mut stat);
    shuffle(ctx, &mut create);
    for slot in 0..SLOTS {
        if let Some(name) = &stat[slot] {
            // SAFETY: valid path and a stat buffer on the stack.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            if unsafe { libc::stat(name.as_ptr(), &mut st) } < 0 {
                return Err(Fail::last("stat"));
            }
            ctx.counters[0] += 1;
        }
        if let Some(name) = &create[slot] {
            close(creat(name)?)?;
            ctx.counters[1] += 1;
            unlink(name)?;
            ctx.counters[2] += 1;
        }
    }
    Ok(())
}

fn run(ctx: &mut TaskCtx, dir: usize) -> Result<(), Fail> {
    // SAFETY: opening "." to come back to, as AIM's getcwd/chdir pair does.
    let here = unsafe {
        libc::open(
            c".".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if here < 0 {
        return Err(Fail::last("open ."));
    }
    // SAFETY: valid path.
    if unsafe { libc::chdir(ctx.dirs[dir].fake_tree.as_ptr()) } < 0 {
        let _ = close(here);
        return Err(Fail::last("chdir"));
    }
    let searched = search(ctx);
    // SAFETY: here is an open directory descriptor.
    let back = unsafe { libc::fchdir(here) };
    let _ = close(here);
    searched?;
    if back < 0 {
        return Err(Fail::last("fchdir"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_tree_lists_48_stats_and_48_creates() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("fakeh");
        build_tree(&root).unwrap();
        let text = std::fs::read(root.join("dirlist")).unwrap();
        let (stat, create) = parse_list(&text, 7);
        assert_eq!(stat.iter().flatten().count(), 48);
        assert_eq!(create.iter().flatten().count(), 48);
        assert_eq!(stat.len(), SLOTS);
        assert!(create[0]
            .as_ref()
            .unwrap()
            .to_str()
            .unwrap()
            .ends_with("notexist100007"));
        for name in stat.iter().flatten() {
            assert!(root.join(name.to_str().unwrap()).exists());
        }
    }
}
