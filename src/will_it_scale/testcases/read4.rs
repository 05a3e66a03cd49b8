//! read4 — "Same file O_DIRECT read": the driver writes one shared file of 1 MiB of zeros;
//! every task opens it with O_DIRECT (read-only) and reads it a page at a time into a
//! page-aligned buffer, rewinding at end of file (every read counts, as in read1).
//!
//! will-it-scale makes this file in /tmp; here it is in the private directory under `--dir`.
//! A filesystem that refuses O_DIRECT (tmpfs before Linux 6.6) is refused before any task
//! starts, with one line naming the testcase and the filesystem (exit status 2).

use super::file_io::{open_shared, read_rewinding, require_o_direct, PageAligned};
use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "read4",
    description: "Same file O_DIRECT read",
    prepare: |dir, _| {
        require_o_direct("read4", dir)?;
        shared_file(dir, FILESIZE)
    },
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let fd = open_shared(ctx, libc::O_RDONLY | libc::O_DIRECT)?;
    let mut buf = PageAligned::new(crate::counter_harness::page_size());
    read_rewinding(ctx, fd.as_raw_fd(), buf.as_mut_slice())
}
