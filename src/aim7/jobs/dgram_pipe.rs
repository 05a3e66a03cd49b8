//! AIM7 `dgram_pipe` ("DataGram Pipe Messages", args "100", factor 100): one job makes an AF_UNIX
//! SOCK_DGRAM socket pair and sends 99 messages (datagram each) through it to itself (sizes from
//! pipe_test.c's table), then closes both ends; see `messages`.

use super::messages::{self, read_write_close, socket_pair};
use super::{Fail, Job, TaskCtx};

pub const JOB: Job = messages::job("dgram_pipe", "100", 100, "DataGram Pipe Messages", run);

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let loops: u64 = ctx.arg(0)?;
    let [rd, wr] = socket_pair(libc::SOCK_DGRAM)?;
    read_write_close(ctx, loops, rd, wr)
}
