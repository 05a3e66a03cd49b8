//! fallocate2 — "Separate file fallocate": the task's own unlinked file; fallocate the next
//! 8 KiB (mode 0) until the file is 1 MiB, then ftruncate it to 0 and start again; one
//! operation per fallocate (the ftruncate rides on every 128th).
//!
//! will-it-scale makes the file in /tmp with mkstemp and unlinks it at once; here it is opened
//! with O_TMPFILE in the private directory under `--dir` (the same unlinked inode, with no
//! name at any time), or created and unlinked there where the filesystem lacks O_TMPFILE.

use super::*;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

pub const TESTCASE: Testcase = Testcase {
    name: "fallocate2",
    description: "Separate file fallocate",
    prepare: no_prepare,
    run,
    helpers: 0,
};

/// Bytes added per fallocate (will-it-scale's FILESIZE / 128).
const STEP: u64 = FILESIZE / 128;

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let fd = match unnamed_file(ctx.dir) {
        Ok(fd) => fd,
        Err(_) => {
            let (file, path) = private_file(ctx.dir, 0)?;
            std::fs::remove_file(&path).context("cannot unlink the test file")?;
            file.into()
        }
    };
    fallocate_loop(ctx, &fd)
}

/// An unnamed regular file in `dir` (open with O_TMPFILE).
pub fn unnamed_file(dir: &Path) -> Result<OwnedFd> {
    let c = c_path(dir)?;
    // SAFETY: a valid C string; the descriptor is owned by the returned value.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_TMPFILE | libc::O_RDWR, 0o600) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("cannot open an O_TMPFILE file in {}", dir.display()));
    }
    // SAFETY: `fd` was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// fallocate STEP bytes after the last, truncating to 0 at 1 MiB, forever (also used by
/// fallocate1).
pub fn fallocate_loop(ctx: &TaskCtx<'_>, fd: &OwnedFd) -> Result<()> {
    let fd = fd.as_raw_fd();
    let mut place = 0u64;
    loop {
        // SAFETY: fallocate and ftruncate on an open regular file.
        let r = unsafe { libc::fallocate(fd, 0, place as libc::off_t, STEP as libc::off_t) };
        if r != 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(std::io::Error::last_os_error()).context("fallocate");
        }
        place += STEP;
        if place >= FILESIZE {
            // SAFETY: an open descriptor.
            ok(unsafe { libc::ftruncate(fd, 0) }, "ftruncate")?;
            place = 0;
        }
        ctx.slot.add(1);
    }
}
