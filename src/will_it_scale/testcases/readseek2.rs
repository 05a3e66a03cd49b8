//! readseek2 — "Same file seek+read": every task seeks to 0 and reads 4 KiB of one shared file
//! of 4 KiB written zeros, through a descriptor it opened itself (O_RDWR, as will-it-scale
//! opens it).

use super::file_io::{open_shared, seek_then, Io};
use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "readseek2",
    description: "Same file seek+read",
    prepare: |dir, _| shared_file(dir, BUFLEN as u64),
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let fd = open_shared(ctx, libc::O_RDWR)?;
    seek_then(ctx, fd.as_raw_fd(), 0, Io::Read)
}
