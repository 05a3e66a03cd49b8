//! Execl Throughput (`execl`, unixbench.md §4.3).
//!
//! After the start barrier the worker execs `patchbench-execl` (src/bin/patchbench-execl.rs),
//! which replaces itself with a fresh copy of itself again and again: each image adds one to
//! the counter, checks the deadline and, if time remains, `execv`s itself with the counter,
//! the start time and the deadline in its arguments (state travels in argv, as in UnixBench).
//! That program uses no Rust runtime (C `main`, libc calls only), so one exec costs about what
//! an exec of UnixBench's small C program costs, not the start-up of a large binary.
//!
//! Differences from UnixBench: the deadline is checked with CLOCK_MONOTONIC in nanoseconds
//! instead of whole-second `time()`, so a 30 s run lasts 30 s rather than 29–30 s; the rate is
//! the same. Unit: lps (execs per second of wall time). Baseline 43.0 lps.

use super::timer::os_error;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// `patchbench-execl`, next to the running program.
pub fn program() -> std::io::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let p = exe.with_file_name("patchbench-execl");
    if p.is_file() {
        Ok(p)
    } else {
        Err(std::io::Error::other(format!(
            "{} is missing; build every binary",
            p.display()
        )))
    }
}

/// Replaces this process with `patchbench-execl 0 START DEADLINE`; returns only on failure.
pub fn start(program: &Path, start_ns: u64, deadline_ns: u64) -> std::io::Error {
    let args = [
        program.as_os_str().as_bytes().to_vec(),
        b"0".to_vec(),
        start_ns.to_string().into_bytes(),
        deadline_ns.to_string().into_bytes(),
    ];
    let cargs: Vec<CString> = match args.into_iter().map(CString::new).collect() {
        Ok(c) => c,
        Err(e) => return std::io::Error::other(e),
    };
    let mut argv: Vec<*const libc::c_char> = cargs.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    // SAFETY: argv is a NULL-terminated array of valid C strings that outlive the call.
    unsafe { libc::execv(cargs[0].as_ptr(), argv.as_ptr()) };
    os_error(&format!("execv {}", program.display()))
}
