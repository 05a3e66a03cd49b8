//! AIM7 `exec_test` ("Program Loads", args "5", factor 5): one job does 5 × (fork; the child
//! `execl("./true", "true")`, relative to the task's directory, and exits with -1 if that
//! fails; the parent `wait()`s until ECHILD).
//!
//! `./true` is what AIM's setup makes: a one-line `#!/bin/sh` script (the driver writes it in
//! the tasks' directory), so every exec also starts a shell that reads the empty script.

use super::shell::{fork_and_wait, succeeded};
use super::{Factor, Fail, Job, TaskCtx};

pub const JOB: Job = Job {
    name: "exec_test",
    args: "5",
    factor: Factor::Fixed(5),
    units: "Program Loads",
    extra_procs: 1,
    counters: &["fork", "exec_ok"],
    run,
    ..Job::BASE
};

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let execs: u64 = ctx.arg(0)?;
    let argv = [c"true".as_ptr(), std::ptr::null()];
    for _ in 0..execs {
        ctx.counters[0] += 1;
        let status = fork_and_wait(|| {
            // SAFETY: valid path and NULL-terminated argv.
            unsafe { libc::execv(c"./true".as_ptr(), argv.as_ptr()) };
            -1
        })?;
        if !succeeded(status) {
            return Err(Fail {
                op: "exec ./true",
                errno: libc::ENOEXEC,
            });
        }
        ctx.counters[1] += 1;
    }
    Ok(())
}
