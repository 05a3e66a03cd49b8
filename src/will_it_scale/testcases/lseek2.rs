//! lseek2 — "Same file lseek": the driver makes one file of 4 KiB written zeros; every task
//! opens it itself (O_RDWR) and lseeks its own descriptor to 0. The tasks share the inode but
//! not a file description, so they do not serialise on one file position (`f_pos_lock`), as
//! they would with a descriptor opened before the tasks start.

use super::file_io::open_shared;
use super::*;
use std::os::fd::AsRawFd;

pub const TESTCASE: Testcase = Testcase {
    name: "lseek2",
    description: "Same file lseek",
    prepare: |dir, _| shared_file(dir, BUFLEN as u64),
    run,
    helpers: 0,
};

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    let fd = open_shared(ctx, libc::O_RDWR)?;
    super::lseek1::lseek_loop(ctx, fd.as_raw_fd())
}
