//! The AIM7 task program, `patchbench-aim7-task`, as the driver sees it: where it is, the
//! command line that carries a task's plan, and the exec in a child just forked from the
//! driver. The task side of the same command line is [`parse`], and the program's entry
//! point is [`main`].
//!
//! The command line (every field one argument; paths as bytes):
//!
//! `patchbench-aim7-task aim7-task/1 TASK LOAD DISK_BLOCKS GO_FD REPORT_FD LOG_FD SUITE_DIR
//!  NDIRS DIR... (TEST COUNT)...`
//!
//! GO_FD is the start gate's read end, REPORT_FD the report pipe's write end, LOG_FD AIM's
//! shared log (-1: none); they are the only descriptors of the driver left open across the
//! exec (besides 0, 1 and 2). TEST COUNT is one workfile line each: the test's name and the
//! jobs of it each task runs. The environment is the driver's with PATH replaced by the
//! tasks' (the suite directory appended).

use super::jobs::{self, TaskDir};
use super::suite::TABLES_FILE;
use super::task::{task_body, TaskFds, TaskPlan};
use crate::error::usage;
use std::ffi::{CStr, CString, OsStr, OsString};
use std::os::fd::RawFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

/// The program's name, next to the patchbench executable.
pub const PROGRAM: &str = "patchbench-aim7-task";
/// Overrides where the program is.
pub const PROGRAM_ENV: &str = "PATCHBENCH_AIM7_TASK";
/// The first argument: the version of this command line.
const VERSION: &str = "aim7-task/1";
/// The exit status of a forked child whose exec failed (it reports why first).
pub const EXEC_FAILED: i32 = 127;

/// The task program: $PATCHBENCH_AIM7_TASK, else next to this executable; one line and exit 2
/// when it is missing.
pub fn locate() -> anyhow::Result<CString> {
    let path = match std::env::var_os(PROGRAM_ENV) {
        Some(p) => PathBuf::from(p),
        None => std::env::current_exe()?.with_file_name(PROGRAM),
    };
    let path = std::path::absolute(&path).unwrap_or(path);
    if !path.is_file() {
        return usage(format!(
            "the AIM7 task program {} is missing; build every binary with `cargo build \
             --release` (or set {PROGRAM_ENV} to its path)",
            path.display()
        ));
    }
    Ok(CString::new(path.into_os_string().into_vec())?)
}

fn arg(s: impl AsRef<[u8]>) -> CString {
    CString::new(s.as_ref()).unwrap_or_default()
}

/// The exec of one load point's tasks, built once before the first fork: the program, the
/// command line (all but TASK the same for every task) and the environment.
pub struct Exec {
    program: CString,
    argv: Vec<CString>,
    envp: Vec<CString>,
    envp_ptrs: Vec<*const libc::c_char>,
}

/// Where TASK is in the command line.
const TASK_ARG: usize = 2;

