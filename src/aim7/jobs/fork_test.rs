//! AIM7 `fork_test` ("Task Creations", factor 100): one job does 100 × (fork; the child exits
//! at once; the parent waits for it).

use super::{Factor, Fail, Fixture, Job, TaskCtx};

const FORKS: u64 = 100;

pub const JOB: Job = Job {
    name: "fork_test",
    aliases: &[],
    factor: Factor::Fixed(FORKS),
    units: "Task Creations",
    uses_dirs: false,
    fixture: Fixture::None,
    extra_procs: 1,
    counters: &["fork", "wait"],
    run,
};

/// Waits for `pid` and returns its raw status, retrying on EINTR.
pub fn wait_for(pid: libc::pid_t) -> Result<i32, Fail> {
    let mut status = 0;
    loop {
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return Ok(status);
        }
        let fail = Fail::last("wait");
        if fail.errno != libc::EINTR {
            return Err(fail);
        }
    }
}

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    for _ in 0..FORKS {
        // SAFETY: the task is single-threaded; the child only calls _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: leaving the child at once without running any destructor.
            unsafe { libc::_exit(0) };
        }
        if pid < 0 {
            return Err(Fail::last("fork"));
        }
        ctx.counters[0] += 1;
        wait_for(pid)?;
        ctx.counters[1] += 1;
    }
    Ok(())
}
