//! `patchbench-spawn`: the forking loop of Process Creation (`spawn`, unixbench.md §4.9), in a
//! program as small as UnixBench's: `no_std`, libc only, lazily bound (build.rs), so that
//! each `fork()` copies the address space of a small libc program and each child's `exit(0)`
//! runs libc's exit path (atexit handlers, stdio flush, the loader's destructors, and the lazy
//! binding of `exit` itself, which the parent never calls) for libc alone, as UnixBench's
//! children do; see `patchbench::unixbench::workloads::process_creation` for the figures.
//!
//! Usage (by `patchbench-worker`, which execs this program before the start barrier):
//! `patchbench-spawn SECONDS [exec]`. It prints `READY`, reads stdin until EOF (the runner's
//! release), then loops until SIGALRM sets the stop flag, and prints `COUNT|n|1|lps`,
//! `WALL|seconds` and `WINDOW|start_ns|stop_ns`. The loop:
//! - default (`spawn`): `fork()`; the child `exit(0)`s; the parent `wait()`s and checks the
//!   status;
//! - `exec` (`sysexec`, UnixBench's `syscall SECS exec`): `fork()`; the child
//!   `execl("/bin/true", "/bin/true", NULL)`, or `exit(1)` if that fails; the parent
//!   `waitpid()`s for it. Like UnixBench's `syscall` the program forking is a small libc one.
#![warn(
    clippy::undocumented_unsafe_blocks,
    clippy::unwrap_used,
    clippy::expect_used
)]
#![cfg_attr(panic = "abort", no_std)]
#![no_main]

mod nostd;

use core::ffi::{c_char, c_int};
use core::sync::atomic::{AtomicBool, Ordering};
use nostd::{end_with_errno, error, now_ns, report, write_all, write_u64};

/// Set by the SIGALRM handler.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_alarm(_: c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// Installs the SIGALRM handler (SA_RESTART, as glibc's signal() does) and arms the timer.
fn arm(seconds: f64) -> bool {
    let usec = (seconds * 1e6) as i64;
    let usec = if usec < 1 { 1 } else { usec };
    // SAFETY: the structures are fully initialised; the handler only does an atomic store.
    unsafe {
        let mut action: libc::sigaction = core::mem::zeroed();
        action.sa_sigaction = on_alarm as extern "C" fn(c_int) as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        let timer = libc::itimerval {
            it_interval: libc::timeval {
                tv_sec: 0,
                tv_usec: 0,
            },
            it_value: libc::timeval {
                tv_sec: usec / 1_000_000,
                tv_usec: usec % 1_000_000,
            },
        };
        libc::sigaction(libc::SIGALRM, &action, core::ptr::null_mut()) == 0
            && libc::setitimer(libc::ITIMER_REAL, &timer, core::ptr::null_mut()) == 0
    }
}

/// Prints READY and blocks until stdin reaches EOF (the runner's start barrier).
fn wait_for_release() -> bool {
    write_all(b"READY\n");
    let mut buf = [0u8; 64];
    loop {
        // SAFETY: reading into our buffer.
        let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
        if n == 0 {
            return true;
        }
        // SAFETY: reading errno.
        if n < 0 && unsafe { *libc::__errno_location() } != libc::EINTR {
            return false;
        }
    }
}

#[no_mangle]
extern "C" fn main(argc: c_int, argv: *const *const c_char) -> c_int {
    if argc != 2 && argc != 3 {
        write_all(b"ERROR|usage: patchbench-spawn SECONDS [exec]\n");
        return 2;
    }
    // SAFETY: argv[2], when present, is a NUL-terminated string.
    let exec = argc == 3 && unsafe { libc::strcmp(*argv.add(2), c"exec".as_ptr()) } == 0;
    if argc == 3 && !exec {
        write_all(b"ERROR|patchbench-spawn: the only mode is exec\n");
        return 2;
    }
    // SAFETY: argv[1] is a NUL-terminated string.
    let seconds = unsafe { libc::strtod(*argv.add(1), core::ptr::null_mut()) };
    if seconds.is_nan() || seconds <= 0.0 {
        write_all(b"ERROR|patchbench-spawn: bad duration\n");
        return 2;
    }
    if !wait_for_release() {
        error(b"spawn: start barrier");
        return 1;
    }
    let start = now_ns();
    if !arm(seconds) {
        error(b"spawn: timer");
        return 1;
    }
    let loops = if exec { exec_loop() } else { spawn_loop() };
    match loops {
        Some(n) => {
            report(n, start);
            0
        }
        None => 1,
    }
}

/// Process Creation's loop; None after printing an error line.
fn spawn_loop() -> Option<u64> {
    let mut loops: u64 = 0;
    while !STOP.load(Ordering::Relaxed) {
        // SAFETY: this program is single-threaded; the child only calls exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: leaving the child through libc's exit, as UnixBench's child does.
            unsafe { libc::exit(0) };
        }
        if pid < 0 {
            write_all(b"ERROR|spawn: fork failed at iteration ");
            write_u64(loops);
            end_with_errno();
            return None;
        }
        let mut status: c_int = 0;
        // SAFETY: waiting for our only child.
        if unsafe { libc::wait(&mut status) } < 0 {
            error(b"spawn: wait");
            return None;
        }
        if status != 0 {
            write_all(b"ERROR|spawn: bad wait status ");
            write_u64(status as u64);
            write_all(b"\n");
            return None;
        }
        loops += 1;
    }
    Some(loops)
}

/// Exec System Call Overhead's loop; None after printing an error line.
fn exec_loop() -> Option<u64> {
    let path = c"/bin/true";
    let mut loops: u64 = 0;
    while !STOP.load(Ordering::Relaxed) {
        // SAFETY: this program is single-threaded; the child only calls execl and exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: a NULL-terminated argument list of valid C strings.
            unsafe {
                libc::execl(path.as_ptr(), path.as_ptr(), core::ptr::null::<c_char>());
                libc::exit(1);
            }
        }
        if pid < 0 {
            write_all(b"ERROR|sysexec: fork failed at iteration ");
            write_u64(loops);
            end_with_errno();
            return None;
        }
        let mut status: c_int = 0;
        // SAFETY: waiting for our own child.
        if unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
            error(b"sysexec: waitpid");
            return None;
        }
        if status != 0 {
            write_all(b"ERROR|sysexec: exec /bin/true failed, wait status ");
            write_u64(status as u64);
            write_all(b"\n");
            return None;
        }
        loops += 1;
    }
    Some(loops)
}
