//! One AIM7 task: the code a forked child runs. It becomes a child of the driver as every
//! harness child does (`crate::proc::child`: default signals,
//! death with the driver, the tasks' process group), reports "parked",
//! waits at the start gate until the driver opens it, runs its jobs, and reports its
//! completion time, its op counters and its memory in one fixed-size record on the report pipe
//! (one write below PIPE_BUF, so records never interleave). It leaves with `_exit`, never
//! returning into the driver's code.

use super::jobs::{Fail, Job, TaskCtx, TaskDir};
use crate::clock::monotonic_ns;
use crate::proc::child::become_child;
use crate::proc::gate::Gate;
use std::ffi::CString;
use std::os::fd::RawFd;

/// What every task of one load point runs.
pub struct TaskPlan {
    pub job: &'static Job,
    pub jobs_per_task: u32,
    pub dirs: Vec<TaskDir>,
    pub disk_blocks: usize,
    pub true_program: CString,
}

/// The driver's descriptors as a child sees them right after fork.
pub struct TaskFds {
    /// The start gate's read end.
    pub go_read: RawFd,
    pub report_read: RawFd,
    pub report_write: RawFd,
    /// The driver's signal wake-up socket pair, closed in the child.
    pub signal_fds: [RawFd; 2],
}

/// Kinds of report record.
pub const PARKED: u64 = 1;
pub const DONE: u64 = 2;
pub const FAILED: u64 = 3;

const WORDS: usize = 15;
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
    /// CLOCK_MONOTONIC at the end of the last job, in ns.
    pub finish_ns: u64,
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
        w[4] = self.finish_ns;
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
            finish_ns: w(4),
            counters: [w(5), w(6), w(7), w(8)],
            maxrss_kib: w(9),
            private_kib: w(10),
            pss_kib: w(11),
            op: String::from_utf8_lossy(&op).into_owned(),
        }
    }
}

fn write_report(fd: RawFd, r: &Report) -> bool {
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

fn run_jobs(plan: &TaskPlan, ctx: &mut TaskCtx) -> Result<(), (Fail, usize)> {
    let ndirs = plan.dirs.len().max(1);
    for j in 0..plan.jobs_per_task as usize {
        let dir = if plan.job.uses_dirs {
            (ctx.task as usize + j) % ndirs
        } else {
            0
        };
        (plan.job.run)(ctx, dir).map_err(|f| (f, dir))?;
    }
    Ok(())
}

/// The body of a task; returns its exit status.
fn task_body(plan: &TaskPlan, task: u32, fds: &TaskFds) -> i32 {
    let mut ctx = TaskCtx::new(
        task,
        plan.dirs.clone(),
        plan.disk_blocks,
        plan.true_program.clone(),
    );
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
    let result = run_jobs(plan, &mut ctx);
    let finish_ns = monotonic_ns();
    let mut r = Report {
        task,
        finish_ns,
        counters: ctx.counters,
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
        Err((fail, dir)) => {
            r.kind = FAILED;
            r.errno = fail.errno;
            r.op = fail.op.to_string();
            r.dir = dir as u32;
            1
        }
    };
    if write_report(fds.report_write, &r) {
        status
    } else {
        3
    }
}

/// Entry point of a forked task; never returns.
///
/// # Safety
/// Must be called only in a child just forked from a single-threaded driver.
pub unsafe fn task_main(
    plan: &TaskPlan,
    task: u32,
    pgid: libc::pid_t,
    driver: libc::pid_t,
    gate: &Gate,
    fds: &TaskFds,
) -> ! {
    gate.close_write_in_child();
    become_child(
        driver,
        pgid,
        &[fds.report_read, fds.signal_fds[0], fds.signal_fds[1]],
        "aim7 task",
    );
    libc::_exit(task_body(plan, task, fds))
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
            finish_ns: 123_456_789_012,
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
