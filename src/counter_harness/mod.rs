//! The will-it-scale harness: runs one workload in N tasks (forked processes, or threads of one
//! forked host process) and samples their operation counters.
//!
//! The shape follows will-it-scale's `main.c`: one counter per task, each in its own 256-byte
//! slot of one shared mapping, written only by its task and read only by the driver; all tasks
//! wait on the read end of one pipe and are released together when the driver writes a byte;
//! the driver sleeps one interval, reads every counter and keeps the deltas, discarding the
//! warm-up samples. Tasks are bound as the run's [`Placement`] says (will-it-scale's default:
//! task i on core i mod cores), by their creator binding itself before it creates them.
//! Between samples the driver sleeps in one `poll` of the signal self-pipe, which SIGCHLD also
//! wakes, so it makes a few system calls per sample whatever the number of tasks, and still
//! sees a signal or a dead task at once. Differences: the driver never creates threads, so it
//! may fork at any time (thread mode forks one host process that then spawns the threads);
//! every task asks the kernel to kill it when its parent dies (`PR_SET_PDEATHSIG`), and the
//! driver kills and reaps all tasks when a run ends, fails or is interrupted.

pub mod aslr;
pub mod placement;
pub mod session;

use crate::error::RunFailed;
use crate::out_of_memory::OUT_OF_MEMORY_STATUS;
use crate::perf_events::{self as counters, CounterSet, CounterValues};
use crate::proc::gate::Gate;
use crate::proc::signals::Signals;
use crate::proc::TaskGroup;
use anyhow::{Context, Result};
use nix::unistd::{fork, ForkResult, Pid};
use placement::{Binder, Placement};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Bytes between two tasks' counters (will-it-scale's `MAX_CACHELINE_SIZE`).
pub const SLOT_BYTES: usize = 256;

/// How long the driver waits for every task to reach the start gate.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// How often the driver counts the tasks at the start gate while they start.
const READY_STEP: Duration = Duration::from_millis(1);

/// Whether tasks are processes or threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Process,
    Thread,
}

impl Mode {
    /// The word will-it-scale uses in its CSV header and LKP in metric names.
    pub fn plural(self) -> &'static str {
        match self {
            Mode::Process => "processes",
            Mode::Thread => "threads",
        }
    }

    /// `processes and threads`, for messages.
    pub fn join(modes: &[Mode]) -> String {
        let words: Vec<&str> = modes.iter().map(|m| m.plural()).collect();
        words.join(" and ")
    }
}

/// One task's counters: written only by that task, read by the driver.
#[repr(C, align(256))]
pub struct Slot {
    ops: AtomicU64,
    aux: AtomicU64,
    tid: AtomicU64,
}

impl Slot {
    /// Adds `n` operations. A single writer, so a relaxed load and store (no locked
    /// read-modify-write) is exact and keeps the hot loop free of atomic instructions.
    #[inline(always)]
    pub fn add(&self, n: u64) {
        self.ops
            .store(self.ops.load(Relaxed).wrapping_add(n), Relaxed);
    }

    /// Adds to the task's second counter (a model's violation count, for instance).
    #[inline(always)]
    pub fn add_aux(&self, n: u64) {
        self.aux
            .store(self.aux.load(Relaxed).wrapping_add(n), Relaxed);
    }

    pub fn ops(&self) -> u64 {
        self.ops.load(Relaxed)
    }

    pub fn aux(&self) -> u64 {
        self.aux.load(Relaxed)
    }
}