impl Exec {
    /// The exec of `plan`'s tasks, which get `go` and `report` as GO_FD and REPORT_FD.
    pub fn new(plan: &TaskPlan, go: RawFd, report: RawFd) -> Exec {
        let mut argv = vec![
            arg(PROGRAM),
            arg(VERSION),
            arg("0"),
            arg(plan.load.to_string()),
            arg(plan.disk_blocks.to_string()),
            arg(go.to_string()),
            arg(report.to_string()),
            arg(plan.log_fd.to_string()),
            plan.suite_dir.clone(),
            arg(plan.dirs.len().to_string()),
        ];
        argv.extend(plan.dirs.iter().map(|d| arg(&d.path)));
        for (name, count) in plan.names.iter().zip(&plan.counts) {
            argv.push(name.clone());
            argv.push(arg(count.to_string()));
        }
        let mut path = b"PATH=".to_vec();
        path.extend_from_slice(plan.path_env.as_bytes());
        let envp: Vec<CString> = std::env::vars_os()
            .filter(|(k, _)| k != "PATH")
            .map(|(k, v)| {
                let mut kv = k.into_vec();
                kv.push(b'=');
                kv.extend_from_slice(v.as_bytes());
                arg(kv)
            })
            .chain(std::iter::once(arg(path)))
            .collect();
        let envp_ptrs = envp
            .iter()
            .map(|e| e.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        Exec {
            program: plan.program.clone(),
            argv,
            envp,
            envp_ptrs,
        }
    }

    /// The command line of task `task`, for [`Exec::exec`].
    pub fn argv(&self, task: u32) -> Argv {
        let number = arg(task.to_string());
        let ptrs = self
            .argv
            .iter()
            .enumerate()
            .map(|(i, a)| {
                if i == TASK_ARG {
                    number.as_ptr()
                } else {
                    a.as_ptr()
                }
            })
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        Argv {
            _number: number,
            ptrs,
        }
    }

    /// In a child just forked from the driver, after `become_child`: marks every descriptor
    /// close-on-exec except `keep` (the gate, the report pipe, the log) and execs the program.
    /// Returns only if the exec failed, with its errno. Async-signal-safe calls only.
    ///
    /// # Safety
    /// Call only in a child just forked from the single-threaded driver.
    pub unsafe fn exec(&self, argv: &Argv, keep: &[RawFd]) -> i32 {
        // Every descriptor from 3 up close-on-exec (Linux 5.11; the driver opens its own
        // close-on-exec anyway), then the three the task needs inheritable.
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        );
        for &fd in keep.iter().filter(|&&fd| fd >= 0) {
            if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                return errno();
            }
        }
        libc::execve(
            self.program.as_ptr(),
            argv.ptrs.as_ptr(),
            self.envp_ptrs.as_ptr(),
        );
        errno()
    }

    /// The program, for messages.
    pub fn program(&self) -> &CStr {
        &self.program
    }

    /// Bytes of the environment the tasks get.
    pub fn env_bytes(&self) -> usize {
        self.envp.iter().map(|e| e.as_bytes().len() + 1).sum()
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// One task's command line, as pointers for execve (kept alive with the task's number).
pub struct Argv {
    _number: CString,
    ptrs: Vec<*const libc::c_char>,
}

/// What a task program's command line says: the plan, the task's number and its descriptors.
pub struct Parsed {
    pub plan: TaskPlan,
    pub task: u32,
    pub go: RawFd,
    pub report: RawFd,
}

fn number<'a, T: std::str::FromStr>(it: &mut impl Iterator<Item = &'a OsStr>) -> Option<T> {
    it.next()?.to_str()?.parse().ok()
}

/// Reads the command line [`Exec`] builds; None if it is not one.
pub fn parse(args: &[OsString]) -> Option<Parsed> {
    let mut it = args.iter().skip(1).map(|a| a.as_os_str());
    if it.next()? != VERSION {
        return None;
    }
    let task = number(&mut it)?;
    let load = number(&mut it)?;
    let disk_blocks = number(&mut it)?;
    let go = number(&mut it)?;
    let report = number(&mut it)?;
    let log_fd = number(&mut it)?;
    let suite_dir = arg(it.next()?.as_bytes());
    let ndirs: usize = number(&mut it)?;
    let dirs = (0..ndirs)
        .map(|_| it.next().map(|d| TaskDir::new(std::path::Path::new(d))))
        .collect::<Option<Vec<_>>>()?;
    let rest: Vec<&OsStr> = it.collect();
    if rest.is_empty() || !rest.len().is_multiple_of(2) {
        return None;
    }
    let mut plan = TaskPlan {
        program: CString::default(),
        jobs: Vec::new(),
        names: Vec::new(),
        counts: Vec::new(),
        dirs,
        disk_blocks,
        load,
        suite_dir,
        path_env: CString::default(),
        log_fd,
    };
    for pair in rest.chunks(2) {
        let name = pair[0].to_str()?;
        plan.jobs.push(jobs::find(name)?);
        plan.names.push(arg(name));
        plan.counts.push(pair[1].to_str()?.parse().ok()?);
    }
    Some(Parsed {
        plan,
        task,
        go,
        report,
    })
}

/// Exit statuses of a task that could not start.
const BAD_COMMAND_LINE: i32 = 2;
const CANNOT_START: i32 = 5;

