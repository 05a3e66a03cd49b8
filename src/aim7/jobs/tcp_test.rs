//! AIM7 `tcp_test` ("TCP/IP Messages", args "90", factor 90): one job makes a TCP listener
//! bound to a loopback port the kernel picks (with getsockname), sets TCP_NODELAY on it and
//! reads it back, listens (backlog 5), connects a second socket to it and accepts the
//! connection (retrying on EINTR), reads the client's address with getsockname, sends 89
//! messages from the accepted socket to the client (sizes from pipe_test.c's table), closes
//! both and then the listener: 3 sockets, one handshake and teardown a job; see `messages`.

use super::messages::{self, connect, local_address, loopback_socket, read_write_close};
use super::{check, close, Fail, Job, TaskCtx};

pub const JOB: Job = messages::job("tcp_test", "90", 90, "TCP/IP Messages", run);

fn no_delay(fd: i32) -> Result<(), Fail> {
    let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    let (on, mut read_back, mut got) = (1 as libc::c_int, 0 as libc::c_int, len);
    // SAFETY: option values of the right size on the stack.
    unsafe {
        let opt = (&on as *const libc::c_int).cast();
        check(
            "setsockopt",
            libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, opt, len),
        )?;
        let out = (&mut read_back as *mut libc::c_int).cast();
        check(
            "getsockopt",
            libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, out, &mut got),
        )?;
    }
    Ok(())
}

fn accept(fd: i32) -> Result<i32, Fail> {
    loop {
        // SAFETY: accepting without asking for the peer's address.
        let n = unsafe { libc::accept(fd, std::ptr::null_mut(), std::ptr::null_mut()) };
        if n >= 0 {
            return Ok(n);
        }
        let f = Fail::last("accept");
        if f.errno != libc::EINTR {
            return Err(f);
        }
    }
}

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let loops: u64 = ctx.arg(0)?;
    let (listener, addr) = loopback_socket(libc::SOCK_STREAM)?;
    no_delay(listener)?;
    // SAFETY: listening on our own socket.
    check("listen", unsafe { libc::listen(listener, 5) })?;
    // SAFETY: a plain socket call.
    let rd = check("socket", unsafe {
        libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0)
    })?;
    connect(rd, &addr)?;
    let new = accept(listener)?;
    local_address(rd)?;
    read_write_close(ctx, loops, rd, new)?;
    close(listener)
}
