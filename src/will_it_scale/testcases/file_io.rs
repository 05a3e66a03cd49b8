//! What the file I/O families share: pread1-3, pwrite1-3, readseek1-3, writeseek1-3 (one 4 KiB
//! transfer per operation, at offset 0 of a separate or the same file, or at page × task of
//! the same file) and read1-4 (sequential reads that rewind at end of file).
//!
//! Every loop is `repeat` around one closure, so a testcase file says only which file, which
//! offset and which calls; the closures are inlined, leaving the calls and the counter in the
//! loop, as in will-it-scale's C.

use super::*;
use std::os::fd::{FromRawFd, OwnedFd};

/// Whether a transfer reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Io {
    Read,
    Write,
}

/// Runs `op` forever, one counted operation per call; returns its first error.
#[inline(always)]
pub fn repeat(ctx: &TaskCtx<'_>, mut op: impl FnMut() -> Result<()>) -> Result<()> {
    loop {
        op()?;
        ctx.slot.add(1);
    }
}

/// This task's offset in the "different offsets" testcases: page size × task number.
pub fn task_offset(ctx: &TaskCtx<'_>) -> libc::off_t {
    (crate::counter_harness::page_size() * ctx.nr) as libc::off_t
}

/// The "different offsets" shared file: one page of zeros per task.
pub fn per_task_pages(dir: &Path, tasks: usize) -> Result<Prepared> {
    shared_file(dir, (crate::counter_harness::page_size() * tasks) as u64)
}

/// Opens the prepared shared file with `flags` (`O_RDONLY`, `O_RDWR`, `O_DIRECT`, …), as each
/// will-it-scale task opens it for itself.
pub fn open_shared(ctx: &TaskCtx<'_>, flags: libc::c_int) -> Result<OwnedFd> {
    open_path(shared_path(ctx)?, flags)
}

/// Opens `path` with `flags`.
pub fn open_path(path: &Path, flags: libc::c_int) -> Result<OwnedFd> {
    let c = c_path(path)?;
    // SAFETY: a valid C string; the descriptor is owned by the returned value.
    let fd = unsafe { libc::open(c.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("cannot open {}", path.display()));
    }
    // SAFETY: `fd` was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Checks that a transfer moved exactly BUFLEN bytes (will-it-scale asserts it).
#[inline(always)]
fn whole(ret: isize, what: &'static str) -> Result<()> {
    if ret == BUFLEN as isize {
        Ok(())
    } else if ret < 0 {
        Err(std::io::Error::last_os_error()).context(what)
    } else {
        anyhow::bail!("{what} moved {ret} bytes, not {BUFLEN}")
    }
}

/// pread or pwrite of BUFLEN bytes at `offset`, forever.
pub fn positioned(ctx: &TaskCtx<'_>, fd: libc::c_int, offset: libc::off_t, io: Io) -> Result<()> {
    let mut buf = vec![0u8; BUFLEN];
    let p = buf.as_mut_ptr().cast::<libc::c_void>();
    // SAFETY (both closures): `buf` has BUFLEN bytes and outlives the loop.
    match io {
        Io::Read => repeat(ctx, || {
            // SAFETY: the buffer holds the bytes the call reads or writes, for the length given.
            whole(unsafe { libc::pread(fd, p, BUFLEN, offset) }, "pread")
        }),
        Io::Write => repeat(ctx, || {
            // SAFETY: the buffer holds the bytes the call reads or writes, for the length given.
            whole(unsafe { libc::pwrite(fd, p, BUFLEN, offset) }, "pwrite")
        }),
    }
}

/// lseek to `offset`, then read or write BUFLEN bytes, forever.
pub fn seek_then(ctx: &TaskCtx<'_>, fd: libc::c_int, offset: libc::off_t, io: Io) -> Result<()> {
    let mut buf = vec![0u8; BUFLEN];
    let p = buf.as_mut_ptr().cast::<libc::c_void>();
    // SAFETY (both closures): lseek on an open descriptor; `buf` has BUFLEN bytes.
    match io {
        Io::Read => repeat(ctx, || {
            // SAFETY: lseek on a descriptor this code opened.
            ok(unsafe { libc::lseek(fd, offset, libc::SEEK_SET) }, "lseek")?;
            // SAFETY: the buffer holds the bytes the call reads or writes, for the length given.
            whole(unsafe { libc::read(fd, p, BUFLEN) }, "read")
        }),
        Io::Write => repeat(ctx, || {
            // SAFETY: lseek on a descriptor this code opened.
            ok(unsafe { libc::lseek(fd, offset, libc::SEEK_SET) }, "lseek")?;
            // SAFETY: the buffer holds the bytes the call reads or writes, for the length given.
            whole(unsafe { libc::write(fd, p, BUFLEN) }, "write")
        }),
    }
}

/// Sequential reads of `buf.len()` bytes, rewinding with lseek when one returns end of file;
/// every read counts, the one that hit the end too (as in will-it-scale's read1-4).
pub fn read_rewinding(ctx: &TaskCtx<'_>, fd: libc::c_int, buf: &mut [u8]) -> Result<()> {
    let (p, len) = (buf.as_mut_ptr().cast::<libc::c_void>(), buf.len());
    repeat(ctx, || {
        // SAFETY: `buf` has `len` writable bytes; lseek on an open descriptor.
        if ok(unsafe { libc::read(fd, p, len) }, "read")? == 0 {
            // SAFETY: lseek on a descriptor this code opened.
            ok(unsafe { libc::lseek(fd, 0, libc::SEEK_SET) }, "lseek")?;
        }
        Ok(())
    })
}

/// A zero-filled buffer of `len` bytes aligned to the page size (what O_DIRECT needs), carved
/// out of a larger allocation as will-it-scale's read3 rounds its malloc'ed pointer up.
pub struct PageAligned {
    storage: Vec<u8>,
    start: usize,
    len: usize,
}

impl PageAligned {
    pub fn new(len: usize) -> PageAligned {
        let page = crate::counter_harness::page_size();
        let storage = vec![0u8; len + page];
        let start = storage.as_ptr().align_offset(page);
        PageAligned {
            storage,
            start,
            len,
        }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + self.len]
    }
}

/// Refuses, with one line naming the testcase and the filesystem, a `dir` whose filesystem does
/// not accept O_DIRECT (tmpfs before Linux 6.6, for instance); the probe file is removed again.
pub fn require_o_direct(test: &str, dir: &Path) -> Result<()> {
    let (_, probe) = private_file(dir, 0)?;
    let opened = open_path(&probe, libc::O_RDWR | libc::O_DIRECT);
    std::fs::remove_file(&probe).context("cannot remove the O_DIRECT probe file")?;
    match opened {
        Ok(_) => Ok(()),
        Err(e) => {
            let fs = crate::fsinfo::collect(dir);
            crate::error::usage(format!(
                "{test} reads with O_DIRECT, which {} (mounted on {}) refuses ({}); give --dir \
                 on a filesystem that supports it, such as ext4 or xfs",
                fs.fs_type,
                fs.mount_point,
                e.root_cause()
            ))
        }
    }
}
