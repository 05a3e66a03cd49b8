//! One AIM7 task: what the task program `patchbench-aim7-task` runs
//! (src/bin/patchbench-aim7-task.rs calls [`main`]).
//!
//! Design: AIM's `multitask` forks its tasks from itself, a small C program, so a task (and
//! every child that fork_test, exec_test and the shell tests fork from it) is a copy of a small
//! process. patchbench is large (clap, SQLite, the renderers), so its driver does not run tasks
//! in its own forks: for each task the single-threaded driver forks, the child does only the
//! start-up every harness child does (`crate::proc::child::become_child`: default signals,
//! death with the driver, the tasks' process group) and execs this small program
//! (`super::task_program`, found next to the patchbench executable as the UnixBench runner
//! finds `patchbench-worker`), which links only the jobs and what they need. The plan comes on
//! the command line (workfile tests and counts, directories, disk blocks, load, task number,
//! suite directory; PATH in the environment); the start gate's read end, the report pipe's
//! write end and AIM's shared log are the only descriptors inherited across the exec (every
//! other one is close-on-exec), so all tasks still share one log file description and one
//! pipe. num_fcns.c's tables, which AIM's tasks inherit from the parent, are mapped from a
//! file the driver wrote into the suite directory, so their pages are still shared.
//!
//! The task moves to the suite directory (AIM's tasks run in theirs; PATH ends with it),
//! reports "parked", and waits at the start gate until the driver opens it. Then, as AIM's
//! task: it takes its first `DISKS` directory from `aim_rand2() % dirs` (both generators
//! seeded with the task index), runs its J jobs in the order AIM's generator picks from the
//! workfile's counts, each between AIM's `times()` calls and followed by its log line, and
//! reports each test's op counters and then its memory, in fixed-size records on the report
//! pipe (one write below PIPE_BUF each, so records never interleave). It closes its copy of
//! the log and exits; the driver takes its completion time when it reaps it, as AIM's parent
//! does. jmp_test's `_setjmp`/`longjmp` and shell_rtns' `system()` are the C library's, as
//! before. A task that cannot start (bad command line, tables file missing) prints one line
//! and exits before parking, which the driver reports as a task that died before the start.

use super::aim_rand::AimRand;
use super::joblog::{self, JobClock};
use super::jobs::{Fail, Job, TaskCtx, TaskDir};
use super::workfile::Schedule;
use std::ffi::CString;
use std::os::fd::RawFd;

/// What every task of one load point runs.
pub struct TaskPlan {
    /// The task program (empty in a task).
    pub program: CString,
    /// The workfile's tests, one per line.
    pub jobs: Vec<&'static Job>,
    /// Their names, for the log lines.
    pub names: Vec<CString>,
    /// Jobs per task of each line (AIM's counts from the weights).
    pub counts: Vec<u32>,
    pub dirs: Vec<TaskDir>,
    pub disk_blocks: usize,
    /// The load (number of tasks).
    pub load: u32,
    /// The suite directory the tasks run in, and their PATH (empty in a task: it has it).
    pub suite_dir: CString,
    pub path_env: CString,
    /// AIM's shared log, or -1.
    pub log_fd: RawFd,
}

impl TaskPlan {
    /// Jobs each task runs (J).
    pub fn jobs_per_task(&self) -> u32 {
        self.counts.iter().sum()
    }
}

/// The task's ends of the driver's pipes.
pub struct TaskFds {
    /// The start gate's read end.
    pub go_read: RawFd,
    pub report_write: RawFd,
}

/// Kinds of report record.
pub const PARKED: u64 = 1;
pub const DONE: u64 = 2;
pub const FAILED: u64 = 3;
/// One workfile line's runs and counters in one task.
pub const COUNTS: u64 = 4;
/// A forked child could not exec the task program (errno), sent by the child itself.
pub const NOT_STARTED: u64 = 5;

const WORDS: usize = 17;
/// Bytes of one record on the report pipe.
pub const RECORD_BYTES: usize = WORDS * 8;
// One write of a record must be atomic on a pipe.
const _: () = assert!(RECORD_BYTES <= libc::PIPE_BUF);

/// What a task tells the driver.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub kind: u64,
    pub task: u32,
    pub errno: i32,
    pub dir: u32,
    /// The workfile line (COUNTS, FAILED).
    pub line: u32,
    /// Jobs of that line the task ran (COUNTS).
    pub runs: u64,
    pub counters: [u64; 4],
    pub maxrss_kib: u64,
    /// Only task 0 measures these (from /proc/self/smaps_rollup); 0 otherwise.
    pub private_kib: u64,
    pub pss_kib: u64,
    pub op: String,
}

impl Report {
    pub fn encode(&self) -> [u8; RECORD_BYTES] {
        let mut w = [0u64; WORDS];
        w[0] = self.kind;
        w[1] = u64::from(self.task);
        w[2] = self.errno as u32 as u64;
        w[3] = u64::from(self.dir);
        w[4] = u64::from(self.line);
        w[5..9].copy_from_slice(&self.counters);
        w[9] = self.maxrss_kib;
        w[10] = self.private_kib;
        w[11] = self.pss_kib;
        let mut op = [0u8; 24];
        let n = self.op.len().min(24);
        op[..n].copy_from_slice(&self.op.as_bytes()[..n]);
        for (i, chunk) in op.chunks(8).enumerate() {
            w[12 + i] = u64::from_ne_bytes(chunk.try_into().unwrap_or([0; 8]));
        }
        w[15] = self.runs;
        let mut out = [0u8; RECORD_BYTES];
        for (i, v) in w.iter().enumerate() {
            out[i * 8..i * 8 + 8].copy_from_slice(&v.to_ne_bytes());
        }
        out
    }

