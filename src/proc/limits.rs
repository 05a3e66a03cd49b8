//! Checks, before anything is forked, that the system lets the requested processes exist at
//! once: RLIMIT_NPROC (`ulimit -u`, counted in threads of this user; applied as the kernel
//! applies it at fork: not to root nor to a process with CAP_SYS_ADMIN or CAP_SYS_RESOURCE, in
//! the initial user namespace), the cgroup's pids.max, kernel.threads-max and kernel.pid_max,
//! and the open-file limits. A request that cannot be met is refused with the
//! limit, its current use and how to raise it. Used by `run`, `aim7` and `scale`.
//!
//! Each task holds at most a few files open, so a task needs only a small constant of the
//! per-process open-file limit. The AIM7 and will-it-scale drivers also need only a constant
//! number whatever the load (tasks share their start and report pipes); the UnixBench runner
//! reads every copy's stdout and stderr, so its driver needs two descriptors per copy on top
//! ([`Load::driver_fds_per_task`]). The system-wide `fs.file-max` must leave room for a few
//! open files per task.

/// Descriptors the driver or one task may hold at once.
const FDS_PER_PROCESS: u64 = 32;
/// Open files per task counted against fs.file-max (inherited pipes are shared, not new).
const FILES_PER_TASK: u64 = 3;

/// A limit that stops the requested load, as one line saying what and how to fix it.
pub type Refusal = String;

/// What a command is about to start.
#[derive(Debug, Clone, Copy)]
pub struct Load<'a> {
    /// The option that sets the number, for messages (`--copies`, `--load`, `--tasks`).
    pub knob: &'a str,
    /// The (largest) number given to that option.
    pub asked: u32,
    /// Processes and threads that will exist at once at that number (tasks, their helpers,
    /// a thread-mode host).
    pub processes: u64,
    /// Descriptors the driver holds open per task, on top of its constant few.
    pub driver_fds_per_task: u64,
}

/// CAP_SYS_ADMIN and CAP_SYS_RESOURCE, the capabilities that exempt a process from
/// RLIMIT_NPROC at fork (`copy_process` in kernel/fork.c).
const CAP_SYS_ADMIN: u32 = 21;
const CAP_SYS_RESOURCE: u32 = 24;

/// Whether the kernel lets this process fork beyond RLIMIT_NPROC: its real user is root, or
/// it holds CAP_SYS_ADMIN or CAP_SYS_RESOURCE, in the initial user namespace (where the kernel
/// checks them; inside another namespace neither counts). `status` is /proc/self/status,
/// `uid_map` /proc/self/uid_map.
pub fn exempt_from_nproc(status: &str, uid_map: &str) -> bool {
    let initial_namespace =
        uid_map.split_whitespace().collect::<Vec<_>>().as_slice() == ["0", "0", "4294967295"];
    if !initial_namespace {
        return false;
    }
    let field = |key: &str| status.lines().find_map(|l| l.strip_prefix(key));
    let real_uid = field("Uid:").and_then(|v| v.split_whitespace().next());
    let caps = field("CapEff:").and_then(|v| u64::from_str_radix(v.trim(), 16).ok());
    let has = |cap: u32| caps.is_some_and(|c| c & (1 << cap) != 0);
    real_uid == Some("0") || has(CAP_SYS_ADMIN) || has(CAP_SYS_RESOURCE)
}

/// [`exempt_from_nproc`] for this process.
fn this_process_exempt_from_nproc() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let uid_map = std::fs::read_to_string("/proc/self/uid_map").unwrap_or_default();
    exempt_from_nproc(&status, &uid_map)
}

fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Threads (the unit RLIMIT_NPROC counts) owned by real user `uid`.
fn threads_of_user(uid: u32) -> u64 {
    let mut total = 0;
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(status) = std::fs::read_to_string(e.path().join("status")) else {
            continue;
        };
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| {
                    v.split_whitespace()
                        .next()
                        .and_then(|x| x.parse::<u64>().ok())
                })
        };
        if field("Uid:") == Some(u64::from(uid)) {
            total += field("Threads:").unwrap_or(1);
        }
    }
    total
}

/// The pids.max and pids.current of this process's cgroup (v2 or the v1 pids controller).
fn cgroup_pids() -> Option<(u64, u64, String)> {
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let dir = if controllers.is_empty() {
            format!("/sys/fs/cgroup{path}")
        } else if controllers.split(',').any(|c| c == "pids") {
            format!("/sys/fs/cgroup/pids{path}")
        } else {
            continue;
        };
        let max = std::fs::read_to_string(format!("{dir}/pids.max")).ok()?;
        let max: u64 = match max.trim() {
            "max" => continue,
            v => v.parse().ok()?,
        };
        let current = read_u64(&format!("{dir}/pids.current")).unwrap_or(0);
        return Some((max, current, format!("{dir}/pids.max")));
    }
    None
}

/// Scheduling entities in the whole system (the total of /proc/loadavg's 4th field).
fn system_threads() -> Option<u64> {
    let l = std::fs::read_to_string("/proc/loadavg").ok()?;
    l.split_whitespace().nth(3)?.split('/').nth(1)?.parse().ok()
}

