//! One pass of one test: start N worker processes, park them at one start gate, release them
//! together, collect what each reports, and make sure none is left behind.
//!
//! The workers are exec'd (`std::process::Command`), never forked from this process, and all of
//! a pass's workers (and their children) share one task group, so an interruption or a failure
//! kills them all at once (see `crate::proc`). What each worker prints follows
//! [`crate::unixbench::protocol`].
//!
//! For a test whose loop keeps a live count, at 2 copies or more, the runner also reads every
//! copy's count at one common stop (`crate::unixbench::shared_count`): it wakes twice, at
//! half the duration and a tenth of it before the earliest moment a copy's window can end
//! (release + duration), reads the counters and sleeps again. The latest reading taken before
//! any copy's window ended is kept (a runner woken late on a loaded machine may miss the
//! second).

use crate::error::RunFailed;
use crate::proc::gate::Gate;
use crate::proc::signals::Signals;
use crate::proc::TaskGroup;
use crate::record::{CopySample, SharedWindow};
use crate::unixbench::catalog::{TestSpec, TimeSource};
use crate::unixbench::protocol::{self, Report};
use crate::unixbench::shared_count::{self, Counters};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{ChildStderr, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// What a pass needs to know.
pub struct PassPlan<'a> {
    pub spec: &'static TestSpec,
    pub copies: u32,
    pub pass: u32,
    pub passes: u32,
    pub duration: f64,
    pub worker: &'a Path,
    pub workdir: &'a Path,
}

/// Called with the seconds since release: once at the release, then whenever a copy's output
/// arrives (its result or its end). Never in between: the runner sleeps through the copies'
/// timed window.
pub type Tick<'a> = &'a mut dyn FnMut(f64);

/// One running worker's pipes and what it has printed so far.
struct Copy {
    stdout: ChildStdout,
    stderr: ChildStderr,
    out: Vec<u8>,
    err: Vec<u8>,
    /// Bytes read from stderr, including any not kept in `err`.
    err_bytes: u64,
    out_open: bool,
    err_open: bool,
}

impl Copy {
    fn ready(&self) -> bool {
        protocol::is_ready(&self.out)
    }

    fn report(&self) -> Report {
        protocol::parse(&String::from_utf8_lossy(&self.out))
    }
}

/// Reads whatever is available on the workers' pipes, waiting at most `timeout`.
fn pump(copies: &mut [Copy], signals: &Signals, timeout: Duration) -> anyhow::Result<()> {
    let mut fds = vec![PollFd::new(signals.fd(), PollFlags::POLLIN)];
    let mut map = Vec::new(); // (copy index, is stdout)
    for (i, c) in copies.iter().enumerate() {
        if c.out_open {
            fds.push(PollFd::new(c.stdout.as_fd(), PollFlags::POLLIN));
            map.push((i, true));
        }
        if c.err_open {
            fds.push(PollFd::new(c.stderr.as_fd(), PollFlags::POLLIN));
            map.push((i, false));
        }
    }
    let ms = u32::try_from(timeout.as_millis()).unwrap_or(u32::MAX);
    let timeout = PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX);
    match poll(&mut fds, timeout) {
        Ok(_) | Err(nix::errno::Errno::EINTR) => {}
        Err(e) => return Err(e.into()),
    }
    let ready: Vec<bool> = fds[1..]
        .iter()
        .map(|f| f.revents().is_some_and(|r| !r.is_empty()))
        .collect();
    drop(fds);
    let mut buf = [0u8; 4096];
    for ((i, is_out), ready) in map.into_iter().zip(ready) {
        if !ready {
            continue;
        }
        let c = &mut copies[i];
        let n = if is_out {
            c.stdout.read(&mut buf)
        } else {
            c.stderr.read(&mut buf)
        };
        match n {
            Ok(0) | Err(_) => {
                if is_out {
                    c.out_open = false;
                } else {
                    c.err_open = false;
                }
            }
            Ok(n) => {
                if !is_out {
                    c.err_bytes += n as u64;
                }
                let dst = if is_out { &mut c.out } else { &mut c.err };
                // A worker that floods stderr is not allowed to grow memory without bound.
                if dst.len() < 1 << 20 {
                    dst.extend_from_slice(&buf[..n]);
                }
            }
        }
    }
    Ok(())
}

