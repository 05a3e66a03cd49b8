//! The will-it-scale testcases: one small file each (exporting `pub const TESTCASE`),
//! registered with one line in `testcases!` below, with will-it-scale's description string,
//! an optional `prepare` that runs once in the driver before any task exists (shared files),
//! and the task loop, which does one operation and bumps the task's counter.
//!
//! Per-task files are created by the task itself, with mkstemp-style names, directly inside the
//! run's private directory (`/tmp/patchbench-XXXXXX/wis-XXXXXX`: one level deeper than
//! will-it-scale's `/tmp/willitscale.XXXXXX`); the driver empties that directory after every
//! point and removes it when the run ends.
//!
//! Files are filled as will-it-scale fills them: where its testcase writes zeros (the read,
//! pread, seek and lseek files), [`zero_file`] and [`shared_file`] write real zeros; where it
//! only calls `ftruncate` (the 128 MiB mmap, page-fault and TLB-flush files), [`private_file`]
//! sizes a sparse file the same way.

use crate::counter_harness::{Prepared, TaskCtx, Workload};
use anyhow::{Context, Result};
use std::ffi::CString;
use std::fs::File;
use std::path::{Path, PathBuf};

pub mod file_io;

/// One will-it-scale testcase.
pub struct Testcase {
    pub name: &'static str,
    /// will-it-scale's `testcase_description`.
    pub description: &'static str,
    /// Shared set-up in the driver (will-it-scale's `testcase_prepare`).
    pub prepare: fn(dir: &Path, tasks: usize) -> Result<Prepared>,
    /// The task's endless loop.
    pub run: fn(ctx: &TaskCtx<'_>) -> Result<()>,
    /// Helper tasks each task starts (context_switch1's partner).
    pub helpers: usize,
}

impl Workload for Testcase {
    fn helpers_per_task(&self) -> usize {
        self.helpers
    }
    fn prepare(&self, dir: &Path, tasks: usize) -> Result<Prepared> {
        (self.prepare)(dir, tasks)
    }
    fn run(&self, ctx: &TaskCtx<'_>) -> Result<()> {
        (self.run)(ctx)
    }
}

/// Declares each testcase's module and lists its `TESTCASE` in [`ALL`]: registering a
/// testcase is its file plus one line in the list below.
macro_rules! testcases {
    ($($name:ident),* $(,)?) => {
        $(mod $name;)*
        /// Every testcase, in will-it-scale's alphabetical order.
        pub const ALL: &[Testcase] = &[$($name::TESTCASE),*];
    };
}

testcases! {
    brk1,
    brk2,
    context_switch1,
    dup1,
    eventfd1,
    fallocate1,
    fallocate2,
    futex1,
    futex2,
    futex3,
    futex4,
    getppid1,
    lock1,
    lock2,
    lseek1,
    lseek2,
    malloc1,
    malloc2,
    mmap1,
    mmap2,
    open1,
    open2,
    open3,
    page_fault1,
    page_fault2,
    page_fault3,
    pipe1,
    poll1,
    poll2,
    posix_semaphore1,
    pread1,
    pread2,
    pread3,
    pthread_mutex1,
    pthread_mutex2,
    pthread_mutex3,
    pthread_mutex4,
    pthread_mutex5,
    pwrite1,
    pwrite2,
    pwrite3,
    read1,
    read2,
    read3,
    read4,
    readseek1,
    readseek2,
    readseek3,
    sched_yield,
    signal1,
    tlb_flush1,
    tlb_flush2,
    tlb_flush3,
    unix1,
    unlink1,
    unlink2,
    write1,
    writeseek1,
    writeseek2,
    writeseek3,
}

/// The testcase called `name`.
pub fn find(name: &str) -> Option<&'static Testcase> {
    ALL.iter().find(|t| t.name == name)
}

/// Size of the 128 MiB regions the mmap and page-fault tests map.
pub const MEMSIZE: usize = 128 * 1024 * 1024;
/// The I/O size of the read/write tests.
pub const BUFLEN: usize = 4096;
/// The file size of the read/write tests (1 MiB).
pub const FILESIZE: u64 = 1024 * 1024;

/// For testcases without shared set-up.
pub fn no_prepare(_dir: &Path, _tasks: usize) -> Result<Prepared> {
    Ok(Prepared::default())
}

/// A new file with a mkstemp-style name in `dir`, sized to `size` bytes with `ftruncate` (sparse,
/// as will-it-scale's mmap, page-fault and TLB-flush files), kept until the driver empties the
/// directory.
pub fn private_file(dir: &Path, size: u64) -> Result<(File, PathBuf)> {
    let tmp = tempfile::Builder::new()
        .prefix("wis-")
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a file in {}", dir.display()))?;
    tmp.as_file()
        .set_len(size)
        .context("cannot size the test file")?;
    let (file, path) = tmp.keep().context("cannot keep the test file")?;
    Ok((file, path))
}

