//! The small `no_std` programs a worker hands its copy over to (`patchbench-execl` for
//! `execl`, `patchbench-spawn` for `spawn`): found next to the running worker and started by
//! replacing the worker's image, so that the process the test measures is a small libc-only
//! program, as UnixBench's are.

use super::timer::os_error;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The program `name`, next to the running program.
pub fn program(name: &str) -> std::io::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let p = exe.with_file_name(name);
    if p.is_file() {
        Ok(p)
    } else {
        Err(std::io::Error::other(format!(
            "{} is missing; build every binary",
            p.display()
        )))
    }
}

/// Replaces this process with `program args...` (argv[0] is the program's path); returns only
/// on failure.
pub fn exec(program: &Path, args: &[String]) -> std::io::Error {
    let mut cargs = vec![match CString::new(program.as_os_str().as_bytes()) {
        Ok(c) => c,
        Err(e) => return std::io::Error::other(e),
    }];
    for a in args {
        match CString::new(a.as_bytes()) {
            Ok(c) => cargs.push(c),
            Err(e) => return std::io::Error::other(e),
        }
    }
    let mut argv: Vec<*const libc::c_char> = cargs.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    // SAFETY: argv is a NULL-terminated array of valid C strings that outlive the call.
    unsafe { libc::execv(cargs[0].as_ptr(), argv.as_ptr()) };
    os_error(&format!("execv {}", program.display()))
}
