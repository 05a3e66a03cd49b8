//! One pass of one test: start N worker processes, park them on one barrier, release them
//! together, collect what each reports, and make sure none is left behind.
//!
//! The workers are exec'd (`std::process::Command`), never forked from this process, and all of
//! a pass's workers (and their children) share one process group, so an interruption or a
//! failure can kill them all with one `kill(-pgid, SIGKILL)`.

use crate::error::{usage, RunFailed};
use crate::proc::signals::{signal_name, Signals};
use crate::record::CopySample;
use crate::unixbench::catalog::{TestSpec, TimeSource};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
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

/// Called about four times a second while the pass runs, with the seconds since release.
pub type Tick<'a> = &'a mut dyn FnMut(f64);

/// One running worker and what it has printed so far.
struct Copy {
    child: Child,
    out: Vec<u8>,
    err: Vec<u8>,
    out_open: bool,
    err_open: bool,
}

impl Copy {
    fn ready(&self) -> bool {
        self.out.starts_with(b"READY\n")
    }
}

/// Kills every process of the pass's group and reaps the workers.
fn kill_all(pgid: Option<i32>, copies: &mut [Copy]) {
    if let Some(pgid) = pgid {
        // SAFETY: signalling our own process group.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
    }
    for c in copies.iter_mut() {
        let _ = c.child.kill();
        let _ = c.child.wait();
    }
}