    pub fn decode(b: &[u8]) -> Report {
        let w = |i: usize| u64::from_ne_bytes(b[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        let op: Vec<u8> = b[96..120].iter().copied().take_while(|&c| c != 0).collect();
        Report {
            kind: w(0),
            task: w(1) as u32,
            errno: w(2) as u32 as i32,
            dir: w(3) as u32,
            line: w(4) as u32,
            runs: w(15),
            counters: [w(5), w(6), w(7), w(8)],
            maxrss_kib: w(9),
            private_kib: w(10),
            pss_kib: w(11),
            op: String::from_utf8_lossy(&op).into_owned(),
        }
    }
}

/// Writes one record with one write(2); false if it failed. Async-signal-safe.
pub fn write_report(fd: RawFd, r: &Report) -> bool {
    let bytes = r.encode();
    loop {
        // SAFETY: writing a local buffer.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n == bytes.len() as isize {
            return true;
        }
        if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return false;
    }
}

/// Private and proportional memory of this process, in KiB, from smaps_rollup.
fn own_memory_kib() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
    let field = |key: &str| -> u64 {
        text.lines()
            .filter(|l| l.starts_with(key))
            .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .sum()
    };
    (
        field("Private_Clean:") + field("Private_Dirty:"),
        field("Pss:"),
    )
}

fn max_rss_kib() -> u64 {
    nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF)
        .map(|u| u.max_rss() as u64)
        .unwrap_or(0)
}

/// One line's totals in this task.
#[derive(Debug, Clone, Copy, Default)]
struct LineTotals {
    runs: u64,
    counters: [u64; 4],
}

/// The failing job: its line, directory and call.
struct JobFailed {
    line: usize,
    dir: usize,
    fail: Fail,
}

fn run_jobs(
    plan: &TaskPlan,
    ctx: &mut TaskCtx,
    totals: &mut [LineTotals],
) -> Result<(), JobFailed> {
    let ndirs = plan.dirs.len().max(1);
    let hz = joblog::hz();
    let mut schedule = Schedule::new(&plan.counts);
    // AIM's aim_rand2, seeded like aim_rand, picks the first DISKS directory after the start.
    let mut next_dir = AimRand::seeded(u64::from(ctx.task)).below(ndirs);
    while let Some(line) = schedule.next(&mut ctx.rng) {
        let job = plan.jobs[line];
        let dir = if job.uses_dirs {
            next_dir += 1;
            (next_dir - 1) % ndirs
        } else {
            0
        };
        let clock = JobClock::begin();
        ctx.args = job.args;
        ctx.counters = [0; 4];
        (job.run)(ctx, dir).map_err(|fail| JobFailed { line, dir, fail })?;
        clock.end(plan.log_fd, plan.load, &plan.names[line], hz);
        let t = &mut totals[line];
        t.runs += 1;
        for (sum, c) in t.counters.iter_mut().zip(ctx.counters) {
            *sum += c;
        }
    }
    Ok(())
}

/// The body of a task; returns its exit status.
pub(super) fn task_body(plan: &TaskPlan, task: u32, fds: &TaskFds) -> i32 {
    let mut ctx = TaskCtx::new(task, plan.dirs.clone(), plan.disk_blocks, plan.load);
    let mut totals = vec![LineTotals::default(); plan.jobs.len()];
    let parked = Report {
        kind: PARKED,
        task,
        ..Report::default()
    };
    // SAFETY: the gate's read end stays open for the task's whole life.
    let gate = unsafe { std::os::fd::BorrowedFd::borrow_raw(fds.go_read) };
    if !write_report(fds.report_write, &parked) || !crate::proc::gate::wait(gate) {
        return 3;
    }
    let result = run_jobs(plan, &mut ctx, &mut totals);
    for (line, t) in totals.iter().enumerate().filter(|(_, t)| t.runs > 0) {
        let counts = Report {
            kind: COUNTS,
            task,
            line: line as u32,
            runs: t.runs,
            counters: t.counters,
            ..Report::default()
        };
        if !write_report(fds.report_write, &counts) {
            return 3;
        }
    }
    let mut r = Report {
        task,
        maxrss_kib: max_rss_kib(),
        ..Report::default()
    };
    let status = match result {
        Ok(()) => {
            r.kind = DONE;
            if task == 0 {
                (r.private_kib, r.pss_kib) = own_memory_kib();
            }
            0
        }
        Err(f) => {
            r.kind = FAILED;
            r.errno = f.fail.errno;
            r.op = f.fail.op.to_string();
            r.dir = f.dir as u32;
            r.line = f.line as u32;
            1
        }
    };
    if plan.log_fd >= 0 {
        // SAFETY: closing this task's copy of the log, as AIM's fclose.
        unsafe { libc::close(plan.log_fd) };
    }
    if write_report(fds.report_write, &r) {
        status
    } else {
        3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_survives_the_pipe_encoding() {
        let r = Report {
            kind: FAILED,
            task: 2999,
            errno: libc::ENOSPC,
            dir: 1,
            line: 30,
            runs: 7,
            counters: [1, 2, 3, u64::MAX],
            maxrss_kib: 2048,
            private_kib: 300,
            pss_kib: 900,
            op: "creat".into(),
        };
        let bytes = r.encode();
        assert_eq!(bytes.len(), RECORD_BYTES);
        assert_eq!(Report::decode(&bytes), r);
        let long = Report {
            op: "x".repeat(40),
            ..Report::default()
        };
        assert_eq!(Report::decode(&long.encode()).op.len(), 24);
    }
}
