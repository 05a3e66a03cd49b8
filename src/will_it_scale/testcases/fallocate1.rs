//! fallocate1 — "Separate file fallocate against tmpfs": as fallocate2, on a file in /dev/shm
//! whatever `--dir` says, as will-it-scale's fallocate1 puts its file there.
//!
//! will-it-scale creates `/dev/shm/willitscale.XXXXXX` and unlinks it at once; here the task
//! opens an unnamed file in /dev/shm with O_TMPFILE: the same unlinked tmpfs inode, but no
//! name ever appears in /dev/shm, so nothing can be left there and nothing outside the run's
//! private directory is ever deleted. Before any task starts the driver checks that /dev/shm
//! is a writable tmpfs and otherwise refuses the run with one line (exit status 2).

use super::fallocate2::{fallocate_loop, unnamed_file};
use super::*;

pub const TESTCASE: Testcase = Testcase {
    name: "fallocate1",
    description: "Separate file fallocate against tmpfs",
    prepare,
    run,
    helpers: 0,
};

const SHM: &str = "/dev/shm";

fn prepare(_dir: &Path, _tasks: usize) -> Result<Prepared> {
    let shm = Path::new(SHM);
    let is_tmpfs = nix::sys::statfs::statfs(shm)
        .map(|s| s.filesystem_type() == nix::sys::statfs::TMPFS_MAGIC)
        .unwrap_or(false);
    if !is_tmpfs {
        return crate::error::usage(format!(
            "fallocate1 runs against tmpfs in {SHM}, as will-it-scale's does, but {SHM} is not \
             a tmpfs mount here; mount one there (mount -t tmpfs tmpfs {SHM})"
        ));
    }
    if let Err(e) = unnamed_file(shm) {
        return crate::error::usage(format!(
            "fallocate1 runs against tmpfs in {SHM}, as will-it-scale's does: {}",
            e.chain()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(": ")
        ));
    }
    Ok(Prepared::default())
}

fn run(ctx: &TaskCtx<'_>) -> Result<()> {
    fallocate_loop(ctx, &unnamed_file(Path::new(SHM))?)
}
