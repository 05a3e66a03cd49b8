//! One program run under supervision, as a campaign step runs its workload or its guest: in a
//! process group of its own, dying with this process (`PR_SET_PDEATHSIG`, so even a SIGKILL of
//! patchbench leaves no workload or QEMU behind), optionally joining a step's cgroup before it
//! execs (`super::contain`), its standard output and error read through one pipe and kept as
//! the last lines (the console), stopped (SIGTERM to the group, then SIGKILL) on a deadline or
//! when patchbench is interrupted. This process waits in one `poll` of the pipe, the program's
//! pidfd, the signal pipe and the deadline; it never forks from more than one thread. The wait
//! is for the program itself: once it has exited, what it left holding the pipe (a background
//! process of a setup command) does not hold the wait, and its group is killed.
//! [`wait_all`] waits on several programs at once in the same way (a duet's two guests),
//! together with other descriptors the caller watches ([`Alongside`]: the duet's barrier).

use super::signals::Signals;
use crate::error::Interrupted;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use std::collections::VecDeque;
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Lines of console kept.
pub const TAIL_LINES: usize = 40;
/// Longest console line kept, in bytes (longer ones are cut).
const MAX_LINE: usize = 4096;
/// Time between SIGTERM and SIGKILL when stopping the group.
const GRACE: Duration = Duration::from_secs(3);

/// How a supervised program ended.
#[derive(Debug)]
pub enum Ended {
    /// It exited or was killed by a signal on its own: the status, described.
    Exited {
        success: bool,
        code: Option<i32>,
        how: String,
    },
    /// The deadline passed; it was stopped.
    TimedOut,
    /// This process was interrupted; the program was stopped.
    Interrupted(Interrupted),
}

/// The end and the console's last lines.
#[derive(Debug)]
pub struct Outcome {
    pub ended: Ended,
    pub tail: Vec<String>,
    /// What the program left running in its process group when it exited (`NAME (pid N)`),
    /// described before the group was killed: a shell's `cmd &` stays in its group.
    pub left_in_group: Vec<String>,
}

impl Outcome {
    /// The console's last lines as one text.
    pub fn tail_text(&self) -> String {
        self.tail.join("\n")
    }
}

/// A running supervised program.
pub struct Supervised {
    child: Child,
    pgid: i32,
    output: std::process::ChildStdout,
    /// Readable once the program has exited (None where the kernel has no pidfd: then the
    /// wait looks every 100 ms).
    pidfd: Option<std::os::fd::OwnedFd>,
    partial: Vec<u8>,
    tail: VecDeque<String>,
    left_in_group: Vec<String>,
}

impl Supervised {
    /// Starts `cmd` with its stdout and stderr on one pipe, stdin from /dev/null, in a new
    /// process group, to die with this process.
    pub fn spawn(cmd: Command) -> std::io::Result<Supervised> {
        Supervised::spawn_joining(cmd, None)
    }

    /// [`Supervised::spawn`], the program joining the cgroup whose `cgroup.procs` is open as
    /// `join` before it execs (so everything it starts is in it from the first fork).
    pub fn spawn_joining(cmd: Command, join: Option<RawFd>) -> std::io::Result<Supervised> {
        Supervised::start(cmd, join, None)
    }

    /// [`Supervised::spawn`], with the program's standard output written to `stdout` (a file
    /// of the caller's) and only its standard error on the pipe: the console is then its
    /// standard error (`patchbench exec`, which reads the output of a tool we did not write).
    pub fn spawn_stdout_to(cmd: Command, stdout: std::fs::File) -> std::io::Result<Supervised> {
        Supervised::start(cmd, None, Some(stdout))
    }

