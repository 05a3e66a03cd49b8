//! AIM7 `pipe_cpy` ("Pipe Messages", args "100", factor 100): one job makes a pipe and sends
//! 99 messages through it to itself (sizes from pipe_test.c's table), then closes both ends;
//! see `messages`.

use super::messages::{self, read_write_close};
use super::{check, Fail, Job, TaskCtx};

pub const JOB: Job = messages::job("pipe_cpy", "100", 100, "Pipe Messages", run);

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let loops: u64 = ctx.arg(0)?;
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors.
    check("pipe", unsafe { libc::pipe(fds.as_mut_ptr()) })?;
    read_write_close(ctx, loops, fds[0], fds[1])
}
