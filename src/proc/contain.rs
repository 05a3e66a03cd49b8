//! Everything a campaign step starts, kept together so that the step can end it: a cgroup of
//! the step's own where the kernel offers one to this process (cgroup v1: a directory of the
//! `freezer` hierarchy, else of `pids`, which a setup command's own cgroup of another
//! hierarchy, such as a CPU quota, does not move it out of; cgroup v2: a child of the root),
//! which the step's shell joins before it execs (so nothing it forks escapes it, whatever
//! session or process group it makes); and, everywhere, this process a subreaper
//! (`PR_SET_CHILD_SUBREAPER`), so that what leaves the session (`setsid cmd &`) and loses its
//! parent comes back to it rather than to init, where it is known by the step's mark in its
//! environment ([`Contained::mark`]). [`Contained::end_rest`] ends what is left once the
//! workload is over and names each process it ended.
//!
//! A step cgroup is named `patchbench-step-PID-N`; one whose process is dead (a SIGKILL) is
//! emptied and removed by [`sweep_dead`].

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The name of the step cgroups: `patchbench-step-PID-N`.
const PREFIX: &str = "patchbench-step-";

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A step's processes, kept together.
pub struct Contained {
    /// `patchbench-step-PID-N`: the cgroup's name and the step's mark.
    name: String,
    /// The step's cgroup, and its `cgroup.procs` open for the step's shell to join.
    cgroup: Option<(PathBuf, OwnedFd)>,
}

/// The environment variable that marks a step's processes.
pub const MARK: &str = "PATCHBENCH_STEP_MARK";

/// The cgroup hierarchies a step cgroup may go in, best first.
fn hierarchies() -> Vec<PathBuf> {
    let root = Path::new("/sys/fs/cgroup");
    let v2 = nix::sys::statfs::statfs(root)
        .is_ok_and(|s| s.filesystem_type() == nix::sys::statfs::CGROUP2_SUPER_MAGIC);
    if v2 {
        return vec![root.to_path_buf()];
    }
    ["freezer", "pids"]
        .iter()
        .map(|h| root.join(h))
        .filter(|p| {
            nix::sys::statfs::statfs(p.as_path())
                .is_ok_and(|s| s.filesystem_type() == nix::sys::statfs::CGROUP_SUPER_MAGIC)
        })
        .collect()
}

impl Contained {
    /// Makes this process a subreaper, and a fresh step cgroup where it may (root, a cgroup
    /// file system mounted); without one, the subreaper alone finds what the step left.
    pub fn new() -> Contained {
        // SAFETY: prctl with an integer argument.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        let name = format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let cgroup = hierarchies().into_iter().find_map(|h| {
            let dir = h.join(&name);
            std::fs::create_dir(&dir).ok()?;
            match std::fs::OpenOptions::new()
                .write(true)
                .open(dir.join("cgroup.procs"))
            {
                Ok(f) => Some((dir, OwnedFd::from(f))),
                Err(_) => {
                    let _ = std::fs::remove_dir(&dir);
                    None
                }
            }
        });
        Contained { name, cgroup }
    }

    /// The environment variable and value every process of the step inherits (set it on the
    /// step's command): an orphan of this process that carries it is the step's.
    pub fn mark(&self) -> (&'static str, &str) {
        (MARK, &self.name)
    }

    /// The descriptor the step's shell writes itself into before it execs (see
    /// `super::supervise::Supervised::spawn_joining`), when there is a cgroup.
    pub fn join_fd(&self) -> Option<RawFd> {
        self.cgroup.as_ref().map(|(_, fd)| fd.as_raw_fd())
    }

    /// Where the step's processes are kept, in words (for the step's record).
    pub fn how(&self) -> String {
        match &self.cgroup {
            Some((dir, _)) => format!("cgroup {}", dir.display()),
            None => "this process as their subreaper".to_string(),
        }
    }

    /// Ends (SIGKILL) and reaps every process the step left: the members of its cgroup and the
    /// orphans that came to this process; returns each as `NAME (pid N)`.
    pub fn end_rest(&self) -> Vec<String> {
        let mut ended: Vec<(i32, String)> = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let mut left: Vec<i32> = self
                .cgroup
                .as_ref()
                .map(|(dir, _)| members(dir))
                .unwrap_or_default();
            left.extend(
                children_of(std::process::id() as i32)
                    .into_iter()
                    .filter(|&p| marked(p, &self.name)),
            );
            left.sort_unstable();
            left.dedup();
            if left.is_empty() || Instant::now() > deadline {
                break;
            }
            for pid in left {
                if !ended.iter().any(|(p, _)| *p == pid) {
                    ended.push((pid, describe(pid)));
                }
                let p = nix::unistd::Pid::from_raw(pid);
                let _ = nix::sys::signal::kill(p, nix::sys::signal::Signal::SIGKILL);
                // Ours to reap when it was reparented here; else its parent or init does.
                let _ = nix::sys::wait::waitpid(p, Some(nix::sys::wait::WaitPidFlag::WNOHANG));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        ended.into_iter().map(|(_, d)| d).collect()
    }
}

