//! read1 — "Separate file read": sequential 4 KiB reads of the task's own file of 1 MiB written
//! zeros, rewinding with lseek when a read returns end of file. As in will-it-scale the file
//! position starts at the end (the zeros were just written), and every read counts, including
//! the one that hits the end.

use super::file_io::read_rewinding;
use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "read1",
    description: "Separate file read",
    prepare: no_prepare,
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let (file, _) = zero_file(ctx.dir, FILESIZE)?;
    read_rewinding(ctx, file.as_raw_fd(), &mut [0u8; BUFLEN])
}
