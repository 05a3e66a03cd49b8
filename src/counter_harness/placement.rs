//! Where tasks run. will-it-scale binds task *i* to core *i* mod (number of cores), or with
//! its `-m` to hardware thread *i* mod (number of hardware threads), taking cores in hwloc's
//! logical order: package by package, die by die, core by core, each sorted by its lowest CPU
//! number; a core is bound as a whole (all its hardware threads). This module reads the same
//! topology from `/sys/devices/system/cpu/cpu*/topology` (`physical_package_id`, `die_id`,
//! `core_cpus_list` or `thread_siblings_list`) and keeps only the CPUs this process may use
//! (`sched_getaffinity`), so a `taskset` or cpuset restriction is respected.
//!
//! Deliberate difference: hwloc's topology leaves out CPUs outside the cgroup's cpuset but, by
//! its documentation, not those outside a `taskset` mask, so will-it-scale under `taskset`
//! binds tasks to CPUs outside it; here they stay inside.
//!
//! As in will-it-scale, whoever creates a task binds itself to the task's CPUs first, so the
//! task is born there (a forked process, or a thread, inherits the mask) and its first pages
//! are touched there, and takes back its own CPUs afterwards ([`Binder`]).

use crate::noise::sysfs::{format_cpu_list, parse_cpu_list, Root};
use nix::sched::CpuSet;
use nix::unistd::Pid;
use serde::Serialize;

/// How tasks are bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pinning {
    /// Not bound: the scheduler places the tasks.
    None,
    /// Task i on core i mod (cores): will-it-scale's default.
    Cores,
    /// Task i on hardware thread i mod (hardware threads): will-it-scale's `-m`.
    HwThreads,
}

/// The CPU set of every task: task i gets `order[i % order.len()]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Placement {
    pub pinned_to: Pinning,
    /// The cores (or hardware threads) in the order tasks take them, each as its CPUs.
    pub order: Vec<Vec<usize>>,
    /// The CPUs this process may use (`sched_getaffinity`).
    pub allowed: Vec<usize>,
    /// Where the topology came from: `sysfs`, or `none` (each allowed CPU taken as a core).
    pub topology: &'static str,
}

/// One online CPU as the topology files describe it.
#[derive(Debug, Clone, PartialEq)]
struct Cpu {
    cpu: usize,
    package: i64,
    die: i64,
    /// The hardware threads of its core (itself included).
    siblings: Vec<usize>,
}

const CPU: &str = "/sys/devices/system/cpu";

impl Placement {
    /// No binding.
    pub fn none() -> Placement {
        Placement {
            pinned_to: Pinning::None,
            order: Vec::new(),
            allowed: allowed_cpus(),
            topology: "none",
        }
    }

    /// The placement of `pinning` on this machine, within the CPUs this process may use.
    pub fn plan(pinning: Pinning) -> Placement {
        if pinning == Pinning::None {
            return Placement::none();
        }
        Placement::from_topology(&Root::system(), &allowed_cpus(), pinning)
    }

    /// The placement from the topology files under `root`, within `allowed`.
    fn from_topology(root: &Root, allowed: &[usize], pinning: Pinning) -> Placement {
        let cpus = read_topology(root, allowed);
        let (cores, topology) = match cpus {
            Some(cpus) if !cpus.is_empty() => (ordered_cores(&cpus, allowed), "sysfs"),
            _ => (allowed.iter().map(|&c| vec![c]).collect(), "none"),
        };
        let order = match pinning {
            Pinning::None => Vec::new(),
            Pinning::Cores => cores,
            Pinning::HwThreads => cores.into_iter().flatten().map(|c| vec![c]).collect(),
        };
        Placement {
            pinned_to: if order.is_empty() {
                Pinning::None
            } else {
                pinning
            },
            order,
            allowed: allowed.to_vec(),
            topology,
        }
    }

    pub fn is_pinned(&self) -> bool {
        !self.order.is_empty()
    }

    /// The CPUs of task `nr`, when tasks are bound.
    pub fn for_task(&self, nr: usize) -> Option<&[usize]> {
        if self.order.is_empty() {
            None
        } else {
            Some(&self.order[nr % self.order.len()])
        }
    }

    /// For the run's first lines: `task i on core i mod 2 (cores in socket order: 0 1)`.
    pub fn describe(&self) -> String {
        let unit = match self.pinned_to {
            Pinning::None => {
                return format!(
                    "tasks not pinned (the scheduler places them on {})",
                    crate::noise::sysfs::cpus_phrase(&self.allowed)
                )
            }
            Pinning::Cores => "core",
            Pinning::HwThreads => "hardware thread",
        };
        let braces = self.order.iter().any(|s| s.len() > 1);
        let mut sets: Vec<String> = self
            .order
            .iter()
            .take(32)
            .map(|s| {
                let list = format_cpu_list(s);
                if braces {
                    format!("{{{list}}}")
                } else {
                    list
                }
            })
            .collect();
        if self.order.len() > 32 {
            sets.push(format!("… ({} in all)", self.order.len()));
        }
        let sorted = if self.topology == "sysfs" {
            "in socket order"
        } else {
            "(no topology: allowed CPUs in order)"
        };
        format!(
            "task i pinned to {unit} i mod {} {sorted}: {}",
            self.order.len(),
            sets.join(" ")
        )
    }
}