/// Starts one worker in the pass's process group with the gate as its stdin.
fn spawn(
    plan: &PassPlan,
    gate: BorrowedFd<'_>,
    pgid: i32,
    counter: Option<String>,
) -> std::io::Result<(i32, ChildStdout, ChildStderr)> {
    let mut cmd = Command::new(plan.worker);
    match counter {
        Some(slot) => cmd.env(shared_count::ENV, slot),
        None => cmd.env_remove(shared_count::ENV),
    };
    cmd.arg(plan.spec.id)
        .arg(format!("{}", plan.duration))
        .current_dir(plan.workdir)
        .env("LANG", "en_US.utf8")
        .env("UB_BINDIR", plan.workdir.join("pgms"))
        .env("UB_TMPDIR", plan.workdir)
        .env("UB_TESTDIR", plan.workdir)
        .stdin(Stdio::from(gate.try_clone_to_owned()?))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(pgid);
    let mut child = cmd.spawn()?;
    let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(std::io::Error::other("worker pipes missing"));
    };
    // The task group reaps it; dropping the handle neither waits nor kills.
    Ok((child.id() as i32, out, err))
}

/// What a pass measured: each copy's sample, and the first copy's stderr output, if any copy
/// wrote some.
pub struct PassOutcome {
    pub samples: Vec<CopySample>,
    pub stderr: Option<String>,
    /// The copies' throughput up to one common stop, where the test keeps a live count.
    pub shared: Option<SharedWindow>,
}

/// When the counters are read, after the release: at half the duration, and a tenth of it
/// (at least 50 ms, at most half) before the earliest end of a window.
fn read_times(duration: f64) -> [Duration; 2] {
    let margin = (duration / 10.0).max(0.05).min(duration / 2.0);
    [duration / 2.0, duration - margin].map(|s| Duration::from_secs_f64(s.max(0.0)))
}

/// The most of a copy's stderr output a pass hands on.
const STDERR_KEPT: usize = 4096;