    fn start(
        mut cmd: Command,
        join: Option<RawFd>,
        stdout: Option<std::fs::File>,
    ) -> std::io::Result<Supervised> {
        // (Unit tests run on the test harness's threads; the program itself never does.)
        if !cfg!(test) {
            super::child::ensure_single_threaded("the supervisor of a program")
                .map_err(|e| std::io::Error::other(e.to_string()))?;
        }
        let (read, write) = std::io::pipe()?;
        let parent = std::process::id() as libc::pid_t;
        cmd.stdin(Stdio::null());
        match stdout {
            Some(file) => cmd.stdout(file),
            None => cmd.stdout(write.try_clone()?),
        };
        cmd.stderr(write);
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
                    libc::signal(sig, libc::SIG_DFL);
                }
                libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                );
                if libc::getppid() != parent {
                    libc::_exit(super::child::ORPHAN_EXIT);
                }
                libc::setpgid(0, 0);
                if let Some(fd) = join {
                    // "0": the writing process itself.
                    if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn()?;
        // Drop the Command's copies of the write end, so EOF comes when the program ends.
        drop(cmd);
        let pgid = child.id() as i32;
        let output = match reader_as_stdout(read) {
            Ok(o) => o,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
        };
        let pidfd = pidfd_open(pgid);
        Ok(Supervised {
            child,
            pgid,
            output,
            pidfd,
            partial: Vec::new(),
            tail: VecDeque::new(),
            left_in_group: Vec::new(),
        })
    }

    /// The program's pid (and process group).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the program has ended (reaped now if it has; a program that cannot be waited
    /// for counts as ended).
    pub fn has_ended(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits until the program ends, `deadline` passes or a signal arrives; `on_line` sees every
    /// console line as it comes (for a progress line or a marker), and may ask to stop early
    /// by returning false (the program is then stopped and the end is `Exited` with its status).
    /// `on_tick` is called at least once a second meanwhile.
    pub fn wait(
        self,
        signals: &Signals,
        deadline: Option<Instant>,
        on_line: &mut dyn FnMut(&str) -> bool,
        on_tick: &mut dyn FnMut(),
    ) -> Outcome {
        let mut outcomes = wait_all(
            vec![self],
            signals,
            deadline,
            &mut |_, line| on_line(line),
            &mut Ticking {
                inner: &mut Nothing,
                tick: on_tick,
            },
        );
        outcomes.pop().unwrap_or(Outcome {
            ended: Ended::Exited {
                success: false,
                code: None,
                how: "was lost".to_string(),
            },
            tail: Vec::new(),
            left_in_group: Vec::new(),
        })
    }

    /// Reads what the pipe has now; false once it is closed.
    fn read_some(&mut self, on_line: &mut dyn FnMut(&str) -> bool, stop: &mut bool) -> bool {
        let mut buf = [0u8; 8192];
        match self.output.read(&mut buf) {
            Ok(0) | Err(_) => {
                self.flush_partial(on_line, stop);
                false
            }
            Ok(n) => {
                self.take(&buf[..n], on_line, stop);
                true
            }
        }
    }

    /// Reads what the pipe holds now without waiting (the program has exited; something it
    /// left may keep the pipe open).
    fn read_rest(&mut self, on_line: &mut dyn FnMut(&str) -> bool, stop: &mut bool) {
        let _ = set_nonblocking(&self.output);
        let mut buf = [0u8; 8192];
        while let Ok(n) = self.output.read(&mut buf) {
            if n == 0 {
                break;
            }
            self.take(&buf[..n], on_line, stop);
        }
        self.flush_partial(on_line, stop);
    }

    /// Reaps the program (its pipe is closed or it was stopped) and kills what it left in its
    /// group; the end, described.
    fn reap(&mut self) -> Ended {
        let status = self.child.wait();
        // Anything the program left in its group goes with it, named first.
        self.left_in_group = super::contain::group_members(self.pgid)
            .into_iter()
            .map(super::contain::describe)
            .collect();
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(self.pgid),
            nix::sys::signal::Signal::SIGKILL,
        );
        match status {
            Ok(s) => Ended::Exited {
                success: s.success(),
                code: s.code(),
                how: match (s.code(), s.signal()) {
                    (Some(c), _) => format!("exited with status {c}"),
                    (None, Some(sig)) => {
                        format!("was killed by {}", super::status::signal_name(sig))
                    }
                    _ => "ended".to_string(),
                },
            },
            Err(e) => Ended::Exited {
                success: false,
                code: None,
                how: format!("could not be waited for ({e})"),
            },
        }
    }

    fn take(&mut self, bytes: &[u8], on_line: &mut dyn FnMut(&str) -> bool, stop: &mut bool) {
        for &b in bytes {
            if b == b'\n' {
                self.flush_partial(on_line, stop);
            } else if self.partial.len() < MAX_LINE {
                self.partial.push(b);
            }
        }
    }

    fn flush_partial(&mut self, on_line: &mut dyn FnMut(&str) -> bool, stop: &mut bool) {
        if self.partial.is_empty() {
            return;
        }
        let line = String::from_utf8_lossy(&self.partial)
            .trim_end_matches('\r')
            .to_string();
        self.partial.clear();
        if !on_line(&line) {
            *stop = true;
        }
        if self.tail.len() == TAIL_LINES {
            self.tail.pop_front();
        }
        self.tail.push_back(line);
    }

    /// SIGTERM to the group (the first half of stopping it).
    fn terminate(&self) {
        let pg = nix::unistd::Pid::from_raw(self.pgid);
        let _ = nix::sys::signal::killpg(pg, nix::sys::signal::Signal::SIGTERM);
    }

    /// After [`Supervised::terminate`]: waits until `grace_end` for the program to go, then
    /// SIGKILL to the group, reap, and keep what it printed before it went.
    fn finish_stop(&mut self, grace_end: Instant) {
        while Instant::now() < grace_end {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let pg = nix::unistd::Pid::from_raw(self.pgid);
        let _ = nix::sys::signal::killpg(pg, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
        let mut rest = Vec::new();
        let _ = set_nonblocking(&self.output);
        let _ = self.output.read_to_end(&mut rest);
        let mut ignore = false;
        self.take(&rest, &mut |_| true, &mut ignore);
        self.flush_partial(&mut |_| true, &mut ignore);
    }

    /// SIGTERM to the group, SIGKILL after a grace period, and reap.
    fn stop(&mut self) {
        self.terminate();
        self.finish_stop(Instant::now() + GRACE);
    }

    fn outcome(mut self, ended: Ended) -> Outcome {
        Outcome {
            ended,
            tail: std::mem::take(&mut self.tail).into_iter().collect(),
            left_in_group: std::mem::take(&mut self.left_in_group),
        }
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(self.pgid),
                nix::sys::signal::Signal::SIGKILL,
            );
            let _ = self.child.wait();
        }
    }
}