/// Reads whatever is available on the workers' pipes, waiting at most `timeout`.
fn pump(copies: &mut [Copy], signals: &Signals, timeout: Duration) -> anyhow::Result<()> {
    let mut fds = vec![PollFd::new(signals.fd(), PollFlags::POLLIN)];
    let mut map = Vec::new(); // (copy index, is stdout)
    for (i, c) in copies.iter().enumerate() {
        if c.out_open {
            if let Some(o) = c.child.stdout.as_ref() {
                fds.push(PollFd::new(o.as_fd(), PollFlags::POLLIN));
                map.push((i, true));
            }
        }
        if c.err_open {
            if let Some(e) = c.child.stderr.as_ref() {
                fds.push(PollFd::new(e.as_fd(), PollFlags::POLLIN));
                map.push((i, false));
            }
        }
    }
    let ms = timeout.as_millis().min(10_000) as u16;
    match poll(&mut fds, PollTimeout::from(ms)) {
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
            c.child.stdout.as_mut().map(|s| s.read(&mut buf))
        } else {
            c.child.stderr.as_mut().map(|s| s.read(&mut buf))
        };
        match n {
            Some(Ok(0)) | None | Some(Err(_)) => {
                if is_out {
                    c.out_open = false;
                } else {
                    c.err_open = false;
                }
            }
            Some(Ok(n)) => {
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

/// Parsed result lines of one copy (later lines win, as in UnixBench's Run).
#[derive(Debug, Default, PartialEq)]
pub struct Report {
    pub count: Option<f64>,
    pub time: Option<f64>,
    pub wall: Option<f64>,
    pub error: Option<String>,
}

/// Parses a worker's stdout.
pub fn parse_report(text: &str) -> Report {
    let mut r = Report::default();
    for line in text.lines() {
        let mut f = line.split('|');
        match (f.next(), f.next()) {
            (Some("COUNT"), Some(v)) => r.count = v.parse().ok(),
            (Some("TIME"), Some(v)) => r.time = v.parse().ok(),
            (Some("WALL"), Some(v)) => r.wall = v.parse().ok(),
            (Some("ERROR"), Some(_)) => r.error = Some(line["ERROR|".len()..].to_string()),
            _ => {}
        }
    }
    r
}

fn spawn(plan: &PassPlan, go: &std::os::fd::OwnedFd, pgid: Option<i32>) -> std::io::Result<Child> {
    let mut cmd = Command::new(plan.worker);
    cmd.arg(plan.spec.id)
        .arg(format!("{}", plan.duration))
        .current_dir(plan.workdir)
        .env("LANG", "en_US.utf8")
        .env("UB_BINDIR", plan.workdir.join("pgms"))
        .env("UB_TMPDIR", plan.workdir)
        .env("UB_TESTDIR", plan.workdir)
        .stdin(Stdio::from(go.try_clone()?))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(pgid.unwrap_or(0));
    cmd.spawn()
}

/// Runs one pass and returns each copy's sample.
pub fn run_pass(plan: &PassPlan, signals: &Signals, tick: Tick) -> anyhow::Result<Vec<CopySample>> {
    let what = format!(
        "{} (pass {} of {}, {} cop{})",
        plan.spec.id,
        plan.pass,
        plan.passes,
        plan.copies,
        if plan.copies == 1 { "y" } else { "ies" }
    );
    let (go_read, go_write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    let mut copies: Vec<Copy> = Vec::new();
    let mut pgid: Option<i32> = None;
    for i in 0..plan.copies {
        match spawn(plan, &go_read, pgid) {
            Ok(child) => {
                pgid.get_or_insert(child.id() as i32);
                copies.push(Copy {
                    child,
                    out: Vec::new(),
                    err: Vec::new(),
                    out_open: true,
                    err_open: true,
                });
            }
            Err(e) => {
                kill_all(pgid, &mut copies);
                if e.raw_os_error() == Some(libc::EAGAIN) {
                    return usage(format!(
                        "{what}: cannot start copy {} of {}: {e}; the process limit \
                         (ulimit -u) is too low for this many copies",
                        i + 1,
                        plan.copies
                    ));
                }
                return Err(anyhow::anyhow!(
                    "{what}: cannot start {}: {e}",
                    plan.worker.display()
                ));
            }
        }
    }
    drop(go_read);

    // Wait until every copy is parked on the barrier.
    let setup_deadline = Instant::now() + Duration::from_secs(60);
    while !copies.iter().all(Copy::ready) {
        if let Err(e) = signals.check() {
            kill_all(pgid, &mut copies);
            return Err(e.into());
        }
        if let Some(i) = copies.iter().position(|c| !c.out_open && !c.ready()) {
            let _ = copies[i].child.wait();
            let msg = failure_message(&what, i, &mut copies[i]);
            kill_all(pgid, &mut copies);
            return Err(RunFailed(msg).into());
        }
        if Instant::now() > setup_deadline {
            kill_all(pgid, &mut copies);
            return Err(RunFailed(format!("{what}: workers did not start within 60 s")).into());
        }
        pump(&mut copies, signals, Duration::from_millis(250))?;
    }

    // Release everyone at once: EOF on every worker's stdin.
    drop(go_write);
    let released = Instant::now();
    let watchdog = Duration::from_secs_f64(plan.duration * 2.0 + 120.0);
    while copies.iter().any(|c| c.out_open || c.err_open) {
        if let Err(e) = signals.check() {
            kill_all(pgid, &mut copies);
            return Err(e.into());
        }
        if released.elapsed() > watchdog {
            kill_all(pgid, &mut copies);
            return Err(RunFailed(format!(
                "{what}: workers still running {:.0} s after release; killed them",
                watchdog.as_secs_f64()
            ))
            .into());
        }
        // A copy that closed its output without a result has died: stop the pass now.
        if let Some(i) = copies.iter().position(|c| {
            !c.out_open
                && parse_report(&String::from_utf8_lossy(&c.out))
                    .count
                    .is_none()
        }) {
            let _ = copies[i].child.wait();
            let msg = failure_message(&what, i, &mut copies[i]);
            kill_all(pgid, &mut copies);
            return Err(RunFailed(msg).into());
        }
        // While the copies' timed window runs, sleep until its end (a signal, a worker's
        // output or its exit still wakes the poll at once): a runner waking four times a
        // second changes how the scheduler places a lone context1 pair (see context_switch).
        let window_left = Duration::from_secs_f64(plan.duration).saturating_sub(released.elapsed());
        pump(
            &mut copies,
            signals,
            window_left.max(Duration::from_millis(250)),
        )?;
        tick(released.elapsed().as_secs_f64());
    }

    // Reap: the group leader is only peeked at (it stays a zombie, so its pgid cannot be
    // reused) until stragglers of the group have been swept.
    for c in copies.iter_mut().skip(1) {
        c.child.wait()?;
    }
    if let (Some(leader), Some(pg)) = (copies.first(), pgid) {
        let pid = nix::unistd::Pid::from_raw(leader.child.id() as i32);
        let flags = nix::sys::wait::WaitPidFlag::WEXITED | nix::sys::wait::WaitPidFlag::WNOWAIT;
        let _ = nix::sys::wait::waitid(nix::sys::wait::Id::Pid(pid), flags);
        // SAFETY: signalling our own process group; only stragglers can still be in it.
        unsafe { libc::kill(-pg, libc::SIGKILL) };
    }
    if let Some(leader) = copies.first_mut() {
        leader.child.wait()?;
    }

    let mut samples = Vec::with_capacity(copies.len());
    for (i, c) in copies.iter_mut().enumerate() {
        let status = c.child.wait()?;
        let report = parse_report(&String::from_utf8_lossy(&c.out));
        let ok = status.success() && report.error.is_none();
        let (Some(count), Some(wall), true) = (report.count, report.wall, ok) else {
            return Err(RunFailed(failure_message(&what, i, c)).into());
        };
        let seconds = match plan.spec.time_source {
            TimeSource::SelfReported => report.time.unwrap_or(wall),
            TimeSource::Wall => wall,
        };
        samples.push(CopySample {
            copy: i as u32 + 1,
            count,
            seconds,
            wall_seconds: wall,
            rate: super::scoring::rate(count, seconds, plan.spec.timebase),
        });
    }
    Ok(samples)
}

/// Says why copy `i` failed: its error line, the signal that killed it, or its exit status.
fn failure_message(what: &str, i: usize, c: &mut Copy) -> String {
    let report = parse_report(&String::from_utf8_lossy(&c.out));
    let stderr = String::from_utf8_lossy(&c.err).trim().replace('\n', " | ");
    let status = c.child.try_wait().ok().flatten();
    let how = if let Some(e) = report.error {
        e
    } else if let Some(sig) = status.and_then(|s| s.signal()) {
        format!("worker was killed by {}", signal_name(sig))
    } else if let Some(code) = status.and_then(|s| s.code()) {
        format!("worker exited with status {code} without a result")
    } else {
        "worker closed its output without a result".to_string()
    };
    let extra = if stderr.is_empty() {
        String::new()
    } else {
        format!(" (stderr: {stderr})")
    };
    format!("{what}: copy {} of its pass: {how}{extra}", i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_lines_win_and_errors_are_kept() {
        let r = parse_report("READY\nCOUNT|10|1|lps\nCOUNT|11|1|lps\nTIME|2.5\nWALL|2.6\n");
        assert_eq!(r.count, Some(11.0));
        assert_eq!(r.time, Some(2.5));
        assert_eq!(r.wall, Some(2.6));
        assert_eq!(r.error, None);
        let r = parse_report("READY\nERROR|pipe: pipe write: Broken pipe|x\n");
        assert_eq!(r.error.as_deref(), Some("pipe: pipe write: Broken pipe|x"));
        assert_eq!(r.count, None);
    }
}