/// Runs one pass and returns each copy's sample.
pub fn run_pass(plan: &PassPlan, signals: &Signals, tick: Tick) -> anyhow::Result<PassOutcome> {
    let what = format!(
        "{} (pass {} of {}, {} cop{})",
        plan.spec.id,
        plan.pass,
        plan.passes,
        plan.copies,
        if plan.copies == 1 { "y" } else { "ies" }
    );
    let gate = Gate::new()?;
    // Dropped on every way out of this function: kills and reaps whatever is left.
    let mut group = TaskGroup::new();
    let mut copies: Vec<Copy> = Vec::new();
    let mut counters = match plan.spec.live_count && plan.copies > 1 {
        true => Some(
            Counters::create(plan.copies as usize)
                .map_err(|e| anyhow::anyhow!("{what}: cannot make the copies' counters: {e}"))?,
        ),
        false => None,
    };
    for i in 0..plan.copies {
        let slot = counters.as_ref().map(|c| c.env_value(i as usize));
        match spawn(plan, gate.read_end(), group.pgid(), slot) {
            Ok((pid, stdout, stderr)) => {
                group.add(pid);
                copies.push(Copy {
                    stdout,
                    stderr,
                    out: Vec::new(),
                    err: Vec::new(),
                    err_bytes: 0,
                    out_open: true,
                    err_open: true,
                });
            }
            Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {
                return Err(crate::proc::start_refused(
                    &what,
                    i as usize,
                    plan.copies as usize,
                    e,
                    "--copies",
                ));
            }
            Err(e) => {
                return Err(anyhow::anyhow!(
                    "{what}: cannot start {}: {e}",
                    plan.worker.display()
                ));
            }
        }
    }
    if let Some(c) = counters.as_mut() {
        c.close_descriptor();
    }
    let mut gate = gate.into_opener();

    // Wait until every copy is parked at the gate.
    let setup_deadline = Instant::now() + Duration::from_secs(60);
    while !copies.iter().all(Copy::ready) {
        signals.check()?;
        if let Some(i) = copies.iter().position(|c| !c.out_open && !c.ready()) {
            let status = group.reap(i);
            return Err(
                RunFailed(failure_message(&what, plan.workdir, i, &copies[i], status)).into(),
            );
        }
        if Instant::now() > setup_deadline {
            return Err(RunFailed(format!("{what}: workers did not start within 60 s")).into());
        }
        pump(&mut copies, signals, Duration::from_millis(250))?;
    }

    // In a duet, wait until the other guest's pass is ready too (nothing otherwise).
    crate::proc::barrier::wait(&what, signals)?;
    // Release everyone at once.
    // The release time is taken just before the gate opens, so no copy's window starts
    // before it.
    let (released, released_ns) = (Instant::now(), crate::clock::monotonic_ns());
    gate.open();
    let watchdog = Duration::from_secs_f64(plan.duration * 2.0 + 120.0);
    // When to read the live counts (no copy's window ends before release + duration).
    let read_at = read_times(plan.duration);
    let mut readings: Vec<(u64, u64)> = Vec::with_capacity(read_at.len());
    tick(0.0);
    while copies.iter().any(|c| c.out_open || c.err_open) {
        signals.check()?;
        let watchdog_left = watchdog.saturating_sub(released.elapsed());
        if watchdog_left.is_zero() {
            return Err(RunFailed(format!(
                "{what}: workers still running {:.0} s after release; killed them",
                watchdog.as_secs_f64()
            ))
            .into());
        }
        // A copy that closed its output without a result has died: stop the pass now.
        if let Some(i) = copies
            .iter()
            .position(|c| !c.out_open && c.report().count.is_none())
        {
            let status = group.reap(i);
            return Err(
                RunFailed(failure_message(&what, plan.workdir, i, &copies[i], status)).into(),
            );
        }
        // Sleep until something happens: a signal, a worker's output or its exit wakes the
        // poll at once, and nothing else needs the runner while the copies work. A runner
        // waking four times a second changes how the scheduler places a lone context1 pair
        // (see context_switch); the file tests' and Whetstone's timed sections start later
        // than the release, so no fixed window would cover them.
        let next_read = read_at.get(readings.len()).filter(|_| counters.is_some());
        let wait = match next_read {
            Some(at) => watchdog_left.min(at.saturating_sub(released.elapsed())),
            None => watchdog_left,
        };
        pump(&mut copies, signals, wait)?;
        if let (Some(c), Some(at)) = (&counters, next_read) {
            if released.elapsed() >= *at {
                let (_, sum) = c.read();
                readings.push((sum, crate::clock::monotonic_ns()));
            }
        }
        tick(released.elapsed().as_secs_f64());
    }

    group.sweep();
    let mut samples = Vec::with_capacity(copies.len());
    for (i, c) in copies.iter().enumerate() {
        let status = group.status(i);
        let report = c.report();
        let ok = status == Some(0) && report.error.is_none();
        let (Some(count), Some(wall), true) = (report.count, report.wall, ok) else {
            return Err(RunFailed(failure_message(&what, plan.workdir, i, c, status)).into());
        };
        let seconds = match plan.spec.time_source {
            TimeSource::SelfReported => report.time.unwrap_or(wall),
            TimeSource::Wall => wall,
        };
        let since_release = |ns: u64| (ns as f64 - released_ns as f64) / 1e9;
        samples.push(CopySample {
            copy: i as u32 + 1,
            count,
            seconds,
            wall_seconds: wall,
            rate: super::scoring::rate(count, seconds, plan.spec.timebase),
            window: report
                .window
                .map(|(a, b)| [since_release(a), since_release(b)]),
            stderr_bytes: c.err_bytes,
        });
    }
    // The shell scripts ignore a failed write (as UnixBench's do), so a file or shell pass
    // that filled --dir would count loops that did not do their work: refuse the pass when a
    // copy's programs said so on stderr, or the filesystem is full at its end.
    let writes_files = plan.spec.id.starts_with("fs") || plan.spec.id.starts_with("shell");
    let said_full = copies
        .iter()
        .any(|c| is_no_space(&String::from_utf8_lossy(&c.err)));
    if said_full || (writes_files && dir_full(plan.workdir)) {
        let dir = plan.workdir.parent().unwrap_or(plan.workdir);
        return Err(RunFailed(format!("{what}: {}", full_dir_message(dir))).into());
    }
    let shared = readings.iter().rev().find_map(|&(sum, at_ns)| {
        shared_window(&copies, sum, at_ns, released_ns, plan.spec.timebase)
    });
    let stderr = copies.iter().find(|c| !c.err.is_empty()).map(|c| {
        let text = String::from_utf8_lossy(&c.err);
        let mut end = text.len().min(STDERR_KEPT);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text[..end].to_string()
    });
    Ok(PassOutcome {
        samples,
        stderr,
        shared,
    })
}