/// Something a wait watches beside its programs' output (a duet's barrier connections): its
/// descriptors are polled with the programs' pipes, and it hears when a program ends.
pub trait Alongside {
    /// The descriptors to watch for input now (valid until the next call of a `&mut` method).
    fn fds(&self) -> Vec<RawFd>;
    /// Descriptor `index` of the last [`Alongside::fds`] is readable or hung up.
    fn readable(&mut self, index: usize);
    /// Program `which` (its index in the wait) has ended.
    fn ended(&mut self, which: usize);
    /// Called on every turn of the wait, at least once a second (a lab agent renews its
    /// step's lease here).
    fn tick(&mut self) {}
}

/// What is alongside, and a tick beside it.
pub struct Ticking<'a> {
    pub inner: &'a mut dyn Alongside,
    pub tick: &'a mut dyn FnMut(),
}

impl Alongside for Ticking<'_> {
    fn fds(&self) -> Vec<RawFd> {
        self.inner.fds()
    }
    fn readable(&mut self, index: usize) {
        self.inner.readable(index)
    }
    fn ended(&mut self, which: usize) {
        self.inner.ended(which)
    }
    fn tick(&mut self) {
        self.inner.tick();
        (self.tick)()
    }
}

/// Nothing alongside.
pub struct Nothing;

