//! The AIM7 driver for one load point: start N tasks into one task group
//! (`crate::proc::TaskGroup`), each a fork of this single-threaded process that at once execs
//! the small task program (`super::task_program`; why, in `super::task`), wait until every
//! one is parked at the start gate (`crate::proc::gate`), take the start mark (then sleep
//! AIM's 10 s unless told not to), release them all at once by opening the gate, then collect
//! each task's reports and reap it, until the last one is gone. A child whose exec fails says
//! so on the report pipe and the load point stops.
//!
//! Timing is AIM's: the start mark, each task's completion (taken here when the task is
//! reaped, as AIM's parent does) and the end are `times()` readings in clock ticks (10 ms at
//! USER_HZ 100), and cpu is the reaped tasks' user + system ticks from `times()`. The driver
//! appends AIM's `job_timing` line to the shared log for every task it reaps.
//!
//! SIGINT, SIGTERM and SIGHUP are caught with signal-hook (a flag and a wake-up socket, no
//! threads); on one, or when a task fails, every task is killed at once through the task group
//! and reaped before returning. Tasks also carry PR_SET_PDEATHSIG so none outlives a driver
//! that is killed outright.

use super::joblog;
use super::task::{
    self, Report, TaskPlan, COUNTS, DONE, FAILED, NOT_STARTED, PARKED, RECORD_BYTES,
};
use super::task_program::{self, Exec};
use crate::clock::monotonic_ns;
use crate::proc::child::become_child;
use crate::proc::gate::Gate;
use crate::proc::status::describe_raw;
use crate::proc::TaskGroup;
use anyhow::Context;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

pub use crate::proc::signals::Signals;

/// Why a load point stopped before all tasks finished.
#[derive(Debug)]
pub enum Stop {
    Interrupted(i32),
    /// A task's system call failed (ENOSPC included: the caller tells them apart).
    TaskFailed {
        task: u32,
        /// The workfile line of the failing job.
        line: usize,
        dir: usize,
        op: String,
        errno: i32,
    },
    /// A task ended without reporting (crash, killed from outside).
    TaskDied {
        task: u32,
        how: String,
    },
    /// A task ran out of memory (its allocator's exit status).
    OutOfMemory {
        task: u32,
    },
    /// fork() failed after `started` tasks.
    CannotFork {
        started: u32,
        errno: i32,
    },
    /// A forked child could not exec the task program.
    CannotExec {
        task: u32,
        program: String,
        errno: i32,
    },
    Other(anyhow::Error),
}

impl From<anyhow::Error> for Stop {
    fn from(e: anyhow::Error) -> Stop {
        Stop::Other(e)
    }
}

/// One workfile line's jobs and op counters, summed over the tasks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineCounts {
    pub runs: u64,
    pub counters: [u64; 4],
}

/// What one load point measured.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Seconds from the start mark to each task's reaping, by task number (clock ticks).
    pub completion: Vec<f64>,
    /// Start mark to the last task reaped (includes the start delay, as AIM's does), in clock
    /// ticks; a load point shorter than one tick counts as one (AIM's always has the delay).
    pub real: f64,
    /// The tasks' user + system CPU seconds (clock ticks).
    pub cpu: f64,
    /// First fork to the last task parked.
    pub park_seconds: f64,
    /// By workfile line.
    pub lines: Vec<LineCounts>,
    pub task_max_rss_kib: u64,
    pub task0_private_kib: u64,
    pub task0_pss_kib: u64,
    pub driver_max_rss_kib: u64,
    /// Lines the load point added to AIM's log (filled in by the caller).
    pub log_lines: u64,
}

/// How often a long run says how far it is.
const PROGRESS_EVERY_NS: u64 = 60_000_000_000;

/// The reaped children's user + system ticks.
fn children_cpu_ticks(t: &libc::tms) -> i64 {
    joblog::ticks(t.tms_cutime) + joblog::ticks(t.tms_cstime)
}

fn pipe() -> anyhow::Result<(OwnedFd, OwnedFd)> {
    nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).context("cannot create a pipe")
}