impl Default for Contained {
    fn default() -> Self {
        Contained::new()
    }
}

impl Drop for Contained {
    fn drop(&mut self) {
        if let Some((dir, _)) = &self.cgroup {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// The processes in a cgroup.
fn members(dir: &Path) -> Vec<i32> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// The children of process `parent` (zombies included: they are reaped).
fn children_of(parent: i32) -> Vec<i32> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    // pid (comm) state ppid ...: comm may hold spaces and parentheses.
                    let rest = &s[s.rfind(')')? + 1..];
                    rest.split_whitespace().nth(1)?.parse::<i32>().ok()
                })
                == Some(parent)
        })
        .collect()
}

/// True when process `pid` carries the step mark `name` in its environment.
fn marked(pid: i32, name: &str) -> bool {
    let want = format!("{MARK}={name}");
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|env| env.split(|b| *b == 0).any(|v| v == want.as_bytes()))
        .unwrap_or(false)
}

/// `NAME (pid N)`.
fn describe(pid: i32) -> String {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    format!("{} (pid {pid})", crate::safe_text::field(comm.trim()))
}

/// Empties and removes the step cgroups of processes that are gone from this host (a
/// SIGKILL leaves its step's cgroup, and what a setup command left in it); returns what it
/// removed.
pub fn sweep_dead() -> Vec<PathBuf> {
    let mut removed = Vec::new();
    for h in hierarchies() {
        let Ok(rd) = std::fs::read_dir(&h) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .strip_prefix(PREFIX)
                .and_then(|r| r.split('-').next())
                .and_then(|p| p.parse::<i32>().ok())
            else {
                continue;
            };
            if !crate::sysinfo::process_gone(pid) {
                continue;
            }
            let dir = e.path();
            for _ in 0..100 {
                let left = members(&dir);
                if left.is_empty() {
                    break;
                }
                for p in left {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(p),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            if std::fs::remove_dir(&dir).is_ok() {
                removed.push(dir);
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_program_leaves_behind_is_found_and_ended() {
        let c = Contained::new();
        let mut cmd = std::process::Command::new("sh");
        let (k, v) = c.mark();
        cmd.arg("-c")
            .arg("sleep 300 & setsid sleep 301 >/dev/null 2>&1 & sleep 0.3; echo started")
            .env(k, v);
        let s = super::super::supervise::Supervised::spawn_joining(cmd, c.join_fd()).unwrap();
        let signals = super::super::signals::Signals::install().unwrap();
        let started = Instant::now();
        let out = s.wait(&signals, None, &mut |_| true, &mut || {});
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "it waited for the rest"
        );
        assert_eq!(out.tail, ["started"]);
        let ended = c.end_rest();
        // The one in the program's group went with it; the one in a session of its own is
        // found (in the cgroup, or as an orphan of this subreaper) and ended.
        assert!(
            ended.iter().any(|e| e.starts_with("sleep (pid")),
            "{ended:?} ({})",
            c.how()
        );
        assert!(c.end_rest().is_empty(), "nothing is left");
    }
}