impl Alongside for Nothing {
    fn fds(&self) -> Vec<RawFd> {
        Vec::new()
    }
    fn readable(&mut self, _index: usize) {}
    fn ended(&mut self, _which: usize) {}
}

/// A program of a wait, with where it is.
struct Slot {
    program: Supervised,
    open: bool,
    stop_early: bool,
    ended: Option<Ended>,
}

/// Waits on several programs at once, in one `poll` of their pipes, the signal pipe, what is
/// `alongside` and the deadline, until every one has ended. `on_line` sees each console line
/// with the index of its program, and may stop that program early by returning false. A
/// signal stops them all (each ends `Interrupted`); the deadline stops those still running
/// (`TimedOut`); a program that ended before keeps its own end. The outcomes are in the
/// programs' order.
pub fn wait_all(
    programs: Vec<Supervised>,
    signals: &Signals,
    deadline: Option<Instant>,
    on_line: &mut dyn FnMut(usize, &str) -> bool,
    alongside: &mut dyn Alongside,
) -> Vec<Outcome> {
    let mut slots: Vec<Slot> = programs
        .into_iter()
        .map(|program| Slot {
            program,
            open: true,
            stop_early: false,
            ended: None,
        })
        .collect();
    loop {
        alongside.tick();
        if let Some(i) = signals.pending() {
            stop_running(&mut slots, || Ended::Interrupted(Interrupted { ..i }));
            break;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            stop_running(&mut slots, || Ended::TimedOut);
            break;
        }
        for (i, slot) in slots.iter_mut().enumerate() {
            if slot.ended.is_some() {
                continue;
            }
            if slot.stop_early {
                slot.program.stop();
                slot.ended = Some(slot.program.reap());
                alongside.ended(i);
            } else {
                match slot.program.child.try_wait() {
                    Ok(Some(_)) | Err(_) => {
                        // The program is gone: what it wrote is read, and whatever still holds
                        // its pipe (a process it left behind) does not hold the wait.
                        if slot.open {
                            let mut stop = false;
                            slot.program
                                .read_rest(&mut |line| on_line(i, line), &mut stop);
                            slot.open = false;
                        }
                        slot.ended = Some(slot.program.reap());
                        alongside.ended(i);
                    }
                    Ok(None) => {}
                }
            }
        }
        if slots.iter().all(|s| s.ended.is_some()) {
            break;
        }
        let any_open = slots.iter().any(|s| s.ended.is_none() && s.open);
        let all_pidfds = slots
            .iter()
            .all(|s| s.ended.is_some() || s.program.pidfd.is_some());
        let wait_ms = deadline
            .map(|d| d.saturating_duration_since(Instant::now()).as_millis())
            .unwrap_or(1000)
            .clamp(1, if any_open && all_pidfds { 1000 } else { 100 }) as i32;
        let extra = alongside.fds();
        let (sig, out, also) = {
            let mut fds = vec![PollFd::new(signals.fd(), PollFlags::POLLIN)];
            let mut watched = Vec::new();
            for (i, slot) in slots.iter().enumerate() {
                if slot.ended.is_none() && slot.open {
                    fds.push(PollFd::new(slot.program.output.as_fd(), PollFlags::POLLIN));
                    watched.push(i);
                }
            }
            // The programs' pidfds only wake the poll; the next turn sees who exited.
            let exits: Vec<BorrowedFd> = slots
                .iter()
                .filter(|s| s.ended.is_none())
                .filter_map(|s| s.program.pidfd.as_ref().map(|f| f.as_fd()))
                .collect();
            for &fd in &extra {
                // SAFETY: `alongside` keeps these open until its next `&mut` call, after the
                // poll.
                fds.push(PollFd::new(
                    unsafe { BorrowedFd::borrow_raw(fd) },
                    PollFlags::POLLIN,
                ));
            }
            for fd in &exits {
                fds.push(PollFd::new(*fd, PollFlags::POLLIN));
            }
            let _ = poll(
                &mut fds,
                PollTimeout::try_from(wait_ms).unwrap_or(PollTimeout::MAX),
            );
            let ready = |k: usize| fds[k].revents().is_some_and(|r| !r.is_empty());
            let sig = ready(0);
            let out: Vec<usize> = (0..watched.len())
                .filter(|&k| ready(1 + k))
                .map(|k| watched[k])
                .collect();
            let also: Vec<usize> = (0..extra.len())
                .filter(|&k| ready(1 + watched.len() + k))
                .collect();
            (sig, out, also)
        };
        if sig {
            signals.drain();
        }
        for i in out {
            let slot = &mut slots[i];
            let mut stop = false;
            slot.open = slot
                .program
                .read_some(&mut |line| on_line(i, line), &mut stop);
            slot.stop_early |= stop;
        }
        for k in also {
            alongside.readable(k);
        }
    }
    slots
        .into_iter()
        .map(|mut s| {
            let ended = s.ended.take().unwrap_or(Ended::TimedOut);
            s.program.outcome(ended)
        })
        .collect()
}

