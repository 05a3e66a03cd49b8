//! AIM7 `shell_rtns_2` ("Shell Scripts", args "9", factor 1): `shell_rtns_1` with the script
//! `aim_2.sh`.

use super::shell_rtns_1::{run_script, shell_job};
use super::{Fail, Job, TaskCtx};

pub const JOB: Job = shell_job("shell_rtns_2", run);

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    run_script(ctx, 2)
}
