//! A simulated machine for the property test of [`super::in_window_ticks`]: processes fork,
//! use CPU (at most one tick per CPU per step), end, are reaped by their parent or orphaned
//! to the nearest child subreaper or init, auto-reaped when their parent ignores SIGCHLD, and
//! pids are reused cyclically, as the kernel hands them out. It keeps, beside what `/proc`
//! would show, the truth: each process's own ticks inside the window and those of the
//! children it reaped inside the window.

use crate::noise::cpu_snapshot::{CpuSnapshot, CpuTimes, ProcTimes};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Alive,
    Zombie,
    Reaped,
}

#[derive(Debug, Clone)]
struct Proc {
    pid: i32,
    /// Index of the parent in the table.
    parent: usize,
    start: u64,
    own: u64,
    children: u64,
    /// Truth: own ticks after the first snapshot, and the in-window ticks of reaped children.
    own_in: u64,
    children_in: u64,
    state: State,
    subreaper: bool,
    ignores_sigchld: bool,
}

/// One simulated machine.
struct Machine {
    procs: Vec<Proc>,
    cpus: usize,
    busy: u64,
    idle: u64,
    now: u64,
    max_pid: i32,
    last_pid: i32,
    in_window: bool,
}

impl Machine {
    fn new(cpus: usize, max_pid: i32) -> Machine {
        let init = Proc {
            pid: 1,
            parent: 0,
            start: 0,
            own: 0,
            children: 0,
            own_in: 0,
            children_in: 0,
            state: State::Alive,
            subreaper: true,
            ignores_sigchld: false,
        };
        Machine {
            procs: vec![init],
            cpus,
            busy: 0,
            idle: 0,
            now: 1,
            max_pid,
            last_pid: 1,
            in_window: false,
        }
    }

    fn visible(&self, i: usize) -> bool {
        self.procs[i].state != State::Reaped
    }

    /// The next free pid after the last one handed out, wrapping, as the kernel does.
    fn next_pid(&mut self) -> Option<i32> {
        for step in 1..self.max_pid {
            let pid = 2 + (self.last_pid - 2 + step).rem_euclid(self.max_pid - 1);
            let taken = self
                .procs
                .iter()
                .any(|p| p.pid == pid && p.state != State::Reaped);
            if !taken {
                self.last_pid = pid;
                return Some(pid);
            }
        }
        None
    }

    fn alive(&self) -> Vec<usize> {
        (0..self.procs.len())
            .filter(|&i| self.procs[i].state == State::Alive)
            .collect()
    }

    fn fork(&mut self, parent: usize, rng: &mut ChaCha8Rng) {
        let Some(pid) = self.next_pid() else { return };
        self.procs.push(Proc {
            pid,
            parent,
            start: self.now,
            own: 0,
            children: 0,
            own_in: 0,
            children_in: 0,
            state: State::Alive,
            subreaper: rng.random_bool(0.1),
            ignores_sigchld: rng.random_bool(0.1),
        });
    }

    /// The nearest live subreaper above `i`, else init.
    fn new_parent(&self, i: usize) -> usize {
        let mut p = self.procs[i].parent;
        for _ in 0..self.procs.len() {
            if p == 0 || (self.procs[p].state == State::Alive && self.procs[p].subreaper) {
                return p;
            }
            p = self.procs[p].parent;
        }
        0
    }

    fn reap(&mut self, child: usize) {
        let parent = self.procs[child].parent;
        if !self.procs[parent].ignores_sigchld {
            let (own, children) = (self.procs[child].own, self.procs[child].children);
            let (own_in, children_in) = (self.procs[child].own_in, self.procs[child].children_in);
            let p = &mut self.procs[parent];
            p.children += own + children;
            p.children_in += own_in + children_in;
        }
        self.procs[child].state = State::Reaped;
    }

    fn exit(&mut self, i: usize) {
        if i == 0 {
            return;
        }
        self.procs[i].state = State::Zombie;
        let heir = self.new_parent(i);
        for c in 0..self.procs.len() {
            if self.procs[c].parent == i && self.visible(c) && c != i {
                self.procs[c].parent = heir;
            }
        }
        if self.procs[self.procs[i].parent].ignores_sigchld {
            self.reap(i);
        }
    }

