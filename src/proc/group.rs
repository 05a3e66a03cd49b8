//! A task group: the children one run started, all in one process group, so that one
//! `kill(-pgid, SIGKILL)` reaches them and whatever they started. It reaps them, remembers how
//! each ended, and kills and reaps every one still there when it is dropped, so no error path
//! of any harness leaves a process behind.
//!
//! The group id is only signalled while a member is unreaped: an unreaped child (even a
//! zombie) keeps its process group id from being reused, so the signal cannot reach a
//! stranger. For as long, the group is registered with `crate::emergency`, whose exit path
//! (a failed allocation, a panic) kills and reaps it where no destructor runs.

use std::collections::HashMap;

/// The children of one run.
#[derive(Debug, Default)]
pub struct TaskGroup {
    /// 0 until the first member joins; then the first member's pid.
    pgid: libc::pid_t,
    pids: Vec<libc::pid_t>,
    /// Unreaped members: pid → member index.
    alive: HashMap<libc::pid_t, usize>,
    /// Raw wait status of each reaped member.
    status: Vec<Option<i32>>,
}

impl TaskGroup {
    pub fn new() -> TaskGroup {
        TaskGroup::default()
    }

    /// A group with room for `members` allocated now, so that adding them (between forks)
    /// allocates nothing.
    pub fn with_capacity(members: usize) -> TaskGroup {
        TaskGroup {
            pgid: 0,
            pids: Vec::with_capacity(members),
            alive: HashMap::with_capacity(members),
            status: Vec::with_capacity(members),
        }
    }

    /// The process group a new member must join: 0 for the first (it starts the group).
    pub fn pgid(&self) -> libc::pid_t {
        self.pgid
    }

    /// Registers a started child and moves it into the group (the child does the same, so it
    /// holds whichever runs first). Returns its member index.
    pub fn add(&mut self, pid: libc::pid_t) -> usize {
        if self.pgid == 0 {
            self.pgid = pid;
        }
        // SAFETY: moving our own child into our task group; a failure (the child has already
        // exec'd after joining, or has died) leaves nothing to do.
        unsafe { libc::setpgid(pid, self.pgid) };
        let i = self.pids.len();
        self.pids.push(pid);
        if self.alive.is_empty() {
            // Killed and reaped by the exit path if this process must stop at once.
            crate::emergency::register_group(self.pgid);
        }
        self.alive.insert(pid, i);
        self.status.push(None);
        i
    }

    /// Members started so far.
    pub fn len(&self) -> usize {
        self.pids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pids.is_empty()
    }

    /// Members not yet reaped.
    pub fn alive(&self) -> usize {
        self.alive.len()
    }

    pub fn pid(&self, i: usize) -> libc::pid_t {
        self.pids[i]
    }

    /// How member `i` ended (raw wait status), once reaped.
    pub fn status(&self, i: usize) -> Option<i32> {
        self.status[i]
    }

    fn reaped(&mut self, pid: libc::pid_t, status: i32) -> Option<(usize, i32)> {
        let i = self.forget(pid)?;
        self.status[i] = Some(status);
        Some((i, status))
    }

    /// Drops `pid` from the unreaped members; with none left, the group id may be reused by
    /// anyone, so the exit path forgets it too.
    fn forget(&mut self, pid: libc::pid_t) -> Option<usize> {
        let i = self.alive.remove(&pid)?;
        if self.alive.is_empty() {
            crate::emergency::unregister_group(self.pgid);
        }
        Some(i)
    }

    /// Reaps one member that has ended, without blocking.
    pub fn reap_ended(&mut self) -> Option<(usize, i32)> {
        if self.pgid == 0 || self.alive.is_empty() {
            return None;
        }
        loop {
            let mut status = 0;
            // SAFETY: non-blocking reap of our children in our task group.
            let pid = unsafe { libc::waitpid(-self.pgid, &mut status, libc::WNOHANG) };
            if pid > 0 {
                match self.reaped(pid, status) {
                    Some(r) => return Some(r),
                    None => continue,
                }
            }
            if pid < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return None;
        }
    }

    /// Waits for member `i` to end and reaps it; its raw wait status.
    pub fn reap(&mut self, i: usize) -> Option<i32> {
        let pid = self.pids[i];
        if self.alive.contains_key(&pid) {
            let mut status = 0;
            loop {
                // SAFETY: blocking reap of our own child.
                let r = unsafe { libc::waitpid(pid, &mut status, 0) };
                if r == pid {
                    self.reaped(pid, status);
                    break;
                }
                if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                // Not our child any more (should not happen): forget it.
                self.forget(pid);
                break;
            }
        }
        self.status[i]
    }

    /// SIGKILL to the whole group and to every unreaped member.
    pub fn kill_all(&self) {
        if self.alive.is_empty() {
            return;
        }
        // SAFETY: an unreaped member holds the group id, so only our group is signalled.
        unsafe { libc::kill(-self.pgid, libc::SIGKILL) };
        for &pid in self.alive.keys() {
            // SAFETY: signalling our own unreaped child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }

    /// Waits for every unreaped member.
    pub fn reap_all(&mut self) {
        for i in 0..self.pids.len() {
            self.reap(i);
        }
    }

    /// Kills and reaps every member still there.
    pub fn stop(&mut self) {
        self.kill_all();
        self.reap_all();
    }

    /// After the members have finished their work: reaps them, the group leader last, and
    /// kills whatever they left running in the group (stragglers of a shell pipeline) while
    /// the unreaped leader still holds the group id.
    pub fn sweep(&mut self) {
        for i in 1..self.pids.len() {
            self.reap(i);
        }
        let Some(&leader) = self.pids.first() else {
            return;
        };
        if self.alive.contains_key(&leader) {
            let pid = nix::unistd::Pid::from_raw(leader);
            let flags = nix::sys::wait::WaitPidFlag::WEXITED | nix::sys::wait::WaitPidFlag::WNOWAIT;
            let _ = nix::sys::wait::waitid(nix::sys::wait::Id::Pid(pid), flags);
            // SAFETY: the unreaped leader holds the group id; only stragglers are still in it.
            unsafe { libc::kill(-self.pgid, libc::SIGKILL) };
        }
        self.reap(0);
    }
}

impl Drop for TaskGroup {
    fn drop(&mut self) {
        self.stop();
    }
}
