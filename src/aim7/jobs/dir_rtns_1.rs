//! AIM7 `dir_rtns_1` ("Directory Operations", args "100", factor 10000): one job opens
//! `/bin` with opendir (a missing /bin fails the job, as in AIM), reads 100 × 100 = 10,000
//! entries with readdir, counting each end of the directory and rewinding it with rewinddir,
//! and closes it. The C library's readdir fetches entries in batches with getdents64, so the
//! system calls depend on the size of /bin (usually a link to /usr/bin).

use super::{Factor, Fail, Job, TaskCtx};

pub const JOB: Job = Job {
    name: "dir_rtns_1",
    args: "100",
    factor: Factor::Fixed(10_000),
    units: "Directory Operations",
    counters: &["readdir", "rewinddir"],
    run,
    ..Job::BASE
};

fn run(ctx: &mut TaskCtx, _dir: usize) -> Result<(), Fail> {
    let reads = ctx.arg::<u64>(0)? * 100;
    // SAFETY: a valid path.
    let dir = unsafe { libc::opendir(c"/bin".as_ptr()) };
    if dir.is_null() {
        return Err(Fail::last("opendir /bin"));
    }
    for _ in 0..reads {
        // SAFETY: dir is an open directory stream.
        if unsafe { libc::readdir(dir) }.is_null() {
            // SAFETY: as above.
            unsafe { libc::rewinddir(dir) };
            ctx.counters[1] += 1;
        }
        ctx.counters[0] += 1;
    }
    // SAFETY: closing the stream opened above.
    unsafe { libc::closedir(dir) };
    Ok(())
}