    /// One step: a few events, then every CPU runs one live process for a tick (or idles).
    fn step(&mut self, rng: &mut ChaCha8Rng) {
        for _ in 0..rng.random_range(0..4) {
            let alive = self.alive();
            match rng.random_range(0..10) {
                0..=3 => {
                    let p = alive[rng.random_range(0..alive.len())];
                    self.fork(p, rng);
                }
                4..=5 => {
                    let p = alive[rng.random_range(0..alive.len())];
                    self.exit(p);
                }
                _ => {
                    let zombies: Vec<usize> = (0..self.procs.len())
                        .filter(|&z| {
                            self.procs[z].state == State::Zombie
                                && self.procs[self.procs[z].parent].state == State::Alive
                        })
                        .collect();
                    if !zombies.is_empty() {
                        let z = zombies[rng.random_range(0..zombies.len())];
                        self.reap(z);
                    }
                }
            }
        }
        // init reaps what it inherits.
        for z in 0..self.procs.len() {
            if self.procs[z].state == State::Zombie
                && self.procs[z].parent == 0
                && rng.random_bool(0.5)
            {
                self.reap(z);
            }
        }
        let mut alive = self.alive();
        let mut used = 0;
        for _ in 0..self.cpus {
            if alive.is_empty() || rng.random_bool(0.2) {
                continue;
            }
            let i = alive.swap_remove(rng.random_range(0..alive.len()));
            let p = &mut self.procs[i];
            p.own += 1;
            if self.in_window {
                p.own_in += 1;
            }
            used += 1;
        }
        self.busy += used;
        self.idle += self.cpus as u64 - used;
        self.now += 1;
    }

    fn snapshot(&self) -> CpuSnapshot {
        let procs = (0..self.procs.len())
            .filter(|&i| self.visible(i))
            .map(|i| {
                let p = &self.procs[i];
                let ppid = if i == 0 { 0 } else { self.procs[p.parent].pid };
                let t = ProcTimes {
                    pid: p.pid,
                    comm: format!("p{i}"),
                    ppid,
                    start: p.start,
                    own: p.own,
                    children: p.children,
                    kernel_thread: false,
                    zombie: p.state == State::Zombie,
                };
                (p.pid, t)
            })
            .collect();
        CpuSnapshot {
            times: CpuTimes {
                busy: self.busy,
                idle: self.idle,
                steal: 0,
            },
            cpus: self.cpus,
            procs,
            throttle: None,
            ticks_per_sec: 100,
        }
    }

    /// Truth by pid for every visible process: its ticks inside the window.
    fn truth(&self) -> std::collections::BTreeMap<i32, u64> {
        (0..self.procs.len())
            .filter(|&i| self.visible(i))
            .map(|i| {
                (
                    self.procs[i].pid,
                    self.procs[i].own_in + self.procs[i].children_in,
                )
            })
            .collect()
    }
}

/// What one simulated window gave: the machine's window, the figures and the truth.
pub(super) struct Window {
    pub cpus: usize,
    pub steps: u64,
    pub before: CpuSnapshot,
    pub after: CpuSnapshot,
    pub truth: std::collections::BTreeMap<i32, u64>,
    /// Whether any process of the first snapshot was gone by the second.
    pub any_gone: bool,
}

pub(super) fn simulate(seed: u64, cpus: usize, max_pid: i32, lead: u64, window: u64) -> Window {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut m = Machine::new(cpus, max_pid);
    for _ in 0..lead {
        m.step(&mut rng);
    }
    let before = m.snapshot();
    m.in_window = true;
    for _ in 0..window {
        m.step(&mut rng);
    }
    let after = m.snapshot();
    let any_gone = before
        .procs
        .iter()
        .any(|(pid, b)| after.procs.get(pid).is_none_or(|a| a.start != b.start));
    Window {
        cpus,
        steps: window,
        truth: m.truth(),
        before,
        after,
        any_gone,
    }
}