/// The tasks of one load point, as the driver tracks them.
struct Tasks {
    group: TaskGroup,
    reports: Vec<Option<Report>>,
    lines: Vec<LineCounts>,
    failed: Option<Report>,
    /// The first child that could not exec the task program.
    not_started: Option<Report>,
    parked: u32,
    partial: Vec<u8>,
    /// Where reports are read into (allocated before the first fork).
    read_buf: Vec<u8>,
    /// The start mark in clock ticks (None until the tasks are released).
    start: Option<i64>,
    /// Completion ticks by task.
    completion: Vec<Option<i64>>,
    load: u32,
    log_fd: i32,
    hz: i64,
}

impl Tasks {
    /// Tasks reaped so far.
    fn reaped(&self) -> u32 {
        (self.group.len() - self.group.alive()) as u32
    }

    /// Kills every task still alive and reaps them all (also done when dropped).
    fn kill_and_reap(&mut self) {
        self.group.stop();
    }

    /// Stops every task if one could not exec the task program.
    fn not_started(&mut self, exec: &Exec) -> Option<Stop> {
        let r = self.not_started.take()?;
        self.kill_and_reap();
        Some(Stop::CannotExec {
            task: r.task,
            program: exec.program().to_string_lossy().into_owned(),
            errno: r.errno,
        })
    }

    /// Every task's pid, for cleaning up after them.
    fn pids(&self) -> Vec<libc::pid_t> {
        (0..self.group.len()).map(|i| self.group.pid(i)).collect()
    }

    /// Reads every complete report waiting on the (non-blocking) report pipe.
    fn read_reports(&mut self, fd: i32) {
        let mut buf = std::mem::take(&mut self.read_buf);
        self.read_into(fd, &mut buf);
        self.read_buf = buf;
    }

    fn read_into(&mut self, fd: i32, buf: &mut [u8]) {
        loop {
            // SAFETY: reading into a buffer of buf.len() bytes.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return;
            }
            self.partial.extend_from_slice(&buf[..n as usize]);
            let whole = self.partial.len() / RECORD_BYTES * RECORD_BYTES;
            let records: Vec<u8> = self.partial.drain(..whole).collect();
            for rec in records.chunks(RECORD_BYTES) {
                let r = Report::decode(rec);
                match r.kind {
                    PARKED => self.parked += 1,
                    COUNTS if (r.line as usize) < self.lines.len() => {
                        let l = &mut self.lines[r.line as usize];
                        l.runs += r.runs;
                        for (sum, c) in l.counters.iter_mut().zip(r.counters) {
                            *sum += c;
                        }
                    }
                    DONE if (r.task as usize) < self.reports.len() => {
                        let t = r.task as usize;
                        self.reports[t] = Some(r);
                    }
                    FAILED if self.failed.is_none() => self.failed = Some(r),
                    NOT_STARTED if self.not_started.is_none() => self.not_started = Some(r),
                    _ => {}
                }
            }
        }
    }

    /// Reaps every task that has ended, taking each one's completion time (and writing its
    /// log line) as it is reaped; returns the first one that ended badly.
    fn reap_ended(&mut self) -> Option<(u32, i32)> {
        let mut bad = None;
        while let Some((task, status)) = self.group.reap_ended() {
            if let Some(start) = self.start {
                let ticks = joblog::times().0 - start;
                self.completion[task] = Some(ticks);
                joblog::reaped(self.log_fd, self.load, (ticks * 1000 / self.hz) as f64);
            }
            let clean = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
            if !clean && bad.is_none() {
                bad = Some((task as u32, status));
            }
        }
        bad
    }
}

/// Why task `task` ended with raw wait status `status` (`when`: " before the start" or "").
fn died(task: u32, status: i32, when: &str) -> Stop {
    if libc::WIFEXITED(status)
        && libc::WEXITSTATUS(status) == crate::out_of_memory::OUT_OF_MEMORY_STATUS
    {
        Stop::OutOfMemory { task }
    } else {
        Stop::TaskDied {
            task,
            how: format!("{}{when}", describe_raw(status)),
        }
    }
}