/// Stops every program still running (SIGTERM to all, one grace period, SIGKILL), giving each
/// the end `why` makes.
fn stop_running(slots: &mut [Slot], why: impl Fn() -> Ended) {
    let running: Vec<usize> = (0..slots.len())
        .filter(|&i| slots[i].ended.is_none())
        .collect();
    for &i in &running {
        slots[i].program.terminate();
    }
    let grace_end = Instant::now() + GRACE;
    for &i in &running {
        slots[i].program.finish_stop(grace_end);
        slots[i].ended = Some(why());
    }
}

/// A pidfd of process `pid` (Linux 5.3 and later), None where there is none.
fn pidfd_open(pid: i32) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    // SAFETY: a descriptor the call just made, owned by no one else.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

fn set_nonblocking(f: &impl AsFd) -> nix::Result<()> {
    use nix::fcntl::{fcntl, FcntlArg, OFlag};
    let flags = OFlag::from_bits_truncate(fcntl(f, FcntlArg::F_GETFL)?);
    fcntl(f, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK)).map(|_| ())
}

/// The pipe's read end as a `ChildStdout`-like reader.
fn reader_as_stdout(read: std::io::PipeReader) -> std::io::Result<std::process::ChildStdout> {
    let fd: std::os::fd::OwnedFd = read.into();
    Ok(std::process::ChildStdout::from(fd))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c").arg(script);
        c
    }

    #[test]
    fn keeps_the_last_lines_and_the_status() {
        let signals = Signals::install().unwrap();
        let s = Supervised::spawn(sh(
            "i=0; while [ $i -lt 50 ]; do echo line$i; i=$((i+1)); done; echo err >&2; exit 3",
        ))
        .unwrap();
        let mut seen = 0;
        let out = s.wait(
            &signals,
            None,
            &mut |_| {
                seen += 1;
                true
            },
            &mut || {},
        );
        assert_eq!(seen, 51);
        assert_eq!(out.tail.len(), TAIL_LINES);
        assert_eq!(out.tail.last().unwrap(), "err");
        match out.ended {
            Ended::Exited { success, code, .. } => assert_eq!((success, code), (false, Some(3))),
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn a_deadline_stops_the_whole_group() {
        let signals = Signals::install().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("grandchild");
        let script = format!(
            "sleep 300 & echo $! > {}; echo started; wait",
            pidfile.display()
        );
        let s = Supervised::spawn(sh(&script)).unwrap();
        let mut ticks = 0;
        let out = s.wait(
            &signals,
            Some(Instant::now() + Duration::from_millis(1500)),
            &mut |_| true,
            &mut || ticks += 1,
        );
        assert!(matches!(out.ended, Ended::TimedOut), "{:?}", out.ended);
        // Ticked at least once a second while it waited (a lease is renewed there).
        assert!(ticks >= 2, "{ticks} ticks in 1.5 s");
        assert_eq!(out.tail, ["started"]);
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The grandchild is gone (reaped by init or still a zombie being reaped).
        std::thread::sleep(Duration::from_millis(200));
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(stat.is_empty() || stat.contains(") Z "), "{stat}");
    }

    #[test]
    fn a_line_can_end_it_early() {
        let signals = Signals::install().unwrap();
        let s = Supervised::spawn(sh("echo READY; sleep 300")).unwrap();
        let t = Instant::now();
        let out = s.wait(&signals, None, &mut |l| l != "READY", &mut || {});
        assert!(t.elapsed() < Duration::from_secs(10));
        assert!(matches!(out.ended, Ended::Exited { success: false, .. }));
    }

    /// Watches one pipe: counts its wake-ups and the programs it hears ended.
    struct Watch {
        read: std::os::fd::OwnedFd,
        readable: usize,
        ended: Vec<usize>,
    }

    impl Alongside for Watch {
        fn fds(&self) -> Vec<RawFd> {
            use std::os::fd::AsRawFd;
            vec![self.read.as_raw_fd()]
        }
        fn readable(&mut self, index: usize) {
            assert_eq!(index, 0);
            let mut b = [0u8; 16];
            let _ = nix::unistd::read(&self.read, &mut b);
            self.readable += 1;
        }
        fn ended(&mut self, which: usize) {
            self.ended.push(which);
        }
    }

    #[test]
    fn waits_on_several_programs_and_what_is_alongside() {
        let signals = Signals::install().unwrap();
        let (read, write) = nix::unistd::pipe().unwrap();
        nix::unistd::write(&write, b"x").unwrap();
        let mut watch = Watch {
            read,
            readable: 0,
            ended: Vec::new(),
        };
        let quick = Supervised::spawn(sh("echo a; exit 0")).unwrap();
        let slow = Supervised::spawn(sh("echo b; sleep 300")).unwrap();
        let mut lines = Vec::new();
        let started = Instant::now();
        let outs = wait_all(
            vec![quick, slow],
            &signals,
            Some(Instant::now() + Duration::from_secs(3)),
            &mut |i, l| {
                lines.push((i, l.to_string()));
                true
            },
            &mut watch,
        );
        assert!(started.elapsed() < Duration::from_secs(30));
        assert!(
            matches!(outs[0].ended, Ended::Exited { success: true, .. }),
            "{:?}",
            outs[0].ended
        );
        assert!(
            matches!(outs[1].ended, Ended::TimedOut),
            "{:?}",
            outs[1].ended
        );
        assert_eq!(outs[0].tail, ["a"]);
        assert_eq!(outs[1].tail, ["b"]);
        assert!(lines.contains(&(0, "a".to_string())) && lines.contains(&(1, "b".to_string())));
        assert_eq!(
            watch.ended,
            [0],
            "the program that ended on its own is announced"
        );
        assert!(watch.readable >= 1);
    }

    #[test]
    fn a_line_can_end_one_program_of_several() {
        let signals = Signals::install().unwrap();
        let a = Supervised::spawn(sh("echo STOP; sleep 300")).unwrap();
        let b = Supervised::spawn(sh("sleep 0.2; echo done")).unwrap();
        let outs = wait_all(
            vec![a, b],
            &signals,
            Some(Instant::now() + Duration::from_secs(60)),
            &mut |_, l| l != "STOP",
            &mut Nothing,
        );
        assert!(matches!(
            outs[0].ended,
            Ended::Exited { success: false, .. }
        ));
        assert!(matches!(outs[1].ended, Ended::Exited { success: true, .. }));
    }
}
