//! writeseek2 — will-it-scale's description says "Same file seek+read", but it writes: every
//! task seeks to 0 and writes 4 KiB to one shared file of 4 KiB written zeros, through a
//! descriptor it opened itself (O_RDWR). The description is kept as will-it-scale prints it,
//! so titles and plots match theirs.

use super::file_io::{open_shared, seek_then, Io};
use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "writeseek2",
    description: "Same file seek+read",
    prepare: |dir, _| shared_file(dir, BUFLEN as u64),
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let fd = open_shared(ctx, libc::O_RDWR)?;
    seek_then(ctx, fd.as_raw_fd(), 0, Io::Write)
}