fn poll_two(a: i32, b: i32, timeout_ms: i32) {
    let mut fds = [
        libc::pollfd {
            fd: a,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: b,
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    // SAFETY: valid pollfd array.
    unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout_ms) };
}

/// Runs one load point of `tasks` tasks, each running the plan's jobs. With `ipc_cleanup`,
/// SysV objects keyed by a task's pid that the tasks left behind are removed at the end.
pub fn run(
    plan: &TaskPlan,
    tasks: u32,
    start_delay: Duration,
    signals: &Signals,
    progress: &dyn Fn(&str),
    ipc_cleanup: bool,
) -> Result<Outcome, Stop> {
    crate::proc::child::ensure_single_threaded("the aim7 driver")?;
    // What the load point needs is allocated before the first fork, so memory running out
    // shows before any task exists.
    let mut t = Tasks {
        group: TaskGroup::with_capacity(tasks as usize),
        reports: vec![None; tasks as usize],
        lines: vec![LineCounts::default(); plan.jobs.len()],
        failed: None,
        not_started: None,
        parked: 0,
        partial: Vec::with_capacity(RECORD_BYTES * 2),
        read_buf: vec![0u8; RECORD_BYTES * 256],
        start: None,
        completion: vec![None; tasks as usize],
        load: plan.load,
        log_fd: plan.log_fd,
        hz: joblog::hz(),
    };
    let result = drive(plan, tasks, start_delay, signals, progress, &mut t);
    // Every task is gone before its leftovers are looked for.
    t.kill_and_reap();
    if ipc_cleanup {
        super::jobs::shared_memory::remove_leftovers(&t.pids());
    }
    result
}

