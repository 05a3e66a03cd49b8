//! UnixBench's `looper` (`src/looper.c`, unixbench.md §4.10), which the shell tests, `C`, `dc`
//! and `grep` run under: loop { `fork()`; the child `execvp`s the command; the parent
//! `wait`s; exit status 99 means the exec failed, any other non-zero status is an error; one
//! loop counted } until the timer fires. The loop running at the deadline is not counted, and
//! the copy's wall time includes waiting for it, as Run's `elapsed` includes that child, which
//! keeps Run's pipe open after looper has exited.
//!
//! The command's standard input is what UnixBench's shell gives looper: nothing special, or a
//! file opened once before the loop (`looper 30 dc < dc.dat`), whose one open file every child
//! inherits, offset included. Its standard output goes to /dev/null, where UnixBench appends it
//! to the run's log file (a grep count line per loop; the shell tests write nothing). Its
//! standard error is the worker's, which the runner records.

use super::timer::{os_error, stopped};
use std::ffi::CString;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

/// A command ready to loop: its argv and the files its children get as stdin and stdout.
pub struct Command {
    argv: Vec<CString>,
    stdin: Option<File>,
    stdout: File,
}

impl Command {
    /// `argv` as given to `execvp` (a name without `/` is looked up in PATH); `stdin`, if
    /// any, is opened now, once.
    pub fn new(argv: &[&str], stdin: Option<&Path>) -> std::io::Result<Command> {
        let argv = argv
            .iter()
            .map(|a| CString::new(*a).map_err(std::io::Error::other))
            .collect::<std::io::Result<Vec<_>>>()?;
        if argv.is_empty() {
            return Err(std::io::Error::other("looper: no command"));
        }
        let stdin = match stdin {
            Some(p) => Some(File::open(p).map_err(|e| {
                std::io::Error::new(e.kind(), format!("open {}: {e}", p.display()))
            })?),
            None => None,
        };
        let stdout = std::fs::OpenOptions::new().write(true).open("/dev/null")?;
        Ok(Command {
            argv,
            stdin,
            stdout,
        })
    }

    fn name(&self) -> String {
        self.argv
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Runs `cmd` again and again until the stop flag is set; returns the completed loops.
pub fn run(cmd: &Command) -> std::io::Result<u64> {
    let mut argv: Vec<*const libc::c_char> = cmd.argv.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let stdin = cmd.stdin.as_ref().map(|f| f.as_raw_fd());
    let stdout = cmd.stdout.as_raw_fd();
    let mut loops = 0;
    while !stopped() {
        // SAFETY: the worker is single-threaded; the child only calls dup2, execvp and _exit.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(os_error(&format!("fork failed at iteration {loops}")));
        }
        if pid == 0 {
            // SAFETY: the descriptors are open; argv is NULL-terminated and valid; 99 tells
            // the parent the exec failed, as looper.c's child does.
            unsafe {
                if let Some(fd) = stdin {
                    libc::dup2(fd, 0);
                }
                libc::dup2(stdout, 1);
                libc::execvp(argv[0], argv.as_ptr());
                libc::_exit(99);
            }
        }
        let mut status: libc::c_int = 0;
        // SAFETY: waiting for our own child.
        if unsafe { libc::waitpid(pid, &mut status, 0) } != pid {
            return Err(os_error("waitpid"));
        }
        if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 99 {
            return Err(std::io::Error::other(format!(
                "could not exec {}",
                cmd.name()
            )));
        }
        if status != 0 {
            return Err(std::io::Error::other(format!(
                "{} failed, wait status {status:#x}",
                cmd.name()
            )));
        }
        if stopped() {
            break; // the loop in progress at the deadline is not counted
        }
        loops += 1;
    }
    Ok(loops)
}
