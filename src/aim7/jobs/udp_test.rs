//! AIM7 `udp_test` ("UDP/IP DataGrams", args "100", factor 100): one job makes two UDP
//! sockets, each bound to a loopback port the kernel picks (with getsockname), connects the
//! first to the second, sends 99 datagrams from one to the other (sizes from pipe_test.c's
//! table) and closes both; see `messages` (and why 127.0.0.1).

use super::messages::{self, connect, loopback_socket, read_write_close};
use super::{Fail, Job, TaskCtx};

pub const JOB: Job = messages::job("udp_test", "100", 100, "UDP/IP DataGrams", run);

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let loops: u64 = ctx.arg(0)?;
    let (wr, _) = loopback_socket(libc::SOCK_DGRAM)?;
    let (rd, to) = loopback_socket(libc::SOCK_DGRAM)?;
    connect(wr, &to)?;
    read_write_close(ctx, loops, rd, wr)
}
