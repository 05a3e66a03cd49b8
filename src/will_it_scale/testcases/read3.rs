//! read3 — "Separate file O_DIRECT read": the task opens its own file with O_DIRECT, writes
//! 1 MiB of zeros through it, then reads it a page at a time into a page-aligned buffer,
//! rewinding at end of file (every read counts, as in read1).
//!
//! will-it-scale makes this file in /tmp; here it is in the private directory under `--dir`.
//! A filesystem that refuses O_DIRECT (tmpfs before Linux 6.6) makes will-it-scale's task die
//! on an assertion; here the driver tries O_DIRECT before any task starts and refuses the run
//! with one line naming the testcase and the filesystem (exit status 2).

use super::file_io::{open_path, read_rewinding, require_o_direct, PageAligned};
use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "read3",
    description: "Separate file O_DIRECT read",
    prepare: |dir, _| {
        require_o_direct("read3", dir)?;
        Ok(Prepared::default())
    },
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let (_, path) = private_file(ctx.dir, 0)?;
    let fd = open_path(&path, libc::O_RDWR | libc::O_DIRECT)?;
    let mut zeros = PageAligned::new(FILESIZE as usize);
    let z = zeros.as_mut_slice();
    // SAFETY: `z` has FILESIZE readable, page-aligned bytes.
    let n = ok(
        unsafe { libc::write(fd.as_raw_fd(), z.as_ptr().cast(), z.len()) },
        "O_DIRECT write",
    )?;
    if n as u64 != FILESIZE {
        anyhow::bail!("the O_DIRECT write wrote {n} of {FILESIZE} bytes");
    }
    let mut buf = PageAligned::new(crate::counter_harness::page_size());
    read_rewinding(ctx, fd.as_raw_fd(), buf.as_mut_slice())
}
