//! What the two small `no_std` programs (`patchbench-execl`, `patchbench-spawn`) share: the
//! panic handler, the monotonic clock, and unbuffered output of the result lines on stdout
//! (`COUNT|n|1|lps`, `WALL|seconds`, `WINDOW|start_ns|stop_ns`, `ERROR|message`) without any formatting machinery.
//!
//! These programs use no Rust runtime or standard library (a C `main`, libc calls only), so
//! they link only libc and their process costs (exec, fork, exit) are those of a small C
//! program. That needs `panic = "abort"`, as in the release and bench profiles (Cargo.toml).
//! A dev or test build unwinds, so there the programs link std (with the same C `main`, and
//! std's runtime initialisation skipped): they behave the same, but their exec and fork costs
//! are not a small C program's, so measure with a release build.

use core::ffi::c_char;

// Without std nothing else asks the linker for libc.
#[link(name = "c")]
extern "C" {}

#[cfg(panic = "abort")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: abort has no preconditions.
    unsafe { libc::abort() }
}

/// The precompiled `core` is built for unwinding, so an unoptimised (dev) build still refers to
/// the unwinding personality routine. With panic = "abort" nothing ever unwinds, so it is
/// never called; this empty definition only satisfies the linker.
#[cfg(panic = "abort")]
#[no_mangle]
extern "C" fn rust_eh_personality() {}

/// Nanoseconds on the monotonic clock.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Writes `v` in decimal at the end of `buf`; returns a pointer to the first digit and the
/// number of digits. Written without indexing so that no bounds-check panic path (and with it
/// Rust's panic and formatting machinery) is linked into these programs.
fn digits(mut v: u64, buf: &mut [u8; 24]) -> (*const u8, usize) {
    let end = buf.as_mut_ptr_range().end;
    // SAFETY: at most 20 digits are written, all inside the 24-byte buffer.
    unsafe {
        let mut p = end;
        loop {
            p = p.sub(1);
            *p = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        (p, end.offset_from(p) as usize)
    }
}

/// Writes `bytes` to stdout (one write; the lines are short).
pub fn write_all(bytes: &[u8]) {
    write_raw(bytes.as_ptr(), bytes.len());
}

fn write_raw(p: *const u8, len: usize) {
    // SAFETY: p points to len bytes of one of our buffers.
    unsafe { libc::write(1, p.cast(), len) };
}

/// Writes `v` in decimal to stdout.
pub fn write_u64(v: u64) {
    let mut b = [0u8; 24];
    let (p, n) = digits(v, &mut b);
    write_raw(p, n);
}

/// Prints the result lines: the count, the wall seconds since `start` (monotonic
/// nanoseconds) with nine decimals, and the window `start` to now (the worker protocol's
/// `WINDOW|start_ns|stop_ns`, see `patchbench::unixbench::protocol`).
pub fn report(count: u64, start: u64) {
    let stop = now_ns();
    let wall = stop.saturating_sub(start);
    write_all(b"COUNT|");
    write_u64(count);
    write_all(b"|1|lps\nWALL|");
    write_u64(wall / 1_000_000_000);
    write_all(b".");
    // Nine fractional digits: 1_000_000_000 + fraction without its leading 1.
    let mut b = [0u8; 24];
    let (p, n) = digits(1_000_000_000 + wall % 1_000_000_000, &mut b);
    // SAFETY: the number has ten digits; skipping the first stays inside it.
    write_raw(unsafe { p.add(1) }, n - 1);
    write_all(b"\nWINDOW|");
    write_u64(start);
    write_all(b"|");
    write_u64(stop);
    write_all(b"\n");
}

/// Prints `ERROR|<what>: <the current errno's description>`.
pub fn error(what: &[u8]) {
    write_all(b"ERROR|");
    write_all(what);
    end_with_errno();
}

/// Ends an error line with `: <the current errno's description>`.
pub fn end_with_errno() {
    // SAFETY: strerror returns a NUL-terminated string owned by libc.
    unsafe {
        let msg: *const c_char = libc::strerror(*libc::__errno_location());
        write_all(b": ");
        write_raw(msg.cast(), libc::strlen(msg));
    }
    write_all(b"\n");
}