/// Entry point of the task program; returns its exit status.
pub fn main(args: Vec<OsString>) -> i32 {
    crate::proc::child::report_panics_as("aim7 task");
    let Some(p) = parse(&args) else {
        crate::safe_text::eprint_line(&format!(
            "patchbench: usage: {} ... (started by `patchbench aim7`, not by hand)",
            PROGRAM
        ));
        return BAD_COMMAND_LINE;
    };
    // SAFETY: suite_dir is NUL-terminated.
    if unsafe { libc::chdir(p.plan.suite_dir.as_ptr()) } < 0 {
        crate::safe_text::eprint_line(&format!(
            "patchbench: aim7 task {}: cannot enter {}: {}",
            p.task,
            p.plan.suite_dir.to_string_lossy(),
            std::io::Error::last_os_error()
        ));
        return CANNOT_START;
    }
    let tables = CString::new(TABLES_FILE).unwrap_or_default();
    if let Err(e) = jobs::num_fcns::attach(&tables) {
        crate::safe_text::eprint_line(&format!(
            "patchbench: aim7 task {}: cannot map {TABLES_FILE}: {e}",
            p.task
        ));
        return CANNOT_START;
    }
    let fds = TaskFds {
        go_read: p.go,
        report_write: p.report,
    };
    task_body(&p.plan, p.task, &fds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> TaskPlan {
        TaskPlan {
            program: arg("/x/patchbench-aim7-task"),
            jobs: vec![
                jobs::find("creat-clo").unwrap(),
                jobs::find("sieve").unwrap(),
            ],
            names: vec![arg("creat-clo"), arg("sieve")],
            counts: vec![3, 1],
            dirs: vec![
                TaskDir::new(std::path::Path::new("/d/one")),
                TaskDir::new(std::path::Path::new("/d/two")),
            ],
            disk_blocks: 1034,
            load: 3000,
            suite_dir: arg("/tmp/suite"),
            path_env: arg("/bin:/tmp/suite"),
            log_fd: 9,
        }
    }

    fn os_args(exec: &Exec, task: u32) -> Vec<OsString> {
        let argv = exec.argv(task);
        argv.ptrs
            .iter()
            .take_while(|p| !p.is_null())
            // SAFETY: the pointers point into live CStrings of `exec` and `argv`.
            .map(|&p| OsStr::from_bytes(unsafe { CStr::from_ptr(p) }.to_bytes()).to_owned())
            .collect()
    }

    #[test]
    fn a_plan_survives_the_command_line() {
        let exec = Exec::new(&plan(), 5, 7);
        let args = os_args(&exec, 2999);
        assert_eq!(args[0], PROGRAM);
        let p = parse(&args).unwrap();
        assert_eq!((p.task, p.go, p.report), (2999, 5, 7));
        let (a, b) = (p.plan, plan());
        assert_eq!(a.names, b.names);
        assert_eq!(a.counts, b.counts);
        assert_eq!(
            a.jobs.iter().map(|j| j.name).collect::<Vec<_>>(),
            ["creat-clo", "sieve"]
        );
        assert_eq!(a.dirs[1].common_file, b.dirs[1].common_file);
        assert_eq!(
            (a.disk_blocks, a.load, a.log_fd, &a.suite_dir),
            (1034, 3000, 9, &b.suite_dir)
        );
        assert_eq!(a.jobs_per_task(), 4);
        // Only TASK differs between tasks.
        let other = os_args(&exec, 0);
        assert_eq!(other[TASK_ARG], "0");
        assert_eq!(other[TASK_ARG + 1..], args[TASK_ARG + 1..]);
    }

    #[test]
    fn the_tasks_path_replaces_the_drivers() {
        let exec = Exec::new(&plan(), 5, 7);
        let paths: Vec<&CString> = exec
            .envp
            .iter()
            .filter(|e| e.as_bytes().starts_with(b"PATH="))
            .collect();
        assert_eq!(paths, [&arg("PATH=/bin:/tmp/suite")]);
        assert!(exec.env_bytes() > 0);
    }

    #[test]
    fn anything_else_is_not_a_task_command_line() {
        let args = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(parse(&args(&[PROGRAM])).is_none());
        assert!(parse(&args(&[PROGRAM, "aim7-task/0", "0"])).is_none());
        let mut good = os_args(&Exec::new(&plan(), 5, 7), 1);
        assert!(parse(&good).is_some());
        good.pop();
        assert!(parse(&good).is_none(), "a test without its count");
        let mut unknown = os_args(&Exec::new(&plan(), 5, 7), 1);
        let n = unknown.len();
        unknown[n - 2] = "no_such_test".into();
        assert!(parse(&unknown).is_none());
    }
}
