//! System Call Overhead (`syscall`, mode `mix`, unixbench.md §4.11).
//!
//! Once: a private pipe whose write end is closed, keeping its read end (UnixBench since 2023,
//! so copies do not contend on a shared descriptor). Each loop makes five system calls:
//! `close(dup(fd))`, a raw `getpid` (bypassing any libc cache), `getuid()`, `umask(022)`.
//! Unit: lps (loops, not single calls, per second of wall time). Baseline 15000 lps.

use super::timer::{os_error, stopped};

/// Runs the loop until the stop flag is set; returns the number of completed loops.
pub fn run() -> std::io::Result<u64> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe() writes.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(os_error("pipe"));
    }
    let fd = fds[0];
    // SAFETY: closing the write end we just made.
    unsafe { libc::close(fds[1]) };
    let mut loops: u64 = 0;
    // Where the runner reads the count mid-pass (shared_count): one store per loop.
    let live = crate::unixbench::shared_count::counter();
    while !stopped() {
        // SAFETY: plain system calls on our own descriptor; no memory is passed.
        unsafe {
            let dup = libc::dup(fd);
            if dup < 0 {
                return Err(os_error("dup"));
            }
            libc::close(dup);
            libc::syscall(libc::SYS_getpid);
            libc::getuid();
            libc::umask(0o022);
        }
        loops += 1;
        live.store(loops, std::sync::atomic::Ordering::Relaxed);
    }
    // SAFETY: closing our descriptor.
    unsafe { libc::close(fd) };
    Ok(loops)
}
