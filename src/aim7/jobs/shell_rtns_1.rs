//! AIM7 `shell_rtns_1` ("Shell Scripts", args "9", factor 1): one job runs the shell script
//! `aim_1.sh` with the load as its argument, as AIM's `aim_system` does: fork; the child calls
//! `system("aim_1.sh <load>")` (a `/bin/sh -c`, which finds the script through PATH) and
//! exits with its status; the parent waits until ECHILD. The driver writes the script in the
//! tasks' directory (AIM's suite directory) and puts that directory last in the tasks' PATH;
//! like AIM's, it runs `ls -l` there with all output discarded. `shell_rtns_2` and
//! `shell_rtns_3` run `aim_2.sh` and `aim_3.sh`, the same script.
//!
//! AIM ignores the script's exit status (a missing script only prints it); patchbench fails
//! the job, so a broken shell or `ls` cannot pass as work done.

use super::shell::{fork_and_wait, succeeded};
use super::{Factor, Fail, Job, TaskCtx};
use std::ffi::CString;

/// The three scripts AIM ships, by test number.
pub const SCRIPTS: [&str; 3] = ["aim_1.sh", "aim_2.sh", "aim_3.sh"];
/// What each script runs.
pub const SCRIPT_TEXT: &str = "#!/bin/sh\nls -l > /dev/null 2>&1\n";

pub const JOB: Job = shell_job("shell_rtns_1", run);

/// The registration of shell_rtns_N.
pub const fn shell_job(
    name: &'static str,
    run: fn(&mut TaskCtx, usize) -> Result<(), Fail>,
) -> Job {
    Job {
        name,
        args: "9",
        factor: Factor::Fixed(1),
        units: "Shell Scripts",
        extra_procs: 3,
        counters: &["scripts"],
        run,
        ..Job::BASE
    }
}

/// One job of shell_rtns_`n`.
pub fn run_script(ctx: &mut TaskCtx, n: usize) -> Result<(), Fail> {
    let cmd = CString::new(format!("{} {}", SCRIPTS[n - 1], ctx.load)).unwrap_or_default();
    let status = fork_and_wait(|| {
        // SAFETY: a NUL-terminated command line.
        let s = unsafe { libc::system(cmd.as_ptr()) };
        if libc::WIFEXITED(s) {
            libc::WEXITSTATUS(s)
        } else {
            1
        }
    })?;
    if !succeeded(status) {
        return Err(Fail {
            op: SCRIPTS[n - 1],
            errno: libc::ENOEXEC,
        });
    }
    ctx.counters[0] += 1;
    Ok(())
}

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    run_script(ctx, 1)
}
