//! `patchbench-execl`: the small program the Execl Throughput test execs over and over
//! (unixbench.md §4.3). Each image adds one to the count carried in argv and, until the
//! deadline on the monotonic clock, replaces itself with a fresh copy of itself; the last image
//! prints `COUNT|n|1|lps` and `WALL|seconds` on stdout for the runner.
//!
//! It uses no Rust runtime or standard library (`#![no_std]`, `#![no_main]`: a C `main`, libc
//! calls, no allocation), so it links only libc and an exec of it costs what an exec of
//! UnixBench's small C program costs, not the start-up of a Rust binary. This needs
//! `panic = "abort"` (Cargo.toml). Usage (by `patchbench-worker`):
//! `patchbench-execl COUNT START_NS DEADLINE_NS`.
#![no_std]
#![no_main]

use core::ffi::{c_char, c_int};

// Without std nothing else asks the linker for libc.
#[link(name = "c")]
extern "C" {}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: abort has no preconditions.
    unsafe { libc::abort() }
}

/// The precompiled `core` is built for unwinding, so an unoptimised (dev) build still refers to
/// the unwinding personality routine. With panic = "abort" nothing ever unwinds, so it is
/// never called; this empty definition only satisfies the linker.
#[no_mangle]
extern "C" fn rust_eh_personality() {}

/// Nanoseconds on the monotonic clock.
fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Parses a NUL-terminated decimal argument.
///
/// # Safety
/// `arg` must point to a NUL-terminated string.
unsafe fn parse(arg: *const c_char) -> Option<u64> {
    let mut p = arg;
    let mut v: u64 = 0;
    if *p == 0 {
        return None;
    }
    while *p != 0 {
        let d = (*p as u8).wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
        p = p.add(1);
    }
    Some(v)
}

/// Writes `v` in decimal, NUL-terminated, at the end of `buf`; returns a pointer to the
/// first digit and the number of digits. Written without indexing so that no bounds-check panic
/// path (and with it Rust's panic and backtrace machinery) is linked into this program.
fn format(mut v: u64, buf: &mut [u8; 24]) -> (*const u8, usize) {
    let end = buf.as_mut_ptr_range().end;
    // SAFETY: at most 20 digits and a NUL are written, all inside the 24-byte buffer.
    unsafe {
        let mut p = end.sub(1);
        *p = 0;
        loop {
            p = p.sub(1);
            *p = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        (p, end.offset_from(p) as usize - 1)
    }
}

fn write_all(bytes: &[u8]) {
    write_raw(bytes.as_ptr(), bytes.len());
}

fn write_raw(p: *const u8, len: usize) {
    // SAFETY: p points to len bytes of one of our buffers.
    unsafe { libc::write(1, p.cast(), len) };
}

/// Prints the result lines: count, and wall seconds with nanosecond digits.
fn report(count: u64, start: u64) {
    let wall = now_ns().saturating_sub(start);
    let mut b = [0u8; 24];
    write_all(b"COUNT|");
    let (p, n) = format(count, &mut b);
    write_raw(p, n);
    write_all(b"|1|lps\nWALL|");
    let (p, n) = format(wall / 1_000_000_000, &mut b);
    write_raw(p, n);
    write_all(b".");
    // Nine fractional digits: format 1_000_000_000 + fraction and skip the leading 1.
    let (p, n) = format(1_000_000_000 + wall % 1_000_000_000, &mut b);
    // SAFETY: the number has ten digits; skipping the first stays inside it.
    write_raw(unsafe { p.add(1) }, n - 1);
    write_all(b"\n");
}

#[no_mangle]
extern "C" fn main(argc: c_int, argv: *const *const c_char) -> c_int {
    if argc != 4 {
        write_all(b"ERROR|usage: patchbench-execl COUNT START_NS DEADLINE_NS\n");
        return 2;
    }
    // SAFETY: argv holds argc valid NUL-terminated strings, per the C calling convention.
    let (program, args) = unsafe {
        (
            *argv,
            [
                parse(*argv.add(1)),
                parse(*argv.add(2)),
                parse(*argv.add(3)),
            ],
        )
    };
    let [Some(count), Some(start), Some(deadline)] = args else {
        write_all(b"ERROR|patchbench-execl: malformed arguments\n");
        return 2;
    };
    let count = count + 1;
    if now_ns() >= deadline {
        report(count, start);
        return 0;
    }
    let (mut c, mut s, mut d) = ([0u8; 24], [0u8; 24], [0u8; 24]);
    let cp = format(count, &mut c).0;
    let sp = format(start, &mut s).0;
    let dp = format(deadline, &mut d).0;
    let next: [*const c_char; 5] = [program, cp.cast(), sp.cast(), dp.cast(), core::ptr::null()];
    // SAFETY: a NULL-terminated argv of NUL-terminated strings that live until the call.
    unsafe { libc::execv(program, next.as_ptr()) };
    write_all(b"ERROR|patchbench-execl: execv failed\n");
    1
}