/// A new file in `dir` holding `size` zero bytes written with write(2), BUFLEN at a time, as
/// will-it-scale's read and pread testcases write theirs; the file position is left at the end.
pub fn zero_file(dir: &Path, size: u64) -> Result<(File, PathBuf)> {
    use std::io::Write;
    let (mut file, path) = private_file(dir, 0)?;
    let zeros = [0u8; BUFLEN];
    let mut left = size;
    while left > 0 {
        let n = left.min(BUFLEN as u64) as usize;
        file.write_all(&zeros[..n])
            .with_context(|| format!("cannot fill {}", path.display()))?;
        left -= n as u64;
    }
    Ok((file, path))
}

/// A new directory with a mkstemp-style name in `dir`.
pub fn private_dir(dir: &Path) -> Result<PathBuf> {
    let d = tempfile::Builder::new()
        .prefix("wis-dir-")
        .tempdir_in(dir)
        .with_context(|| format!("cannot create a directory in {}", dir.display()))?;
    Ok(d.keep())
}

/// A shared file of `size` zero bytes made by `prepare` (will-it-scale's `testcase_prepare`
/// writes them), its path handed to every task.
pub fn shared_file(dir: &Path, size: u64) -> Result<Prepared> {
    let (_, path) = zero_file(dir, size)?;
    Ok(Prepared {
        path: Some(path),
        fd: None,
    })
}

/// The prepared shared file's path.
pub fn shared_path<'a>(ctx: &'a TaskCtx<'_>) -> Result<&'a Path> {
    ctx.prepared
        .path
        .as_deref()
        .context("the testcase's shared file was not prepared")
}

pub fn c_path(path: &Path) -> Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes()).context("path contains a NUL byte")
}

/// Turns a C return value into an error naming the call when it is negative.
#[inline(always)]
pub fn ok<T: Copy + PartialOrd + Default>(ret: T, what: &'static str) -> Result<T> {
    if ret < T::default() {
        Err(std::io::Error::last_os_error()).context(what)
    } else {
        Ok(ret)
    }
}

/// Maps `len` bytes (`fd` -1 for anonymous memory).
pub fn map(len: usize, flags: libc::c_int, fd: libc::c_int) -> Result<*mut u8> {
    // SAFETY: a new mapping at an address the kernel chooses.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            fd,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error()).context("mmap");
    }
    Ok(p.cast())
}

/// Unmaps what [`map`] returned.
pub fn unmap(p: *mut u8, len: usize) -> Result<()> {
    // SAFETY: `p` and `len` come from a successful `map`.
    ok(unsafe { libc::munmap(p.cast(), len) }, "munmap").map(|_| ())
}

/// The page-fault loop shared by page_fault1..3: map, write one byte per page (one operation
/// each), unmap.
pub fn fault_pages(ctx: &TaskCtx<'_>, flags: libc::c_int, fd: libc::c_int) -> Result<()> {
    let page = crate::counter_harness::page_size();
    loop {
        let p = map(MEMSIZE, flags, fd)?;
        for off in (0..MEMSIZE).step_by(page) {
            // SAFETY: `off` is inside the mapping just made.
            unsafe { p.add(off).write_volatile(0) };
            ctx.slot.add(1);
        }
        unmap(p, MEMSIZE)?;
    }
}

/// The TLB-flush loop shared by tlb_flush1..3: map `len` bytes; for every page write a byte,
/// `madvise(MADV_DONTNEED)` that page and read the byte back, which must then be `after` (0 where
/// the private copy was dropped, 1 where a shared file mapping keeps it); one operation per
/// page; unmap.
pub fn flush_pages(
    ctx: &TaskCtx<'_>,
    len: usize,
    flags: libc::c_int,
    fd: libc::c_int,
    after: u8,
) -> Result<()> {
    let page = crate::counter_harness::page_size();
    loop {
        let p = map(len, flags, fd)?;
        for off in (0..len).step_by(page) {
            // SAFETY: `off` is inside the mapping just made; the page stays mapped after
            // MADV_DONTNEED (only its contents are dropped).
            unsafe {
                let at = p.add(off);
                at.write_volatile(1);
                ok(
                    libc::madvise(at.cast(), page, libc::MADV_DONTNEED),
                    "madvise",
                )?;
                if at.read_volatile() != after {
                    anyhow::bail!(
                        "the page held {} after MADV_DONTNEED, not {after}",
                        at.read()
                    );
                }
            }
            ctx.slot.add(1);
        }
        unmap(p, len)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_described() {
        let mut names: Vec<&str> = ALL.iter().map(|t| t.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        assert!(ALL.iter().all(|t| !t.description.is_empty()));
        assert!(find("open1").is_some());
        assert!(find("nope").is_none());
    }
}
