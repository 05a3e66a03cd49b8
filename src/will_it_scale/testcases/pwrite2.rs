//! pwrite2 — "Same file pwrite to same offset": every task pwrites 4 KiB at offset 0 of one
//! shared file of 4 KiB written zeros, through a descriptor it opened itself (O_RDWR).

use super::file_io::{open_shared, positioned, Io};
use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "pwrite2",
    description: "Same file pwrite to same offset",
    prepare: |dir, _| shared_file(dir, BUFLEN as u64),
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let fd = open_shared(ctx, libc::O_RDWR)?;
    positioned(ctx, fd.as_raw_fd(), 0, Io::Write)
}
