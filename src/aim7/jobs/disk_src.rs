//! AIM7 `disk_src` ("Directory Searches", factor 75): look-ups and creates in AIM's fake
//! source tree (`fakeh`, built by the driver as AIM's, see `aim7::fakeh`).
//!
//! One job, as AIM's: getcwd; chdir into the tree; fopen `dirlist` and read it with fgets
//! (lines of at most 159 characters), taking the lines marked `s` (names to stat) and `c`
//! (names to create, with the task's pid % 100000 appended as 5 digits), each copied into its
//! own malloc'd string; fclose; scramble each 75-slot list (stat list first) with 5 passes of
//! swapping slot i with slot `aim_rand() % 75` (750 draws from the task's stream); then for
//! each slot in order, stat its `s` name and creat (0777), close and unlink its `c` name; free
//! the names and chdir back. Per job: 57 stats and 43 creat+close+unlink, interleaved.

use super::{check, close, creat, unlink, Factor, Fail, Job, TaskCtx};
use libc::c_char;
use std::ffi::CStr;

/// AIM's number of slots per list (`MFILES`).
pub const SLOTS: usize = 75;
/// Shuffle passes.
const SHUFFLES: usize = 5;
/// fgets's buffer.
const LINE: usize = 160;

pub const JOB: Job = Job {
    name: "disk_src",
    factor: Factor::Fixed(SLOTS as u64),
    units: "Directory Searches",
    uses_dirs: true,
    counters: &["stat", "creat", "unlink", "dirlist_reads"],
    run,
    ..Job::BASE
};

/// The two lists of malloc'd names; empty slots are null. Freed on drop.
struct Lists {
    stat: [*mut c_char; SLOTS],
    create: [*mut c_char; SLOTS],
}

impl Drop for Lists {
    fn drop(&mut self) {
        for p in self.stat.iter().chain(&self.create) {
            // SAFETY: every non-null slot came from malloc and is freed once.
            unsafe { libc::free(p.cast()) };
        }
    }
}

/// A malloc'd copy of `name`, with `suffix` as 5 digits appended if given.
fn dup(name: &[u8], suffix: Option<u32>) -> *mut c_char {
    let digits = suffix.map(|s| {
        let mut d = [0u8; 5];
        for (i, b) in d.iter_mut().enumerate() {
            *b = b'0' + (s / 10u32.pow(4 - i as u32) % 10) as u8;
        }
        d
    });
    let len = name.len() + digits.map_or(0, |d| d.len());
    // SAFETY: a fresh allocation of len + 1 bytes, filled below.
    let p = unsafe { libc::malloc(len + 1) }.cast::<u8>();
    if !p.is_null() {
        // SAFETY: p has room for len + 1 bytes.
        unsafe {
            p.copy_from_nonoverlapping(name.as_ptr(), name.len());
            if let Some(d) = digits {
                p.add(name.len())
                    .copy_from_nonoverlapping(d.as_ptr(), d.len());
            }
            *p.add(len) = 0;
        }
    }
    p.cast()
}

fn put(list: &mut [*mut c_char; SLOTS], name: *mut c_char) {
    match list.iter_mut().find(|p| p.is_null()) {
        Some(slot) => *slot = name,
        // SAFETY: name came from malloc; AIM has no room check, we drop what does not fit.
        None => unsafe { libc::free(name.cast()) },
    }
}

fn read_dirlist(ctx: &mut TaskCtx) -> Result<Lists, Fail> {
    // SAFETY: valid NUL-terminated strings.
    let f = unsafe { libc::fopen(c"dirlist".as_ptr(), c"r".as_ptr()) };
    if f.is_null() {
        return Err(Fail::last("fopen dirlist"));
    }
    let mut lists = Lists {
        stat: [std::ptr::null_mut(); SLOTS],
        create: [std::ptr::null_mut(); SLOTS],
    };
    let mut line = [0 as c_char; LINE];
    // SAFETY: line has LINE bytes; f is an open FILE.
    while !unsafe { libc::fgets(line.as_mut_ptr(), LINE as i32, f) }.is_null() {
        // SAFETY: fgets NUL-terminated the line.
        let text = unsafe { CStr::from_ptr(line.as_ptr()) }.to_bytes();
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        let name = text.get(2..).unwrap_or_default();
        match text.first() {
            Some(b's') => put(&mut lists.stat, dup(name, None)),
            Some(b'c') => put(&mut lists.create, dup(name, Some(ctx.pid5))),
            _ => {}
        }
    }
    // SAFETY: closing the FILE opened above.
    unsafe { libc::fclose(f) };
    ctx.counters[3] += 1;
    Ok(lists)
}

fn scramble(ctx: &mut TaskCtx, list: &mut [*mut c_char; SLOTS]) {
    for _ in 0..SHUFFLES {
        for i in 0..SLOTS {
            let j = ctx.rng.below(SLOTS);
            list.swap(i, j);
        }
    }
}

fn search(ctx: &mut TaskCtx) -> Result<(), Fail> {
    let mut lists = read_dirlist(ctx)?;
    scramble(ctx, &mut lists.stat);
    scramble(ctx, &mut lists.create);
    for slot in 0..SLOTS {
        let name = lists.stat[slot];
        if !name.is_null() {
            // SAFETY: a NUL-terminated name and a stat buffer on the stack.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: a NUL-terminated name and a stat buffer on the stack.
            check("stat", unsafe { libc::stat(name, &mut st) })?;
            ctx.counters[0] += 1;
        }
        let name = lists.create[slot];
        if !name.is_null() {
            // SAFETY: a NUL-terminated name that lives as long as `lists`.
            let name = unsafe { CStr::from_ptr(name) };
            close(creat(libc::AT_FDCWD, name)?)?;
            ctx.counters[1] += 1;
            unlink(libc::AT_FDCWD, name)?;
            ctx.counters[2] += 1;
        }
    }
    Ok(())
}

fn run(ctx: &mut TaskCtx, dir: usize) -> Result<(), Fail> {
    let mut cwd = [0 as c_char; libc::PATH_MAX as usize];
    // SAFETY: cwd has PATH_MAX bytes.
    if unsafe { libc::getcwd(cwd.as_mut_ptr(), cwd.len()) }.is_null() {
        return Err(Fail::last("getcwd"));
    }
    // SAFETY: valid path.
    check("chdir", unsafe {
        libc::chdir(ctx.dirs[dir].fake_tree.as_ptr())
    })?;
    let searched = search(ctx);
    // SAFETY: cwd holds the directory getcwd returned.
    let back = check("chdir back", unsafe { libc::chdir(cwd.as_ptr()) });
    searched.and(back.map(drop))
}