/// Forks, parks, releases and reaps the tasks of `t`.
fn drive(
    plan: &TaskPlan,
    tasks: u32,
    start_delay: Duration,
    signals: &Signals,
    progress: &dyn Fn(&str),
    t: &mut Tasks,
) -> Result<Outcome, Stop> {
    let gate = Gate::new()?;
    let (report_read, report_write) = pipe()?;
    let go_fd = gate.read_end().as_raw_fd();
    let report_fd = report_read.as_raw_fd();
    let report_write_fd = report_write.as_raw_fd();
    let [wake_read, wake_write] = signals.raw_fds();
    let exec = Exec::new(plan, go_fd, report_write_fd);
    nix::fcntl::fcntl(
        &report_read,
        nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
    )
    .context("cannot make the report pipe non-blocking")?;
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();

    // SAFETY: getpid has no preconditions.
    let driver = unsafe { libc::getpid() };
    let fork_start = monotonic_ns();
    for i in 0..tasks {
        if let Some(sig) = signals.pending().map(|i| i.signal) {
            t.kill_and_reap();
            return Err(Stop::Interrupted(sig));
        }
        let argv = exec.argv(i);
        // SAFETY: the driver is single-threaded (checked by `run`); the child execs the task
        // program or leaves with `_exit`.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: we are the freshly forked child.
            unsafe {
                gate.close_write_in_child();
                become_child(
                    driver,
                    t.group.pgid(),
                    &[report_fd, wake_read, wake_write],
                    "aim7 task",
                );
                let errno = exec.exec(&argv, &[go_fd, report_write_fd, plan.log_fd]);
                let why = Report {
                    kind: NOT_STARTED,
                    task: i,
                    errno,
                    ..Report::default()
                };
                task::write_report(report_write_fd, &why);
                libc::_exit(task_program::EXEC_FAILED);
            }
        }
        if pid < 0 {
            let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            t.kill_and_reap();
            return Err(Stop::CannotFork { started: i, errno });
        }
        t.group.add(pid);
        if i == 0 {
            progress(&format!("tasks run in process group {pid}"));
        }
        if i % 256 == 255 {
            t.read_reports(report_fd);
        }
    }
    drop(report_write);
    let mut gate = gate.into_opener();

    // Park: every task has written PARKED and sits at the start gate.
    while t.parked < tasks {
        poll_two(report_fd, signals.fd().as_raw_fd(), 200);
        signals.drain();
        t.read_reports(report_fd);
        if let Some(sig) = signals.pending().map(|i| i.signal) {
            t.kill_and_reap();
            return Err(Stop::Interrupted(sig));
        }
        if let Some(stop) = t.not_started(&exec) {
            return Err(stop);
        }
        if let Some((task, status)) = t.reap_ended() {
            t.kill_and_reap();
            return Err(died(task, status, " before the start"));
        }
    }
    // In a duet, wait until the other guest's load point is ready too (nothing otherwise).
    if let Err(i) = crate::proc::barrier::wait(&format!("aim7 load {tasks}"), signals) {
        t.kill_and_reap();
        return Err(Stop::Interrupted(i.signal));
    }
    let (start_ticks, before) = joblog::times();
    t.start = Some(start_ticks);
    let start = monotonic_ns();
    let park_seconds = (start - fork_start) as f64 / 1e9;
    if start_delay.is_zero() {
        progress(&format!(
            "{tasks} tasks parked in {park_seconds:.2} s; released"
        ));
    } else {
        progress(&format!(
            "{tasks} tasks parked in {park_seconds:.2} s; AIM's {} s start delay",
            start_delay.as_secs()
        ));
        let until = start + start_delay.as_nanos() as u64;
        while monotonic_ns() < until && signals.pending().is_none() {
            let _ = signals.sleep(Duration::from_nanos(until.saturating_sub(monotonic_ns())));
        }
    }
    // A signal during the delay (or just before the release) stops the point with the gate
    // shut: the tasks are killed where they wait, no job runs, nothing says "released".
    if let Some(sig) = signals.pending().map(|i| i.signal) {
        t.kill_and_reap();
        return Err(Stop::Interrupted(sig));
    }
    if !start_delay.is_zero() {
        progress("released");
    }
    gate.open();

    // Run: collect reports, reap, until the last task is gone.
    let mut next_progress = monotonic_ns() + PROGRESS_EVERY_NS;
    while t.reaped() < tasks {
        if let Some(sig) = signals.pending().map(|i| i.signal) {
            t.kill_and_reap();
            return Err(Stop::Interrupted(sig));
        }
        let bad = t.reap_ended();
        t.read_reports(report_fd);
        if let Some(f) = t.failed.take() {
            t.kill_and_reap();
            return Err(Stop::TaskFailed {
                task: f.task,
                line: f.line as usize,
                dir: f.dir as usize,
                op: f.op,
                errno: f.errno,
            });
        }
        if let Some((task, status)) = bad {
            t.kill_and_reap();
            return Err(died(task, status, ""));
        }
        let now = monotonic_ns();
        if now >= next_progress {
            let secs = (now - start) as f64 / 1e9;
            progress(&format!(
                "{secs:.0} s: {} of {tasks} tasks finished",
                t.reaped()
            ));
            next_progress = now + PROGRESS_EVERY_NS;
        }
        if t.reaped() < tasks {
            poll_two(report_fd, signals.fd().as_raw_fd(), 100);
            signals.drain();
        }
    }
    let (end_ticks, after) = joblog::times();
    t.read_reports(report_fd);
    let secs = |ticks: i64| ticks as f64 / t.hz as f64;

    let mut out = Outcome {
        real: secs((end_ticks - start_ticks).max(1)),
        cpu: secs(children_cpu_ticks(&after) - children_cpu_ticks(&before)),
        park_seconds,
        completion: Vec::with_capacity(tasks as usize),
        lines: t.lines.clone(),
        ..Outcome::default()
    };
    for (i, (r, done)) in t.reports.iter().zip(&t.completion).enumerate() {
        let (Some(r), Some(done)) = (r, done) else {
            return Err(Stop::TaskDied {
                task: i as u32,
                how: "ended without reporting".into(),
            });
        };
        out.completion.push(secs(*done));
        out.task_max_rss_kib = out.task_max_rss_kib.max(r.maxrss_kib);
        if i == 0 {
            out.task0_private_kib = r.private_kib;
            out.task0_pss_kib = r.pss_kib;
        }
    }
    out.driver_max_rss_kib =
        nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF)
            .map(|u| u.max_rss() as u64)
            .unwrap_or(0);
    Ok(out)
}
