//! `patchbench-execl`: the small program the Execl Throughput test execs over and over
//! (unixbench.md §4.3). Each image does the per-image work of UnixBench's `execl.c`: it parses
//! its arguments with `atoi` ×3 and `sscanf("%lu")`, adds one to the count, formats the count
//! and the start back with `sprintf` ×2, calls `time()`, and, until the deadline, replaces
//! itself with a fresh copy of itself through a five-argument `execl`; the last image prints
//! `COUNT|n|1|lps` and `WALL|seconds` on stdout for the runner.
//!
//! `no_std`, libc only, lazily bound (build.rs) and carrying an 8 KiB bss array, like
//! UnixBench's program, so that an exec of it costs what an exec of that program costs,
//! lazy symbol resolution and first-use faults in libc's scanf/printf included (see
//! `patchbench::unixbench::workloads::execl_throughput` for what still differs, with figures).
//!
//! Usage (by `patchbench-worker`): `patchbench-execl 0 DURATION_MS COUNT START_NS`, UnixBench's
//! continuation form with the duration in milliseconds and the start on the monotonic clock
//! in nanoseconds.
#![warn(
    clippy::undocumented_unsafe_blocks,
    clippy::unwrap_used,
    clippy::expect_used
)]
#![cfg_attr(panic = "abort", no_std)]
#![no_main]

mod nostd;

use core::ffi::{c_char, c_int, c_ulong};
use nostd::{error, now_ns, report, write_all};

/// UnixBench's `char bss[8*1024]` ("something worthwhile"): never touched, only mapped.
#[used]
static mut BSS: [u8; 8 * 1024] = [0; 8 * 1024];

#[no_mangle]
extern "C" fn main(argc: c_int, argv: *const *const c_char) -> c_int {
    if argc != 5 {
        write_all(b"ERROR|usage: patchbench-execl 0 DURATION_MS COUNT START_NS\n");
        return 2;
    }
    let mut count_str: [c_char; 12] = [0; 12];
    let mut start_str: [c_char; 24] = [0; 24];
    // SAFETY: argv holds argc valid NUL-terminated strings (C calling convention); the format
    // strings are NUL-terminated literals whose conversions match the arguments; the output
    // buffers hold the longest number each can receive (a count below 2^31, a u64).
    unsafe {
        if libc::atoi(*argv.add(1)) != 0 {
            write_all(b"ERROR|patchbench-execl: only the continuation form is supported\n");
            return 2;
        }
        let path = *argv;
        let dur_str = *argv.add(2);
        let duration_ms = libc::atoi(dur_str);
        let mut count = libc::atoi(*argv.add(3)) as c_ulong;
        let mut start: c_ulong = 0;
        if libc::sscanf(*argv.add(4), c"%lu".as_ptr(), &mut start as *mut c_ulong) != 1 {
            write_all(b"ERROR|patchbench-execl: malformed arguments\n");
            return 2;
        }
        count += 1;
        libc::sprintf(count_str.as_mut_ptr(), c"%lu".as_ptr(), count);
        libc::sprintf(start_str.as_mut_ptr(), c"%lu".as_ptr(), start);
        // UnixBench compares whole seconds of time(); the deadline here is on the monotonic
        // clock (sub-second durations, no 1 s truncation), but the call is made all the same.
        core::hint::black_box(libc::time(core::ptr::null_mut()));
        let elapsed = now_ns().saturating_sub(start as u64);
        if elapsed >= duration_ms as u64 * 1_000_000 {
            report(count as u64, start as u64);
            return 0;
        }
        libc::execl(
            path,
            path,
            c"0".as_ptr(),
            dur_str,
            count_str.as_ptr(),
            start_str.as_ptr(),
            core::ptr::null::<c_char>(),
        );
    }
    error(b"patchbench-execl: execl failed");
    1
}
