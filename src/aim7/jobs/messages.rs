//! What pipe_test.c's six tests share (aim7-jobs.md §1e): the message-size table, read
//! through a position that persists across jobs and across the six tests of a task; AIM's
//! `read_write_close` loop, which pings messages off itself (write `size` bytes to one end,
//! read them back from the other, each looping on short transfers and retrying on EINTR, at
//! most size+2 tries) for L−1 messages and then closes both ends; and loopback sockets.
//!
//! AIM binds its INET sockets to the address of the host name, which on many systems is
//! another loopback address (127.0.1.1) and elsewhere a LAN address; patchbench uses
//! 127.0.0.1, so the traffic stays on the loopback device whatever the host's naming.

use super::{check, close, Fail, Job, TaskCtx};

/// Counter names of the message tests.
pub const COUNTERS: &[&str] = &["messages", "bytes"];

/// The message sizes: 1 3 5 7 16 32 64 512 1024 2048, twice, six 32s, five 512s (31 entries,
/// 10,176 bytes a cycle).
pub const SIZES: [usize; 31] = [
    1, 3, 5, 7, 16, 32, 64, 512, 1024, 2048, 1, 3, 5, 7, 16, 32, 64, 512, 1024, 2048, 32, 32, 32,
    32, 32, 32, 512, 512, 512, 512, 512,
];
const BUF: usize = 2048;

/// The registration of a message test (`args` is its message count).
pub const fn job(
    name: &'static str,
    args: &'static str,
    factor: u64,
    units: &'static str,
    run: fn(&mut TaskCtx, usize) -> Result<(), Fail>,
) -> Job {
    Job::simple(name, args, factor, units, COUNTERS, run)
}

/// The next size of the shared table.
pub fn next_size(ctx: &mut TaskCtx) -> usize {
    let s = SIZES[ctx.msg_at % SIZES.len()];
    ctx.msg_at += 1;
    s
}

/// Writes (or reads) all of `len` bytes at `buf`, as AIM's writen/readn.
fn all(fd: i32, buf: *mut u8, len: usize, op: &'static str, write: bool) -> Result<(), Fail> {
    let (mut done, mut tries) = (0, 0);
    while done < len {
        tries += 1;
        if tries > len + 2 {
            return Err(Fail {
                op,
                errno: libc::EIO,
            });
        }
        // SAFETY: buf holds len bytes.
        let n = unsafe {
            if write {
                libc::write(fd, buf.add(done).cast(), len - done)
            } else {
                libc::read(fd, buf.add(done).cast(), len - done)
            }
        };
        match n {
            n if n > 0 => done += n as usize,
            0 => {
                return Err(Fail {
                    op,
                    errno: libc::EPIPE,
                })
            }
            _ => {
                let f = Fail::last(op);
                if f.errno != libc::EINTR {
                    return Err(f);
                }
            }
        }
    }
    Ok(())
}

/// AIM's `read_write_close(L, rd, wr)`: L−1 messages written to `wr` and read back from
/// `rd`, then both closed.
pub fn read_write_close(ctx: &mut TaskCtx, loops: u64, rd: i32, wr: i32) -> Result<(), Fail> {
    let mut buf = [0u8; BUF];
    for _ in 1..loops {
        let size = next_size(ctx);
        all(wr, buf.as_mut_ptr(), size, "write", true)?;
        all(rd, buf.as_mut_ptr(), size, "read", false)?;
        ctx.counters[0] += 1;
        ctx.counters[1] += size as u64;
    }
    close(rd)?;
    close(wr)
}

/// A socket pair of `kind` (SOCK_STREAM, SOCK_DGRAM) in the Unix domain.
pub fn socket_pair(kind: i32) -> Result<[i32; 2], Fail> {
    let mut sv = [0; 2];
    // SAFETY: sv has room for two descriptors.
    check("socketpair", unsafe {
        libc::socketpair(libc::AF_UNIX, kind, 0, sv.as_mut_ptr())
    })?;
    Ok(sv)
}

/// An INET socket of `kind` bound to 127.0.0.1 on a port the kernel picks, and its address
/// (read back with getsockname, as AIM does).
pub fn loopback_socket(kind: i32) -> Result<(i32, libc::sockaddr_in), Fail> {
    // SAFETY: plain socket calls on a local address structure.
    unsafe {
        let fd = check("socket", libc::socket(libc::AF_INET, kind, 0))?;
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        check(
            "bind",
            libc::bind(fd, (&addr as *const libc::sockaddr_in).cast(), len),
        )?;
        let addr = local_address(fd)?;
        Ok((fd, addr))
    }
}

/// getsockname of `fd`.
pub fn local_address(fd: i32) -> Result<libc::sockaddr_in, Fail> {
    // SAFETY: getsockname into a local address structure of the right size.
    unsafe {
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        check(
            "getsockname",
            libc::getsockname(fd, (&mut addr as *mut libc::sockaddr_in).cast(), &mut len),
        )?;
        Ok(addr)
    }
}

/// connect `fd` to `addr`.
pub fn connect(fd: i32, addr: &libc::sockaddr_in) -> Result<(), Fail> {
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: a valid address structure.
    check("connect", unsafe {
        libc::connect(fd, (addr as *const libc::sockaddr_in).cast(), len)
    })
    .map(drop)
}