/// Every online CPU's package, die and core siblings (hwloc orders by the whole machine and
/// then leaves out what this process may not use); None when an allowed CPU has no topology
/// files.
fn read_topology(root: &Root, allowed: &[usize]) -> Option<Vec<Cpu>> {
    let online = crate::noise::topology::online(root).unwrap_or_else(|| root.cpu_dirs());
    let read = |cpu: usize| -> Option<Cpu> {
        let file = |name: &str| root.read_trimmed(&format!("{CPU}/cpu{cpu}/topology/{name}"));
        let siblings = file("core_cpus_list").or_else(|| file("thread_siblings_list"))?;
        let mut siblings = parse_cpu_list(&siblings);
        if !siblings.contains(&cpu) {
            siblings.push(cpu);
            siblings.sort_unstable();
        }
        Some(Cpu {
            cpu,
            package: file("physical_package_id")?.parse().ok()?,
            // Kernels before 5.2 have no die_id: one die per package.
            die: file("die_id").and_then(|d| d.parse().ok()).unwrap_or(0),
            siblings,
        })
    };
    let cpus: Vec<Cpu> = online.iter().filter_map(|&c| read(c)).collect();
    allowed
        .iter()
        .all(|a| cpus.iter().any(|c| c.cpu == *a))
        .then_some(cpus)
}

/// The cores of `cpus` in hwloc's logical order (by the lowest CPU of their package, then of
/// their die, then their own), each cut to `allowed`; cores with no allowed CPU left out.
fn ordered_cores(cpus: &[Cpu], allowed: &[usize]) -> Vec<Vec<usize>> {
    let lowest_where = |f: &dyn Fn(&Cpu) -> bool| cpus.iter().filter(|c| f(c)).map(|c| c.cpu).min();
    let mut cores: Vec<((usize, usize, usize), Vec<usize>)> = Vec::new();
    let mut seen: Vec<&[usize]> = Vec::new();
    for c in cpus {
        if seen.contains(&c.siblings.as_slice()) {
            continue;
        }
        seen.push(&c.siblings);
        let core: Vec<usize> = c
            .siblings
            .iter()
            .copied()
            .filter(|s| allowed.contains(s))
            .collect();
        if core.is_empty() {
            continue;
        }
        let package = lowest_where(&|o| o.package == c.package).unwrap_or(c.cpu);
        let die = lowest_where(&|o| o.package == c.package && o.die == c.die).unwrap_or(c.cpu);
        cores.push(((package, die, c.siblings[0]), core));
    }
    cores.sort();
    cores.into_iter().map(|(_, core)| core).collect()
}

/// The CPUs this process may run on, in order.
pub fn allowed_cpus() -> Vec<usize> {
    match nix::sched::sched_getaffinity(Pid::from_raw(0)) {
        Ok(set) => (0..CpuSet::count())
            .filter(|c| set.is_set(*c).unwrap_or(false))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Binds the calling thread to `cpus`.
fn bind(cpus: &[usize]) -> std::io::Result<()> {
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c).map_err(std::io::Error::from)?;
    }
    nix::sched::sched_setaffinity(Pid::from_raw(0), &set).map_err(std::io::Error::from)
}

/// The creator's side of a placement: binds the calling thread to a task's CPUs just before it
/// creates that task (which inherits the mask), and gives the thread back its own CPUs when
/// dropped. Does nothing when tasks are not bound.
pub struct Binder<'a> {
    placement: &'a Placement,
    own: Option<CpuSet>,
}

