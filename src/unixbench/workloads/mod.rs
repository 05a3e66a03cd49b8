//! The UnixBench workloads, one file each, and how a worker starts each one. Each workload
//! runs inside a `patchbench-worker` process (see `crate::unixbench::worker`) until the stop
//! flag of `timer` is set.
//!
//! A catalog entry (`crate::unixbench::catalog`) names its workload's [`Prepare`] function, its
//! per-test constants ([`Params`]) and what the run's private directory needs ([`Install`]), so
//! the worker and the runner never match test ids as strings. `Prepare` does the untimed setup
//! before the worker reports READY and returns the timed part, which runs after the start gate
//! opens.

pub mod arithmetic;
pub mod c_compiler;
pub mod companion;
pub mod context_switch;
pub mod dc;
pub mod dhrystone;
pub mod exec_overhead;
pub mod execl_throughput;
pub mod file_copy;
pub mod grep_file;
pub mod hanoi;
pub mod looper;
pub mod pipe_throughput;
pub mod process_creation;
pub mod shell_scripts;
pub mod syscall_overhead;
pub mod timer;
pub mod whetstone;

use std::io;
use std::path::Path;
use std::time::Duration;

/// What a worker was asked to run.
pub struct Job<'a> {
    /// The test's id (`pipe`), for messages.
    pub id: &'static str,
    /// Its per-test constants, as its catalog entry gives them.
    pub params: Params,
    pub duration: Duration,
    /// The run's private directory (the worker's working directory).
    pub dir: &'a Path,
}

/// What a workload reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub count: f64,
    /// Self-reported time (fstime's scored phase, Whetstone), if the test has one.
    pub time: Option<f64>,
    /// The span that self-reported time covers (CLOCK_MONOTONIC ns); None: from the release
    /// to the end of the work.
    pub window: Option<(u64, u64)>,
    /// The internal pauses it made, in seconds (the file tests), for the `PAUSES` line.
    pub pauses: Option<Vec<u64>>,
}

impl Outcome {
    /// A count of loops over the copy's wall time.
    pub fn loops(n: u64) -> Outcome {
        Outcome {
            count: n as f64,
            time: None,
            window: None,
            pauses: None,
        }
    }
}

/// The timed part of a workload, run once the start gate opens.
pub type Timed = Box<dyn FnOnce() -> io::Result<Outcome>>;
/// The untimed setup of a workload, run before READY.
pub type Prepare = fn(&Job) -> io::Result<Timed>;
/// What the run's private directory needs before any copy of a test starts.
pub type Install = fn(&Path) -> io::Result<()>;

/// Per-test constants of a workload shared by several tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Params {
    None,
    /// Which work Whetstone does.
    Whetstone(whetstone::Variant),
    /// The file test's buffer size, file size and which of fstime's tests it is.
    FileCopy(file_copy::Geometry, file_copy::Mode),
    /// The shell tests' number of concurrent pipelines.
    Shell {
        concurrency: u32,
    },
    /// The type arith.c was built with.
    Arith(arithmetic::Datum),
    /// A command under UnixBench's looper, and the file on its standard input.
    Looper {
        argv: &'static [&'static str],
        stdin: Option<&'static str>,
    },
}

impl Params {
    /// True when the test writes files in the run's directory (so a full or unusable `--dir`
    /// is refused before the run starts). Every variant decides here, without a wildcard, so a
    /// new one must say.
    pub fn writes_files(&self) -> bool {
        match self {
            Params::FileCopy(..) | Params::Shell { .. } | Params::Looper { .. } => true,
            Params::None | Params::Whetstone(_) | Params::Arith(_) => false,
        }
    }
}

/// A loop stopped by the timer: arms it for the job's duration and counts loops.
fn timed_loops(job: &Job, run: fn() -> io::Result<u64>) -> io::Result<Timed> {
    let d = job.duration;
    Ok(Box::new(move || {
        timer::arm(d)?;
        run().map(Outcome::loops)
    }))
}

fn wrong_params(job: &Job) -> io::Error {
    io::Error::other(format!("{}: the catalog gives it no parameters", job.id))
}

/// `dhry2reg`.
pub fn dhrystone(job: &Job) -> io::Result<Timed> {
    let d = job.duration;
    Ok(Box::new(move || {
        timer::arm(d)?;
        Ok(Outcome::loops(dhrystone::run(&timer::STOP)))
    }))
}

