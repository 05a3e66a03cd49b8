//! Pipe Throughput (`pipe`, unixbench.md §4.7).
//!
//! One process, one pipe: write 512 bytes, read them back; one loop = one write+read pair.
//! No fork, so no context switch: this measures the pipe code path of the kernel.
//! Unit: lps (loops per second over the copy's wall time). Baseline 12440 lps.

use super::timer::{os_error, stopped};

/// Runs the loop until the stop flag is set; returns the number of completed loops.
pub fn run() -> std::io::Result<u64> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe() writes.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(os_error("pipe"));
    }
    let (rfd, wfd) = (fds[0], fds[1]);
    let mut buf = [0u8; 512];
    let mut loops: u64 = 0;
    // Where the runner reads the count mid-pass (shared_count): one store per loop.
    let live = crate::unixbench::shared_count::counter();
    let result = loop {
        if stopped() {
            break Ok(loops);
        }
        // SAFETY: buf is valid for 512 bytes; the descriptors are ours.
        let w = unsafe { libc::write(wfd, buf.as_ptr().cast(), 512) };
        if w != 512 {
            break Err(os_error("pipe write"));
        }
        // SAFETY: as above.
        let r = unsafe { libc::read(rfd, buf.as_mut_ptr().cast(), 512) };
        if r != 512 {
            break Err(os_error("pipe read"));
        }
        loops += 1;
        live.store(loops, std::sync::atomic::Ordering::Relaxed);
    };
    // SAFETY: closing descriptors we opened.
    unsafe {
        libc::close(rfd);
        libc::close(wfd);
    }
    result
}