impl<'a> Binder<'a> {
    pub fn new(placement: &'a Placement) -> Binder<'a> {
        let own = if placement.is_pinned() {
            nix::sched::sched_getaffinity(Pid::from_raw(0)).ok()
        } else {
            None
        };
        Binder { placement, own }
    }

    /// Binds the calling thread to task `nr`'s CPUs.
    pub fn before_task(&self, nr: usize) -> anyhow::Result<()> {
        let Some(cpus) = self.placement.for_task(nr) else {
            return Ok(());
        };
        bind(cpus).map_err(|e| {
            anyhow::anyhow!(
                "cannot bind task {nr} to {}: {e}; give --no-pin to run unbound",
                crate::noise::sysfs::cpus_phrase(cpus)
            )
        })
    }
}

impl Drop for Binder<'_> {
    fn drop(&mut self) {
        if let Some(own) = &self.own {
            let _ = nix::sched::sched_setaffinity(Pid::from_raw(0), own);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::sysfs::sample_root;

    /// Topology files for `cpus`: (cpu, package, die, siblings list).
    fn topology(cpus: &[(usize, i64, i64, &str)]) -> (tempfile::TempDir, Root) {
        let mut files = Vec::new();
        for &(cpu, package, die, siblings) in cpus {
            let dir = format!("{CPU}/cpu{cpu}/topology");
            files.push((format!("{dir}/physical_package_id"), format!("{package}\n")));
            files.push((format!("{dir}/die_id"), format!("{die}\n")));
            files.push((
                format!("{dir}/thread_siblings_list"),
                format!("{siblings}\n"),
            ));
        }
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        sample_root(&refs)
    }

    #[test]
    fn this_vm_two_cores_one_thread_each() {
        // This project's VM: cpu0 and cpu1, package 0, core ids 0 and 1, no SMT.
        let (_d, root) = topology(&[(0, 0, 0, "0"), (1, 0, 0, "1")]);
        let p = Placement::from_topology(&root, &[0, 1], Pinning::Cores);
        assert_eq!(p.order, vec![vec![0], vec![1]]);
        assert_eq!(p.for_task(0), Some(&[0][..]));
        assert_eq!(p.for_task(3), Some(&[1][..]));
        assert_eq!(
            p.describe(),
            "task i pinned to core i mod 2 in socket order: 0 1"
        );
        // Under `taskset -c 0`: every task on CPU 0.
        let p = Placement::from_topology(&root, &[0], Pinning::Cores);
        assert_eq!(p.order, vec![vec![0]]);
        assert_eq!(p.for_task(5), Some(&[0][..]));
    }

    #[test]
    fn two_sockets_with_smt_and_interleaved_numbers_go_socket_by_socket() {
        // CPUs numbered alternately across two packages; SMT siblings n and n+4.
        let (_d, root) = topology(&[
            (0, 0, 0, "0,4"),
            (1, 1, 0, "1,5"),
            (2, 0, 0, "2,6"),
            (3, 1, 0, "3,7"),
            (4, 0, 0, "0,4"),
            (5, 1, 0, "1,5"),
            (6, 0, 0, "2,6"),
            (7, 1, 0, "3,7"),
        ]);
        let all: Vec<usize> = (0..8).collect();
        let p = Placement::from_topology(&root, &all, Pinning::Cores);
        assert_eq!(
            p.order,
            vec![vec![0, 4], vec![2, 6], vec![1, 5], vec![3, 7]]
        );
        assert_eq!(
            p.describe(),
            "task i pinned to core i mod 4 in socket order: {0,4} {2,6} {1,5} {3,7}"
        );
        let p = Placement::from_topology(&root, &all, Pinning::HwThreads);
        let flat: Vec<usize> = p.order.iter().map(|s| s[0]).collect();
        assert_eq!(flat, [0, 4, 2, 6, 1, 5, 3, 7]);
        // A restriction to some CPUs keeps the machine's order of what is left (package 0
        // first, though its only allowed CPU is 2), cores cut to it.
        let p = Placement::from_topology(&root, &[1, 2, 5], Pinning::Cores);
        assert_eq!(p.order, vec![vec![2], vec![1, 5]]);
    }

    #[test]
    fn dies_of_one_package_come_in_order_of_their_lowest_cpu() {
        let (_d, root) = topology(&[(0, 0, 1, "0"), (1, 0, 0, "1"), (2, 0, 1, "2")]);
        let p = Placement::from_topology(&root, &[0, 1, 2], Pinning::Cores);
        assert_eq!(p.order, vec![vec![0], vec![2], vec![1]]);
    }

    #[test]
    fn without_topology_files_each_allowed_cpu_is_a_core() {
        let (_d, root) = sample_root(&[]);
        let p = Placement::from_topology(&root, &[0, 3], Pinning::Cores);
        assert_eq!(
            (p.order.clone(), p.topology),
            (vec![vec![0], vec![3]], "none")
        );
        assert!(p.describe().contains("no topology"));
        let none = Placement::none();
        assert!(!none.is_pinned() && none.for_task(0).is_none());
        assert!(none.describe().starts_with("tasks not pinned"));
    }

    #[test]
    fn the_binder_binds_and_gives_back_the_threads_cpus() {
        let own = allowed_cpus();
        let p = Placement::from_topology(&Root::system(), &own, Pinning::Cores);
        std::thread::spawn(move || {
            let b = Binder::new(&p);
            b.before_task(0).unwrap();
            assert_eq!(allowed_cpus(), p.order[0]);
            drop(b);
            assert_eq!(allowed_cpus(), own);
        })
        .join()
        .unwrap();
    }
}
