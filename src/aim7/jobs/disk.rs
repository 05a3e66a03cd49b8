//! The block I/O that disk1.c's nine tests share: 1 KiB reads and writes through the task's
//! one static buffer (`nbuf`: zeros until a read fills it, so later writes carry whatever was
//! read last, as in AIM), sequential runs, and runs at random blocks drawn from AIM's 15-bit
//! stream (`aim_rand() % range`, so only the first 32768 blocks of a file are ever hit).
//! Every helper counts what it did in the disk tests' counters.

use super::{check, close, creat, open_mode, unlink, DirFile, Factor, Fail, Job, TaskCtx, BLOCK};

/// Counter names shared by the disk tests.
pub const DISK_COUNTERS: &[&str] = &["blocks_written", "blocks_read", "files_created", "unlinks"];
const WRITTEN: usize = 0;
const READ: usize = 1;
const CREATED: usize = 2;
const UNLINKED: usize = 3;

/// What a run of block I/O does at each block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    /// Read the block, then write (at the offset the read left, the next block: AIM does not
    /// seek back).
    ReadWrite,
}

/// One 1 KiB write (or read) through the task's buffer; a short transfer is a failure, as in
/// AIM (a short write means the disk is full, a short read that the file is too short).
fn block(ctx: &mut TaskCtx, fd: i32, write: bool) -> Result<(), Fail> {
    // SAFETY: buf is valid for BLOCK bytes.
    let n = unsafe {
        if write {
            libc::write(fd, ctx.buf.as_ptr().cast(), BLOCK)
        } else {
            libc::read(fd, ctx.buf.as_mut_ptr().cast(), BLOCK)
        }
    };
    let (op, short, counter) = if write {
        ("write", libc::ENOSPC, WRITTEN)
    } else {
        ("read", libc::EIO, READ)
    };
    match n {
        n if n == BLOCK as isize => {
            ctx.counters[counter] += 1;
            Ok(())
        }
        n if n < 0 => Err(Fail::last(op)),
        _ => Err(Fail { op, errno: short }),
    }
}

fn write_block(ctx: &mut TaskCtx, fd: i32) -> Result<(), Fail> {
    block(ctx, fd, true)
}

fn read_block(ctx: &mut TaskCtx, fd: i32) -> Result<(), Fail> {
    block(ctx, fd, false)
}

fn at(ctx: &mut TaskCtx, fd: i32, access: Access) -> Result<(), Fail> {
    match access {
        Access::Read => read_block(ctx, fd),
        Access::Write => write_block(ctx, fd),
        Access::ReadWrite => read_block(ctx, fd).and_then(|_| write_block(ctx, fd)),
    }
}

/// Moves `fd`'s offset to block `block`.
pub fn seek_block(fd: i32, block: usize) -> Result<(), Fail> {
    let offset = (block * BLOCK) as libc::off_t;
    // SAFETY: plain lseek on an open descriptor.
    if unsafe { libc::lseek(fd, offset, libc::SEEK_SET) } < 0 {
        Err(Fail::last("lseek"))
    } else {
        Ok(())
    }
}

/// `blocks` sequential 1 KiB operations on `fd`.
pub fn sequential(ctx: &mut TaskCtx, fd: i32, blocks: usize, access: Access) -> Result<(), Fail> {
    for _ in 0..blocks {
        at(ctx, fd, access)?;
    }
    Ok(())
}

/// `blocks` × (read 1 KiB from `src`, write it to `dst`).
pub fn copy(ctx: &mut TaskCtx, src: i32, dst: i32, blocks: usize) -> Result<(), Fail> {
    for _ in 0..blocks {
        read_block(ctx, src)?;
        write_block(ctx, dst)?;
    }
    Ok(())
}

/// `count` × (lseek to block `aim_rand() % range`, then `access`).
pub fn random(
    ctx: &mut TaskCtx,
    fd: i32,
    count: usize,
    range: usize,
    access: Access,
) -> Result<(), Fail> {
    for _ in 0..count {
        let block = ctx.rng.below(range);
        seek_block(fd, block)?;
        at(ctx, fd, access)?;
    }
    Ok(())
}

/// A fresh temp file `tmpb.*` in `dir`, opened with `flags` (mode 0777), or with `creat()`
/// when `flags` is None.
pub fn new_temp(ctx: &mut TaskCtx, dir: usize, flags: Option<i32>) -> Result<(DirFile, i32), Fail> {
    let file = ctx.temp_path(dir, "tmpb.");
    let fd = match flags {
        None => creat(file.at, &file.path)?,
        Some(f) => open_mode(file.at, &file.path, f, "open")?,
    };
    ctx.counters[CREATED] += 1;
    Ok((file, fd))
}

/// Opens `file` again with `flags`.
pub fn reopen(file: &DirFile, flags: i32) -> Result<i32, Fail> {
    open_mode(file.at, &file.path, flags, "open")
}

/// The set-up disk_rr, disk_rw, sync_disk_rw and sync_disk_update share: a fresh temp file
/// opened with `create` (None: `creat()`), `blocks` blocks written, closed, and opened again
/// with `reopen_flags`.
pub fn written_file(
    ctx: &mut TaskCtx,
    dir: usize,
    create: Option<i32>,
    blocks: usize,
    reopen_flags: i32,
) -> Result<(DirFile, i32), Fail> {
    let (file, fd) = new_temp(ctx, dir, create)?;
    sequential(ctx, fd, blocks, Access::Write)?;
    close(fd)?;
    let fd = reopen(&file, reopen_flags)?;
    Ok((file, fd))
}

/// The registration of a disk test.
pub const fn job(
    name: &'static str,
    units: &'static str,
    factor: Factor,
    run: fn(&mut TaskCtx, usize) -> Result<(), Fail>,
) -> Job {
    Job {
        name,
        factor,
        units,
        uses_dirs: true,
        counters: DISK_COUNTERS,
        run,
        ..Job::BASE
    }
}

/// Opens the shared `tmpa.common` of `dir` read-only.
pub fn open_common(ctx: &TaskCtx, dir: usize) -> Result<i32, Fail> {
    open_mode(
        ctx.dirs[dir].at,
        &ctx.dirs[dir].common_file,
        libc::O_RDONLY,
        "open tmpa.common",
    )
}

/// Unlinks `file`, counting it.
pub fn remove(ctx: &mut TaskCtx, file: &DirFile) -> Result<(), Fail> {
    unlink(file.at, &file.path)?;
    ctx.counters[UNLINKED] += 1;
    Ok(())
}

/// Closes every descriptor in `fds`.
pub fn close_all(fds: &[i32]) -> Result<(), Fail> {
    for &fd in fds {
        // SAFETY: closing descriptors this job opened.
        check("close", unsafe { libc::close(fd) })?;
    }
    Ok(())
}
