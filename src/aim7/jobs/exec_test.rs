//! AIM7 `exec_test` ("Program Loads", factor 5): one job does 5 × (fork; the child execs a
//! `true` program; the parent waits). AIM runs its own tiny `./true`; patchbench runs the
//! system's `true` (/bin/true or /usr/bin/true), whose path the driver resolves beforehand.

use super::fork_test::wait_for;
use super::{Factor, Fail, Fixture, Job, TaskCtx};

const EXECS: u64 = 5;

pub const JOB: Job = Job {
    name: "exec_test",
    aliases: &[],
    factor: Factor::Fixed(EXECS),
    units: "Program Loads",
    uses_dirs: false,
    fixture: Fixture::None,
    extra_procs: 1,
    counters: &["fork", "exec_ok"],
    run,
};

/// The `true` program exec_test runs, if the system has one.
pub fn find_true() -> Option<std::path::PathBuf> {
    ["/bin/true", "/usr/bin/true"]
        .iter()
        .map(std::path::PathBuf::from)
        .find(|p| nix::unistd::access(p, nix::unistd::AccessFlags::X_OK).is_ok())
}

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let argv = [c"true".as_ptr(), std::ptr::null()];
    for _ in 0..EXECS {
        // SAFETY: the task is single-threaded; the child only execs or _exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: valid program path and NULL-terminated argv.
            unsafe {
                libc::execv(ctx.true_program.as_ptr(), argv.as_ptr());
                libc::_exit(127);
            }
        }
        if pid < 0 {
            return Err(Fail::last("fork"));
        }
        ctx.counters[0] += 1;
        let status = wait_for(pid)?;
        if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
            return Err(Fail {
                op: "exec true",
                errno: libc::ENOEXEC,
            });
        }
        ctx.counters[1] += 1;
    }
    Ok(())
}