/// The throughput up to the reading at `at_ns`, if every copy was still counting then (no
/// copy's window had ended).
fn shared_window(
    copies: &[Copy],
    sum: u64,
    at_ns: u64,
    released_ns: u64,
    timebase: u32,
) -> Option<SharedWindow> {
    let earliest_end = copies
        .iter()
        .map(|c| c.report().window.map(|(_, stop)| stop))
        .collect::<Option<Vec<u64>>>()?
        .into_iter()
        .min()?;
    if at_ns > earliest_end || at_ns <= released_ns {
        return None;
    }
    let seconds = (at_ns - released_ns) as f64 / 1e9;
    Some(SharedWindow {
        seconds,
        count: sum as f64,
        rate: super::scoring::rate(sum as f64, seconds, timebase),
    })
}

/// Whether the filesystem of `dir` has no free block left.
fn dir_full(dir: &Path) -> bool {
    nix::sys::statvfs::statvfs(dir).is_ok_and(|v| v.blocks() > 0 && v.blocks_free() == 0)
}

/// Whether an error says the filesystem is full (ENOSPC) or the quota used up (EDQUOT).
pub fn is_no_space(message: &str) -> bool {
    message.contains("No space left on device") || message.contains("Disk quota exceeded")
}

/// What to say when the `--dir` filesystem is full.
pub fn full_dir_message(dir: &Path) -> String {
    format!(
        "--dir {}: the filesystem is full (no space left on device); free some space there or \
         choose another --dir",
        dir.display()
    )
}

/// Says why copy `i` failed: its error line, or how it ended; when its files no longer fit in
/// `workdir` (inside --dir), which directory is full.
fn failure_message(what: &str, workdir: &Path, i: usize, c: &Copy, status: Option<i32>) -> String {
    let report = c.report();
    let stderr = String::from_utf8_lossy(&c.err).trim().replace('\n', " | ");
    let how = match (report.error, status) {
        (Some(e), _) => e,
        (None, Some(s)) if libc::WIFEXITED(s) => {
            format!(
                "worker {} without a result",
                crate::proc::status::describe_raw(s)
            )
        }
        (None, Some(s)) => format!("worker {}", crate::proc::status::describe_raw(s)),
        (None, None) => "worker closed its output without a result".to_string(),
    };
    let extra = if stderr.is_empty() {
        String::new()
    } else {
        format!(" (stderr: {stderr})")
    };
    let full = is_no_space(&how) || is_no_space(&stderr) || dir_full(workdir);
    let hint = if full {
        format!(
            "; {}",
            full_dir_message(workdir.parent().unwrap_or(workdir))
        )
    } else {
        String::new()
    };
    format!("{what}: copy {} of its pass: {how}{extra}{hint}", i + 1)
}