/// Checks that `tasks` more processes (each able to create `extra` more at once) can exist.
/// `knob` names the option that sets the number (`--load`, `--copies`, `--tasks`) for the
/// message.
pub fn check(tasks: u32, extra: u32, knob: &str) -> Result<(), Refusal> {
    check_load(&Load {
        knob,
        asked: tasks,
        processes: u64::from(tasks) * u64::from(1 + extra),
        driver_fds_per_task: 0,
    })
}

/// Checks that the processes and open files of `load` fit every limit.
pub fn check_load(l: &Load<'_>) -> Result<(), Refusal> {
    let (knob, tasks, need) = (l.knob, l.asked, l.processes);
    let load = format!("{knob} {tasks} needs {need} processes");

    let nproc = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NPROC);
    if let Ok((soft, _hard)) = nproc {
        if soft != libc::RLIM_INFINITY && !this_process_exempt_from_nproc() {
            let used = threads_of_user(
                // SAFETY: getuid has no preconditions.
                unsafe { libc::getuid() },
            );
            if used + need > soft {
                return Err(format!(
                    "{load} but the process limit (RLIMIT_NPROC, `ulimit -u`) is {soft} with {used} \
                     in use by this user; raise it (e.g. `ulimit -u {}`, or nproc in \
                     /etc/security/limits.conf) or lower {knob}",
                    used + need + 64
                ));
            }
        }
    }
    if let Some((max, current, file)) = cgroup_pids() {
        if current + need > max {
            return Err(format!(
                "{load} but this cgroup allows {max} ({current} in use, {file}); raise pids.max \
                 or lower {knob}"
            ));
        }
    }
    let running = system_threads().unwrap_or(0);
    for (name, limit) in [
        (
            "kernel.threads-max",
            read_u64("/proc/sys/kernel/threads-max"),
        ),
        ("kernel.pid_max", read_u64("/proc/sys/kernel/pid_max")),
    ] {
        if let Some(limit) = limit {
            if running + need > limit {
                return Err(format!(
                    "{load} but {name} is {limit} with {running} in use; raise it with \
                     `sysctl -w {name}={}` or lower {knob}",
                    (running + need) * 2
                ));
            }
        }
    }
    let nofile = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE);
    if let Ok((soft, _)) = nofile {
        let driver = FDS_PER_PROCESS + u64::from(tasks) * l.driver_fds_per_task;
        if soft < driver {
            let why = if l.driver_fds_per_task > 0 {
                format!(
                    "{knob} {tasks} needs {driver} open files in patchbench ({} per copy it \
                     reads and {FDS_PER_PROCESS} of its own)",
                    l.driver_fds_per_task
                )
            } else {
                format!("patchbench needs {FDS_PER_PROCESS} open files per process")
            };
            return Err(format!(
                "{why} but the open-file limit (RLIMIT_NOFILE, `ulimit -n`) is {soft}; raise it \
                 (e.g. `ulimit -n {}`){}",
                (driver * 2).max(1024),
                if l.driver_fds_per_task > 0 {
                    format!(" or lower {knob}")
                } else {
                    String::new()
                }
            ));
        }
    }
    if let Ok(nr) = std::fs::read_to_string("/proc/sys/fs/file-nr") {
        let v: Vec<u64> = nr
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        if let [allocated, _, max] = v[..] {
            let want = u64::from(tasks) * FILES_PER_TASK;
            if allocated + want > max {
                return Err(format!(
                    "{knob} {tasks} needs about {want} open files but fs.file-max is {max} with \
                     {allocated} open; raise it with `sysctl -w fs.file-max={}` or lower {knob}",
                    (allocated + want) * 2
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_load_passes_here() {
        assert_eq!(check(2, 1, "--load"), Ok(()));
    }

    #[test]
    fn root_and_the_two_capabilities_are_exempt_in_the_initial_namespace_only() {
        let init = "         0          0 4294967295\n";
        let userns = "         0       1000          1\n";
        let status = |uid: &str, caps: &str| {
            format!("Name:\tx\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nCapEff:\t{caps}\n")
        };
        assert!(exempt_from_nproc(&status("0", "0000000000000000"), init));
        assert!(!exempt_from_nproc(
            &status("1000", "0000000000000000"),
            init
        ));
        assert!(
            exempt_from_nproc(&status("1000", "0000000000200000"), init),
            "CAP_SYS_ADMIN"
        );
        assert!(
            exempt_from_nproc(&status("1000", "0000000001000000"), init),
            "CAP_SYS_RESOURCE"
        );
        assert!(
            !exempt_from_nproc(&status("1000", "0000000000000400"), init),
            "CAP_NET_BIND_SERVICE"
        );
        assert!(
            !exempt_from_nproc(&status("0", "000001ffffffffff"), userns),
            "root of a user namespace"
        );
    }

    #[test]
    fn this_user_owns_at_least_this_thread() {
        assert!(
            threads_of_user(
                // SAFETY: getuid has no preconditions.
                unsafe { libc::getuid() }
            ) >= 1
        );
        assert!(system_threads().unwrap_or(1) >= 1);
    }
}