/// `whetstone-double` (and `whetstone-strict`): calibrates itself to the duration and times
/// itself.
pub fn whetstone(job: &Job) -> io::Result<Timed> {
    let Params::Whetstone(variant) = job.params else {
        return Err(wrong_params(job));
    };
    let d = job.duration;
    Ok(Box::new(move || {
        let r = whetstone::run(d.as_secs_f64(), variant, &mut io::sink())?;
        Ok(Outcome {
            count: r.mwips,
            time: Some(r.time_used),
            window: Some(r.window),
            pauses: None,
        })
    }))
}

/// `execl`: finds `patchbench-execl` before READY; after the gate, replaces the worker with it.
pub fn execl(job: &Job) -> io::Result<Timed> {
    let program = execl_throughput::program()?;
    let d = job.duration;
    Ok(Box::new(move || {
        Err(execl_throughput::start(
            &program,
            crate::clock::monotonic_ns(),
            d,
        ))
    }))
}

/// The nine file tests: the scored phase's rate over its own time.
pub fn file_copy(job: &Job) -> io::Result<Timed> {
    let Params::FileCopy(g, mode) = job.params else {
        return Err(wrong_params(job));
    };
    let (d, dir) = (job.duration, job.dir.to_path_buf());
    Ok(Box::new(move || {
        let r = file_copy::run(&dir, g, mode, d)?;
        Ok(Outcome {
            count: r.scored.kbps as f64,
            time: Some(r.scored.seconds),
            window: Some(r.scored.window),
            pauses: Some(r.pauses),
        })
    }))
}

/// `pipe`.
pub fn pipe(job: &Job) -> io::Result<Timed> {
    timed_loops(job, pipe_throughput::run)
}

/// `context1`.
pub fn context1(job: &Job) -> io::Result<Timed> {
    timed_loops(job, context_switch::run)
}

/// `spawn`: hands the copy over to `patchbench-spawn` before READY (it does the gate and the
/// loop itself); returns only if that fails.
pub fn spawn(job: &Job) -> io::Result<Timed> {
    Err(process_creation::start(job.duration.as_secs_f64()))
}

/// `sysexec`: hands the copy over to `patchbench-spawn`'s exec mode before READY.
pub fn sysexec(job: &Job) -> io::Result<Timed> {
    Err(exec_overhead::start(job.duration.as_secs_f64()))
}

/// `syscall`.
pub fn syscall(job: &Job) -> io::Result<Timed> {
    timed_loops(job, syscall_overhead::run)
}

/// `shell1`, `shell8`, `shell16`: the looper over the installed `multi.sh`.
pub fn shell(job: &Job) -> io::Result<Timed> {
    let Params::Shell { concurrency } = job.params else {
        return Err(wrong_params(job));
    };
    let script = job.dir.join("pgms/multi.sh").to_string_lossy().into_owned();
    let cmd = looper::Command::new(&[&script, &concurrency.to_string()], None)?;
    let d = job.duration;
    Ok(Box::new(move || {
        timer::arm(d)?;
        looper::run(&cmd).map(Outcome::loops)
    }))
}

/// `C`, `dc`, `grep`: the looper over a command, in the private directory.
pub fn looper(job: &Job) -> io::Result<Timed> {
    let Params::Looper { argv, stdin } = job.params else {
        return Err(wrong_params(job));
    };
    let stdin = stdin.map(|f| job.dir.join(f));
    let cmd = looper::Command::new(argv, stdin.as_deref())?;
    let d = job.duration;
    Ok(Box::new(move || {
        timer::arm(d)?;
        looper::run(&cmd).map(Outcome::loops)
    }))
}

/// `arithoh`, `short`, `int`, `long`, `float`, `double`.
pub fn arithmetic(job: &Job) -> io::Result<Timed> {
    let Params::Arith(datum) = job.params else {
        return Err(wrong_params(job));
    };
    let d = job.duration;
    Ok(Box::new(move || {
        timer::arm(d)?;
        Ok(Outcome::loops(arithmetic::run(datum)))
    }))
}

/// `hanoi`.
pub fn hanoi(job: &Job) -> io::Result<Timed> {
    let d = job.duration;
    Ok(Box::new(move || {
        timer::arm(d)?;
        Ok(Outcome::loops(hanoi::run()))
    }))
}