/// A zero-filled `MAP_SHARED | MAP_ANONYMOUS` mapping: shared by the driver and every task it
/// forks afterwards, and by the threads of those tasks.
pub struct SharedMap {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain shared memory; all accesses to it go through atomics.
unsafe impl Send for SharedMap {}
// SAFETY: as for Send: every access to the shared mapping goes through atomics.
unsafe impl Sync for SharedMap {}

impl SharedMap {
    pub fn new(len: usize) -> Result<SharedMap> {
        let page = page_size();
        let len = len.max(1).div_ceil(page) * page;
        // SAFETY: a fresh anonymous mapping; no existing memory is affected.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error())
                .context(format!("cannot map {len} bytes of shared memory"));
        }
        Ok(SharedMap {
            ptr: ptr.cast(),
            len,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The mapping as 64-bit atomic words (page aligned, zero-filled at creation).
    pub fn words(&self) -> &[AtomicU64] {
        // SAFETY: the mapping is page aligned, `len` bytes long and lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<AtomicU64>(), self.len / 8) }
    }

    fn slot(&self, i: usize) -> &Slot {
        assert!((i + 1) * SLOT_BYTES <= self.len);
        // SAFETY: in bounds (checked above), 256-byte aligned, zero is a valid Slot.
        unsafe { &*self.ptr.add(i * SLOT_BYTES).cast::<Slot>() }
    }
}

impl Drop for SharedMap {
    fn drop(&mut self) {
        // SAFETY: unmapping the region this value mapped.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// What a workload's `prepare` made in the driver before any task exists: a shared file, an
/// open file description that every task inherits.
#[derive(Debug, Default)]
pub struct Prepared {
    pub path: Option<PathBuf>,
    pub fd: Option<OwnedFd>,
}

/// Everything a task sees.
pub struct TaskCtx<'a> {
    /// This task's index, 0..tasks.
    pub nr: usize,
    pub tasks: usize,
    pub mode: Mode,
    /// The run's private directory (mode 0700), removed by the driver afterwards.
    pub dir: &'a Path,
    pub prepared: &'a Prepared,
    /// The workload's shared area (see [`Workload::shared_bytes`]).
    pub shared: &'a SharedMap,
    /// This task's counters.
    pub slot: &'a Slot,
}

impl TaskCtx<'_> {
    /// Starts a helper task in the current mode (will-it-scale's `new_task`): a forked process
    /// in process mode, a thread in thread mode. It is not counted and dies with its task.
    pub fn new_task(&self, f: impl FnOnce() -> Result<()> + Send + 'static) -> Result<()> {
        match self.mode {
            Mode::Thread => {
                std::thread::Builder::new()
                    .spawn(move || {
                        if let Err(e) = f() {
                            crate::safe_text::eprint_line(&format!(
                                "patchbench: helper task failed: {e:#}"
                            ));
                            // SAFETY: ends the whole host process; the driver sees it die.
                            unsafe { libc::_exit(1) }
                        }
                    })
                    .context("cannot start a helper thread")?;
            }
            Mode::Process => {
                let parent = nix::unistd::getpid();
                // SAFETY: a process-mode task is single-threaded, so forking is safe.
                match unsafe { fork() }.context("cannot fork a helper task")? {
                    ForkResult::Child => in_child(parent, nix::unistd::getpgrp().as_raw(), &[], f),
                    ForkResult::Parent { .. } => {}
                }
            }
        }
        Ok(())
    }
}

/// Something the harness runs in every task.
pub trait Workload: Sync {
    /// Bytes of shared memory the tasks need (mapped before any task exists).
    fn shared_bytes(&self) -> usize {
        0
    }
    /// Helper tasks each task starts (for the process limit check).
    fn helpers_per_task(&self) -> usize {
        0
    }
    /// Runs once in the driver before any task exists (will-it-scale's `testcase_prepare`).
    fn prepare(&self, _dir: &Path, _tasks: usize) -> Result<Prepared> {
        Ok(Prepared::default())
    }
    /// The task's loop: one operation per iteration, counted in `ctx.slot`; never returns
    /// unless something fails.
    fn run(&self, ctx: &TaskCtx<'_>) -> Result<()>;
}

/// Decides, from each task's operations so far in the measured window, whether a point has
/// measured enough.
pub type StopRule = dyn Fn(&[u64]) -> bool;

/// How to run one point of a scaling curve.
pub struct RunSpec<'a> {
    pub tasks: usize,
    pub mode: Mode,
    /// Where each task runs.
    pub placement: &'a Placement,
    pub interval: Duration,
    /// Samples discarded before measuring.
    pub warmup: usize,
    /// Samples measured.
    pub samples: usize,
    /// Open per-task performance counters.
    pub counters: bool,
    /// Keep measuring past `samples` (up to `max_extra` more) until this says enough, given
    /// each task's operations counted so far in the measured window.
    pub until: Option<&'a StopRule>,
    pub max_extra: usize,
}

/// One sample: each task's operations during `seconds`.
#[derive(Debug, Clone)]
pub struct Sample {
    pub seconds: f64,
    pub per_task: Vec<u64>,
}

impl Sample {
    /// Operations per second summed over all tasks (the figure will-it-scale prints).
    pub fn total_rate(&self) -> f64 {
        self.rate_of(0..self.per_task.len())
    }

    /// Operations per second summed over the given tasks.
    pub fn rate_of(&self, tasks: std::ops::Range<usize>) -> f64 {
        let sum: u64 = self.per_task[tasks].iter().sum();
        if self.seconds > 0.0 {
            sum as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub warmup: Vec<Sample>,
    pub measured: Vec<Sample>,
    /// How much each task's second counter grew during the measured window.
    pub aux: Vec<u64>,
    /// Idle and iowait share of all CPUs over the whole run of the point, from before the
    /// testcase's set-up to after its clean-up (what will-it-scale's runtest.py reports); set
    /// by [`session::Session::run`], which brackets all of it.
    pub idle_percent: Option<f64>,
    /// The same over the measured window only.
    pub measured_idle_percent: Option<f64>,
    /// What else used the CPUs over the whole point (hypervisor steal, other processes),
    /// watched from outside the sampling loop.
    pub noise: Option<crate::noise::activity::Activity>,
    /// Performance counter deltas over the measured window, summed over tasks.
    pub counters: Option<CounterValues>,
}

impl Outcome {
    /// Mean over the measured samples of the summed ops/s (will-it-scale's `average`).
    pub fn average(&self) -> f64 {
        crate::stats::mean(&self.total_rates()).unwrap_or(0.0)
    }

    /// The summed ops/s of every measured sample.
    pub fn total_rates(&self) -> Vec<f64> {
        self.measured.iter().map(Sample::total_rate).collect()
    }

    /// Each task's operations in the measured window.
    pub fn task_totals(&self) -> Vec<u64> {
        let n = self.measured.first().map_or(0, |s| s.per_task.len());
        (0..n)
            .map(|i| self.measured.iter().map(|s| s.per_task[i]).sum())
            .collect()
    }

    /// Every task's operations in the warm-up and measured samples together (what a
    /// monitors' window around the whole point saw done).
    pub fn all_ops(&self) -> u64 {
        self.warmup
            .iter()
            .chain(&self.measured)
            .flat_map(|s| s.per_task.iter())
            .sum()
    }

    /// Seconds in the measured window.
    pub fn seconds(&self) -> f64 {
        self.measured.iter().map(|s| s.seconds).sum()
    }
}

/// An error if any task has exited (they never exit on their own); every task is then
/// stopped.
fn check_alive(tasks: &mut TaskGroup) -> Result<()> {
    match ended(tasks) {
        Some((i, status)) => Err(stopped_unexpectedly(i, status)),
        None => Ok(()),
    }
}

/// Task `i` ended with wait status `status`, which tasks never do on their own.
fn stopped_unexpectedly(i: usize, status: i32) -> anyhow::Error {
    RunFailed(format!(
        "task {i} stopped unexpectedly: it {}",
        crate::proc::status::describe_raw(status)
    ))
    .into()
}

/// The first task (or thread host) that ended, with its wait status; the others are stopped.
fn ended(tasks: &mut TaskGroup) -> Option<(usize, i32)> {
    let ended = tasks.reap_ended();
    if ended.is_some() {
        tasks.stop();
    }
    ended
}

/// Why the tasks did not all reach the start gate, given that one of them (`status`) ended
/// first. A thread-mode host does nothing before the gate but bind itself and make its
/// threads, so its end there (other than a placement it could not make, which it said) is a
/// start the system refused, whatever ended it: the host's own report of a failed
/// `pthread_create` (with its errno); memory that ran out while it made them (its allocator,
/// or std failing to start a thread, exit quietly with [`OUT_OF_MEMORY_STATUS`]); or glibc
/// aborting when a thread's TLS could not be had under `ulimit -v`.
fn ended_before_gate(
    slots: &SharedMap,
    n: usize,
    mode: Mode,
    i: usize,
    status: i32,
) -> anyhow::Error {
    if let Some(refused) = thread_start_failed(slots, n) {
        return refused;
    }
    let exited = |code: i32| libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == code;
    if mode != Mode::Thread || exited(PLACEMENT_FAILED) {
        return stopped_unexpectedly(i, status);
    }
    let reached = slots.slot(0).ops.load(Relaxed) as usize;
    let why = if exited(OUT_OF_MEMORY_STATUS) {
        std::io::Error::from_raw_os_error(libc::ENOMEM)
    } else {
        std::io::Error::other(format!(
            "the process making them {}",
            crate::proc::status::describe_raw(status)
        ))
    };
    crate::proc::start_refused("starting threads", reached.min(n), n, why, "--tasks")
}

/// Runs `work` in `spec.tasks` tasks and samples them.
pub fn run(
    work: &dyn Workload,
    spec: &RunSpec<'_>,
    dir: &Path,
    interrupt: &Signals,
) -> Result<Outcome> {
    let n = spec.tasks;
    let prepared = work.prepare(dir, n).context("preparing the testcase")?;
    // Slot 0 is the header (how many tasks reached the gate); task i uses slot i + 1.
    let slots = SharedMap::new((n + 1) * SLOT_BYTES)?;
    let shared = SharedMap::new(work.shared_bytes())?;
    let gate = Gate::new().context("cannot create the start gate")?;
    let driver = nix::unistd::getpid();
    let mut tasks = TaskGroup::new();
    let mode = spec.mode;

    let task_body = |nr: usize| -> Result<()> {
        let slot = slots.slot(nr + 1);
        // SAFETY: gettid has no preconditions.
        slot.tid.store(unsafe { libc::gettid() } as u64, Relaxed);
        slots.slot(0).ops.fetch_add(1, Relaxed);
        crate::proc::gate::wait(gate.read_end());
        // Past the gate a failed allocation is the run's, said in one line by this process.
        crate::out_of_memory::quiet_from_now(0);
        let ctx = TaskCtx {
            nr,
            tasks: n,
            mode,
            dir,
            prepared: &prepared,
            shared: &shared,
            slot,
        };
        work.run(&ctx)
    };

    crate::proc::child::ensure_single_threaded("the will-it-scale driver")?;
    let keep_out = [interrupt.raw_fds()[0], interrupt.raw_fds()[1]];
    match spec.mode {
        Mode::Process => {
            // The driver binds itself to each task's CPUs before forking it, as will-it-scale
            // does, and gets its own CPUs back when `binder` drops.
            let binder = Binder::new(spec.placement);
            for nr in 0..n {
                binder
                    .before_task(nr)
                    .map_err(|e| RunFailed(format!("{e:#}")))?;
                // SAFETY: the driver is single-threaded.
                match unsafe { fork() } {
                    Ok(ForkResult::Child) => {
                        gate.close_write_in_child();
                        in_child(driver, tasks.pgid(), &keep_out, || task_body(nr))
                    }
                    Ok(ForkResult::Parent { child }) => {
                        tasks.add(child.as_raw());
                    }
                    Err(e) => return Err(fork_failed(e, nr, n)),
                }
            }
        }
        Mode::Thread => {
            // SAFETY: the driver is single-threaded; the host spawns the threads.
            match unsafe { fork() } {
                Ok(ForkResult::Child) => in_child(driver, 0, &keep_out, || {
                    gate.close_write_in_child();
                    // Memory that runs out while the threads are made is a start refused:
                    // the driver says so (`ended_before_gate`), not this host.
                    quiet_while_starting_threads();
                    crate::out_of_memory::quiet_from_now(OUT_OF_MEMORY_STATUS);
                    std::thread::scope(|s| {
                        // The host binds itself to each task's CPUs before spawning its thread.
                        let binder = Binder::new(spec.placement);
                        for nr in 0..n {
                            if let Err(e) = binder.before_task(nr) {
                                crate::safe_text::eprint_line(&format!("patchbench: {e:#}"));
                                // SAFETY: ends the whole host process (its threads wait on
                                // the gate, so the scope could not end them).
                                unsafe { libc::_exit(PLACEMENT_FAILED) }
                            }
                            let started = std::thread::Builder::new().spawn_scoped(s, move || {
                                ENTERED.set(true);
                                // A failed task ends the host (and so every thread) at once:
                                // the driver sees it die instead of waiting on the others.
                                if let Err(e) = task_body(nr) {
                                    crate::safe_text::eprint_line(&format!(
                                        "patchbench: task {nr} failed: {e:#}"
                                    ));
                                    // SAFETY: ends the whole host process.
                                    unsafe { libc::_exit(1) }
                                }
                            });
                            if let Err(e) = started {
                                // Tell the driver how many were made and why, then end the
                                // host, which stops every thread already made (they wait on
                                // the gate, so a scope join would wait for ever).
                                let header = slots.slot(0);
                                header
                                    .tid
                                    .store(e.raw_os_error().unwrap_or(0) as u64, Relaxed);
                                header.aux.store(nr as u64 + 1, Relaxed);
                                // SAFETY: ends the whole host process.
                                unsafe { libc::_exit(THREAD_START_FAILED) }
                            }
                        }
                        drop(binder);
                    });
                    Ok(())
                }),
                Ok(ForkResult::Parent { child }) => {
                    tasks.add(child.as_raw());
                }
                Err(e) => return Err(fork_failed(e, 0, n)),
            }
        }
    }
    let mut gate = gate.into_opener();

    let started = Instant::now();
    while (slots.slot(0).ops.load(Relaxed) as usize) < n {
        interrupt.check()?;
        if let Some((i, status)) = ended(&mut tasks) {
            return Err(ended_before_gate(&slots, n, mode, i, status));
        }
        if started.elapsed() > READY_TIMEOUT {
            return Err(RunFailed("the tasks did not reach the start gate in 60 s".into()).into());
        }
        interrupt.wait(READY_STEP)?;
    }

    let mut perf: Option<CounterSet> = if spec.counters {
        let tids: Vec<i32> = (0..n)
            .map(|i| slots.slot(i + 1).tid.load(Relaxed) as i32)
            .collect();
        counters::open(&tids)
    } else {
        None
    };

    // In a duet, wait until the other guest's point is ready too (nothing otherwise).
    crate::proc::barrier::wait(&format!("{n} tasks"), interrupt)?;
    let read_ops = || -> Vec<u64> { (0..n).map(|i| slots.slot(i + 1).ops()).collect() };
    let mut prev = read_ops();
    gate.open();
    let t0 = Instant::now();
    let mut last = t0;

    let mut outcome = Outcome {
        warmup: Vec::new(),
        measured: Vec::new(),
        aux: Vec::new(),
        idle_percent: None,
        measured_idle_percent: None,
        noise: None,
        counters: None,
    };
    let read_aux = || -> Vec<u64> { (0..n).map(|i| slots.slot(i + 1).aux()).collect() };
    let mut stat_start = None;
    let mut perf_start = None;
    let mut aux_start = vec![0; n];
    let mut aux_now = aux_start.clone();
    if spec.warmup == 0 {
        stat_start = cpu_times();
        perf_start = perf.as_mut().map(|p| p.read());
    }
    let mut k = 0usize;
    loop {
        let measured = outcome.measured.len();
        if measured >= spec.samples {
            let enough = match spec.until {
                Some(f) => f(&outcome.task_totals()),
                None => true,
            };
            if enough || measured >= spec.samples + spec.max_extra {
                break;
            }
        }
        k += 1;
        let deadline = t0 + spec.interval.mul_f64(k as f64);
        // One poll until the sample is due; only SIGCHLD (a task died) or a handled signal
        // wakes it earlier.
        loop {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            if interrupt.wait(deadline - now)? {
                check_alive(&mut tasks)?;
            }
        }
        // Once a sample too, in case a death's SIGCHLD was not routed to the self-pipe.
        check_alive(&mut tasks)?;
        let ops = read_ops();
        aux_now = read_aux();
        let now = Instant::now();
        let sample = Sample {
            seconds: (now - last).as_secs_f64(),
            per_task: ops
                .iter()
                .zip(&prev)
                .map(|(a, b)| a.wrapping_sub(*b))
                .collect(),
        };
        last = now;
        prev = ops;
        if outcome.warmup.len() < spec.warmup {
            outcome.warmup.push(sample);
            if outcome.warmup.len() == spec.warmup {
                stat_start = cpu_times();
                perf_start = perf.as_mut().map(|p| p.read());
                aux_start = aux_now.clone();
            }
        } else {
            outcome.measured.push(sample);
        }
    }
    let stat_end = cpu_times();
    let perf_end = perf.as_mut().map(|p| p.read());
    outcome.aux = aux_now
        .iter()
        .zip(&aux_start)
        .map(|(a, b)| a.wrapping_sub(*b))
        .collect();
    tasks.stop();
    if let (Some(a), Some(b)) = (stat_start, stat_end) {
        outcome.measured_idle_percent = idle_percent(&a, &b);
    }
    if let (Some(a), Some(b)) = (perf_start, perf_end) {
        outcome.counters = Some(b.minus(&a));
    }
    Ok(outcome)
}

/// Exit status of a thread-mode host whose `pthread_create` failed (the errno and the
/// threads made are in the header slot).
const THREAD_START_FAILED: i32 = 3;
/// Exit status of a thread-mode host that could not bind itself to a task's CPUs (it said
/// why on standard error).
const PLACEMENT_FAILED: i32 = 4;

thread_local! {
    /// Whether this thread of a thread-mode host runs our code (its host, or a task whose body
    /// began).
    static ENTERED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// In a thread-mode host: a panic in a thread that never began its body is std failing to
/// start it after `pthread_create` succeeded (its signal stack's `mmap`, under `ulimit -v`).
/// The host then ends quietly with [`OUT_OF_MEMORY_STATUS`], as its allocator does while it
/// makes threads, and the driver says the one line; every other panic goes to the child's
/// hook as before.
fn quiet_while_starting_threads() {
    ENTERED.set(true);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if ENTERED.get() {
            return previous(info);
        }
        // SAFETY: ends the whole host process.
        unsafe { libc::_exit(OUT_OF_MEMORY_STATUS) }
    }));
}

/// The failure a thread-mode host recorded in the header slot before it ended (`aux` = the
/// number of threads made + 1, `tid` = the errno), as the one "start refused" error.
fn thread_start_failed(slots: &SharedMap, n: usize) -> Option<anyhow::Error> {
    let header = slots.slot(0);
    let made = (header.aux.load(Relaxed) as usize).checked_sub(1)?;
    let errno = header.tid.load(Relaxed) as i32;
    Some(crate::proc::start_refused(
        "starting threads",
        made,
        n,
        std::io::Error::from_raw_os_error(errno),
        "--tasks",
    ))
}

fn fork_failed(e: nix::errno::Errno, nr: usize, n: usize) -> anyhow::Error {
    crate::proc::start_refused(
        &format!("{n} tasks"),
        nr,
        n,
        std::io::Error::from(e),
        "--tasks",
    )
}

/// The body of every forked task or helper: become a well-behaved child in process group
/// `pgid` (0: a new one), run `f`, and leave with `_exit` so nothing of the driver (temp
/// directories, buffers) is dropped twice.
pub(crate) fn in_child(
    parent: Pid,
    pgid: libc::pid_t,
    close: &[std::os::fd::RawFd],
    f: impl FnOnce() -> Result<()>,
) -> ! {
    // SAFETY: called right after fork in a single-threaded process.
    unsafe { crate::proc::child::become_child(parent.as_raw(), pgid, close, "task") };
    crate::proc::child::run_and_exit("task", f)
}

/// The aggregate "cpu" line of /proc/stat: user nice system idle iowait irq softirq steal
/// guest guest_nice (the ten fields runtest.py adds up, guest time counted twice as it does).
pub fn cpu_times() -> Option<Vec<u64>> {
    let mut cpu = crate::proc_stat::ProcStat::read()?.cpu;
    if cpu.is_empty() {
        return None;
    }
    cpu.truncate(10);
    Some(cpu)
}

/// Idle + iowait as a percentage of all time between two /proc/stat readings.
pub fn idle_percent(a: &[u64], b: &[u64]) -> Option<f64> {
    if a.len() < 5 || b.len() < 5 {
        return None;
    }
    let d: Vec<u64> = b.iter().zip(a).map(|(x, y)| x.saturating_sub(*y)).collect();
    let total: u64 = d.iter().sum();
    (total > 0).then(|| (d[3] + d[4]) as f64 * 100.0 / total as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_one_per_256_bytes() {
        assert_eq!(std::mem::size_of::<Slot>(), SLOT_BYTES);
        let map = SharedMap::new(3 * SLOT_BYTES).unwrap();
        map.slot(2).add(5);
        map.slot(2).add(2);
        assert_eq!(map.slot(2).ops(), 7);
        assert_eq!(map.slot(1).ops(), 0);
    }

    #[test]
    fn idle_percent_counts_idle_and_iowait() {
        let a = [100, 0, 100, 700, 100, 0, 0, 0];
        let b = [200, 0, 200, 1300, 200, 0, 0, 0];
        // deltas: user 100, system 100, idle 600, iowait 100 → 700 / 900.
        let p = idle_percent(&a, &b).unwrap();
        assert!((p - 700.0 * 100.0 / 900.0).abs() < 1e-9);
    }

    #[test]
    fn sample_rate_divides_by_seconds() {
        let s = Sample {
            seconds: 0.5,
            per_task: vec![10, 30],
        };
        assert_eq!(s.total_rate(), 80.0);
        assert_eq!(s.rate_of(1..2), 60.0);
    }
}
