//! How `patchbench scale` runs its tasks, read from the kernel while they run: pinned by
//! default (each task's `Cpus_allowed_list` is its core's CPUs, in the order the JSON record
//! gives, inside a `taskset` restriction), unpinned with `--no-pin`; ASLR off by default (the
//! tasks' personality has ADDR_NO_RANDOMIZE and their layout is the same in two runs), kept
//! with `--aslr`; the idle share over the whole run and over the measured window both
//! recorded; and a driver that sleeps between samples. Each run is stopped by SIGINT once it
//! has been looked at, so nothing here waits on the machine's speed.

mod common;

use common::{children, read_json, std_patchbench};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// What the kernel says about one running task.
#[derive(Debug, Clone, PartialEq)]
struct Task {
    cpus: String,
    personality: String,
    /// The address ranges of the program's first mapping and of the stack.
    layout: (String, String),
}

fn pids_in(path: &str) -> Vec<i32> {
    let mut v: Vec<i32> = match std::fs::read_dir(path) {
        Ok(rd) => rd
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse().ok())
            .collect(),
        Err(_) => Vec::new(),
    };
    v.sort_unstable();
    v
}

/// The (process, thread) ids of the `n` tasks of a run, in creation order, once all exist.
fn tasks_of(child: &Child, mode: &str, n: usize) -> Vec<(i32, i32)> {
    let driver = child.id();
    let mut found = Vec::new();
    common::wait_until(Duration::from_secs(60), "the tasks start", || {
        found = match mode {
            "process" => children(driver).into_iter().map(|p| (p, p)).collect(),
            _ => match children(driver).first() {
                // The host's own thread first, then one thread per task.
                Some(&host) => pids_in(&format!("/proc/{host}/task"))
                    .into_iter()
                    .skip(1)
                    .map(|t| (host, t))
                    .collect(),
                None => Vec::new(),
            },
        };
        found.len() >= n
    });
    found
}

fn status_field(pid: i32, tid: i32, key: &str) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .unwrap()
        .trim()
        .to_string()
}

fn look_at(pid: i32, tid: i32) -> Task {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    let range = |l: &str| l.split_whitespace().next().unwrap().to_string();
    Task {
        cpus: status_field(pid, tid, "Cpus_allowed_list:"),
        personality: std::fs::read_to_string(format!("/proc/{pid}/personality"))
            .unwrap()
            .trim()
            .to_string(),
        layout: (
            range(maps.lines().next().unwrap()),
            range(maps.lines().find(|l| l.ends_with("[stack]")).unwrap()),
        ),
    }
}

/// Starts getppid1 at `n` tasks for a minute of 0.1 s samples with `extra` arguments, in a
/// private directory `dir` (and `cpus` as the allowed set, as `taskset` would).
fn start(mode: &str, n: usize, extra: &[&str], cpus: Option<&[usize]>, dir: &Path) -> Child {
    start_as(&["scale", "getppid1"], mode, n, extra, cpus, dir)
}

/// [`start`] for any harness command: `what` is the command and its test or model.
fn start_as(
    what: &[&str],
    mode: &str,
    n: usize,
    extra: &[&str],
    cpus: Option<&[usize]>,
    dir: &Path,
) -> Child {
    let mut cmd = std_patchbench();
    cmd.args(what)
        .args(["--mode", mode])
        .args([
            "--tasks",
            &n.to_string(),
            "--duration",
            "60",
            "--warmup",
            "0",
        ])
        .args(["--sample-interval", "0.1", "--no-store", "--dir"])
        .arg(dir)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(cpus) = cpus {
        restrict(&mut cmd, cpus.to_vec());
    }
    cmd.spawn().unwrap()
}

/// Runs getppid1 as [`start`] does, looks at every task, stops the run with SIGINT and
/// returns the tasks and the run's JSON record.
fn observe(
    mode: &str,
    n: usize,
    extra: &[&str],
    cpus: Option<&[usize]>,
) -> (Vec<Task>, serde_json::Value) {
    observe_as(&["scale", "getppid1"], mode, n, extra, cpus)
}

/// [`observe`] for any harness command.
fn observe_as(
    what: &[&str],
    mode: &str,
    n: usize,
    extra: &[&str],
    cpus: Option<&[usize]>,
) -> (Vec<Task>, serde_json::Value) {
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("r.json");
    let json_arg = json.to_str().unwrap();
    let args: Vec<&str> = ["--json", json_arg].iter().chain(extra).copied().collect();
    let mut child = start_as(what, mode, n, &args, cpus, d.path());
    let tasks: Vec<Task> = tasks_of(&child, mode, n)
        .into_iter()
        .map(|(p, t)| look_at(p, t))
        .collect();
    common::signal(&child, libc::SIGINT);
    let status = common::wait_with_timeout(&mut child, Duration::from_secs(30));
    assert_eq!(status.code(), Some(130));
    (tasks, read_json(&json))
}

/// Starts `cmd` allowed only on `cpus` (what `taskset -c` does).
fn restrict(cmd: &mut Command, cpus: Vec<usize>) {
    // SAFETY: only sched_setaffinity between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let mut set = nix::sched::CpuSet::new();
            for &c in &cpus {
                set.set(c)?;
            }
            nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)?;
            Ok(())
        });
    }
}

fn cpu_list(v: &serde_json::Value) -> Vec<usize> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap() as usize)
        .collect()
}

/// `0-1,4` for the kernel's list form.
fn list_form(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// The CPUs of `cpu`'s core (its SMT siblings), within `allowed`.
fn core_of(cpu: usize, allowed: &[usize]) -> Vec<usize> {
    let path = format!("/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list");
    let Ok(text) = std::fs::read_to_string(path) else {
        return vec![cpu];
    };
    let mut out = Vec::new();
    for item in text.trim().split(',') {
        let (a, b) = item.split_once('-').unwrap_or((item, item));
        out.extend(a.parse::<usize>().unwrap()..=b.parse::<usize>().unwrap());
    }
    out.retain(|c| allowed.contains(c));
    out
}

fn allowed_here() -> Vec<usize> {
    let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
    (0..nix::sched::CpuSet::count())
        .filter(|&c| set.is_set(c).unwrap())
        .collect()
}

/// Pinned by default, in both modes: task i's CPUs are `order[i % len]` of the record, each
/// entry is one whole core (one CPU where there is no SMT), the cores are distinct and cover
/// every allowed CPU.
#[test]
fn tasks_are_pinned_core_by_core_in_the_recorded_order() {
    let allowed = allowed_here();
    for mode in ["process", "thread"] {
        let n = 2 * allowed.len().min(2);
        let (tasks, doc) = observe(mode, n, &[], None);
        let placement = &doc["config"]["placement"];
        assert_eq!(placement["pinned_to"], "cores", "{placement}");
        assert_eq!(doc["config"]["pin"], true);
        assert_eq!(cpu_list(&placement["allowed"]), allowed);
        let order: Vec<Vec<usize>> = placement["order"]
            .as_array()
            .unwrap()
            .iter()
            .map(cpu_list)
            .collect();
        let mut covered: Vec<usize> = order.iter().flatten().copied().collect();
        covered.sort_unstable();
        assert_eq!(covered, allowed, "every allowed CPU in exactly one core");
        for core in &order {
            assert_eq!(core, &core_of(core[0], &allowed), "a whole core");
        }
        for (i, t) in tasks.iter().enumerate() {
            assert_eq!(
                t.cpus,
                list_form(&order[i % order.len()]),
                "{mode} task {i}"
            );
        }
    }
}

#[test]
fn under_taskset_c_0_every_task_runs_on_cpu_0() {
    let (tasks, doc) = observe("process", 3, &[], Some(&[0]));
    assert_eq!(
        doc["config"]["placement"]["order"],
        serde_json::json!([[0]])
    );
    assert!(tasks.iter().all(|t| t.cpus == "0"), "{tasks:?}");
}

#[test]
fn no_pin_leaves_every_task_on_every_allowed_cpu() {
    let allowed = list_form(&allowed_here());
    let (tasks, doc) = observe("thread", 2, &["--no-pin"], None);
    assert_eq!(doc["config"]["placement"]["pinned_to"], "none");
    assert_eq!(doc["config"]["pin"], false);
    assert!(tasks.iter().all(|t| t.cpus == allowed), "{tasks:?}");
}

#[test]
fn smt_binds_one_hardware_thread_each_and_conflicts_with_no_pin() {
    let (tasks, doc) = observe("process", 2, &["--smt"], None);
    assert_eq!(doc["config"]["placement"]["pinned_to"], "hw-threads");
    assert!(
        tasks.iter().all(|t| !t.cpus.contains([',', '-'])),
        "{tasks:?}"
    );
    let out = common::patchbench()
        .args(["scale", "getppid1", "--smt", "--no-pin", "--no-store"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Checks that this test process has a randomised layout (the kernel randomises and no
/// `setarch -R` above us set ADDR_NO_RANDOMIZE): the ASLR tests need one, and fail, saying
/// what to change, where it is not so.
fn require_randomised_here() {
    let system = std::fs::read_to_string("/proc/sys/kernel/randomize_va_space").unwrap();
    assert_ne!(
        system.trim(),
        "0",
        "the ASLR tests need the kernel to randomise layouts: kernel.randomize_va_space is 0 \
         here; enable it with `sysctl kernel.randomize_va_space=2` (Debian's default)"
    );
    let own = std::fs::read_to_string("/proc/self/personality").unwrap();
    let own = u32::from_str_radix(own.trim(), 16).unwrap();
    assert_eq!(
        own & 0x0004_0000,
        0,
        "the ASLR tests need a randomised layout, but they run with ADDR_NO_RANDOMIZE \
         (personality {own:08x}): run them without `setarch -R`"
    );
}

/// Whether the kernel lets a process set ADDR_NO_RANDOMIZE (as `setarch -R` does).
fn kernel_takes_no_randomize() -> bool {
    let out = std::process::Command::new("setarch")
        .args(["-R", "cat", "/proc/self/personality"])
        .output()
        .unwrap_or_else(|e| panic!("this test needs `setarch` ({e}): install util-linux"));
    out.status.success()
        && u32::from_str_radix(String::from_utf8_lossy(&out.stdout).trim(), 16)
            .is_ok_and(|p| p & 0x0004_0000 != 0)
}

/// ASLR off by default: the tasks carry ADDR_NO_RANDOMIZE and get the same layout in two
/// runs; with --aslr the layout differs (unless the kernel has randomisation off anyway). A
/// kernel that refuses the personality leaves the run randomised, saying why.
#[test]
fn aslr_is_off_by_default_and_kept_with_aslr() {
    require_randomised_here();
    let (a, doc) = observe("process", 1, &[], None);
    let aslr = &doc["config"]["aslr"];
    if aslr["randomised"] == true {
        // Right only where the kernel refuses the personality (checked here on our own).
        assert!(
            !kernel_takes_no_randomize(),
            "the run stayed randomised, but `setarch -R` can turn randomisation off: {aslr}"
        );
        assert!(
            aslr["how"]
                .as_str()
                .unwrap()
                .contains("could not be turned off"),
            "{aslr}"
        );
        return;
    }
    let (b, _) = observe("process", 1, &[], None);
    assert_eq!(a[0].personality, "00040000");
    assert_eq!(a[0].layout, b[0].layout, "same layout in two runs");
    let (c, doc) = observe("process", 1, &["--aslr"], None);
    let (d, _) = observe("process", 1, &["--aslr"], None);
    assert_eq!(doc["config"]["aslr"]["randomised"], true);
    assert!(doc["config"]["aslr"]["how"]
        .as_str()
        .unwrap()
        .contains("--aslr"));
    assert_eq!(c[0].personality, "00000000");
    assert_ne!(c[0].layout, d[0].layout, "randomised layouts");
}

/// Every point has the idle share over its whole run (the CSV's, as runtest.py's) and over
/// the measured window, both percentages.
#[test]
fn idle_share_of_the_whole_run_and_of_the_measured_window() {
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("r.json");
    common::patchbench()
        .args(["scale", "getppid1", "--tasks", "1", "--mode", "both"])
        .args(common::SHORT)
        .args(["--no-store", "--json"])
        .arg(&json)
        .arg("--dir")
        .arg(d.path())
        .assert()
        .success();
    let doc = read_json(&json);
    for p in doc["will_it_scale"]["points"].as_array().unwrap() {
        for key in ["idle_percent", "measured_idle_percent"] {
            let v = p[key].as_f64().unwrap_or_else(|| panic!("{key} in {p}"));
            assert!((0.0..=100.0).contains(&v), "{key} = {v}");
        }
    }
}

/// Voluntary context switches of a process's main thread (each time it blocked).
fn sleeps(pid: u32) -> u64 {
    status_field(pid as i32, pid as i32, "voluntary_ctxt_switches:")
        .parse()
        .unwrap()
}

/// The driver blocks about once per sample (one poll of its signal pipe), not every few
/// milliseconds: over a stretch of 0.1 s samples it blocks at most twice per sample due.
/// (A slow or loaded machine takes fewer samples, never more.)
#[test]
fn the_driver_sleeps_between_samples() {
    let d = tempfile::tempdir().unwrap();
    let mut child = start("process", 2, &[], None, d.path());
    tasks_of(&child, "process", 2);
    std::thread::sleep(Duration::from_millis(300));
    let (before, t0) = (sleeps(child.id()), std::time::Instant::now());
    std::thread::sleep(Duration::from_secs(1));
    let (after, t1) = (sleeps(child.id()), std::time::Instant::now());
    common::signal(&child, libc::SIGINT);
    common::wait_with_timeout(&mut child, Duration::from_secs(30));
    let due = ((t1 - t0).as_secs_f64() / 0.1).ceil() as u64 + 1;
    assert!(
        after - before <= 2 * due,
        "{} sleeps in {:?} ({due} samples due)",
        after - before,
        t1 - t0
    );
    assert!(Path::new(d.path()).read_dir().unwrap().next().is_none());
}

/// `model` takes the same options with the same defaults: its threads are pinned core by
/// core and have ADDR_NO_RANDOMIZE (unless the kernel refused it); `--no-pin` and `--aslr`
/// undo both.
#[test]
fn model_tasks_are_pinned_with_aslr_off_by_default_as_in_scale() {
    require_randomised_here();
    let setbit = ["model", "model-setbit", "--variants", "always"];
    let (tasks, doc) = observe_as(&setbit, "thread", 2, &[], None);
    let placement = &doc["config"]["placement"];
    assert_eq!(placement["pinned_to"], "cores", "{placement}");
    let order: Vec<String> = placement["order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| list_form(&cpu_list(c)))
        .collect();
    for (i, t) in tasks.iter().enumerate() {
        assert_eq!(t.cpus, order[i % order.len()], "model task {i}");
    }
    if doc["config"]["aslr"]["randomised"] == false {
        assert!(
            tasks.iter().all(|t| t.personality == "00040000"),
            "{tasks:?}"
        );
    } else {
        // Right only where the kernel refuses the personality (checked here on our own).
        assert!(!kernel_takes_no_randomize(), "{}", doc["config"]["aslr"]);
    }
    let allowed = list_form(&allowed_here());
    let (tasks, doc) = observe_as(&setbit, "thread", 2, &["--no-pin", "--aslr"], None);
    assert_eq!(doc["config"]["placement"]["pinned_to"], "none");
    assert!(tasks.iter().all(|t| t.cpus == allowed), "{tasks:?}");
    assert!(
        tasks.iter().all(|t| t.personality == "00000000"),
        "{tasks:?}"
    );
}

/// A task killed in the middle of a long sample is noticed at once: SIGCHLD wakes the
/// driver's one poll, which would otherwise sleep until the sample is due (here 30 s away;
/// the run ends well before that however slow the machine).
#[test]
fn a_task_killed_mid_sample_ends_the_run_at_once() {
    let d = tempfile::tempdir().unwrap();
    let mut cmd = std_patchbench();
    cmd.args(["scale", "getppid1", "--mode", "process", "--tasks", "2"])
        .args([
            "--duration",
            "120",
            "--warmup",
            "0",
            "--sample-interval",
            "30",
        ])
        .args(["--no-store", "--dir"])
        .arg(d.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    let tasks = tasks_of(&child, "process", 2);
    // Let the driver reach its sleep before the first sample.
    std::thread::sleep(Duration::from_millis(500));
    let killed = std::time::Instant::now();
    // SAFETY: killing a task process this test's command started.
    unsafe { libc::kill(tasks[1].0, libc::SIGKILL) };
    let out = child.wait_with_output().unwrap();
    let took = killed.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("killed by signal 9 (SIGKILL)"), "{err}");
    assert!(
        took < Duration::from_secs(20),
        "the driver took {took:?} to notice (the sample was due 30 s after the start)"
    );
    assert!(d.path().read_dir().unwrap().next().is_none());
}

/// A process that was already re-exec'd for ASLR and is still randomised (a kernel that drops
/// the personality at exec) goes on randomised and says so, instead of exec'ing for ever.
#[test]
fn a_personality_lost_at_exec_is_reported_not_retried() {
    require_randomised_here();
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("r.json");
    common::patchbench()
        .env("PATCHBENCH_ASLR_REEXEC", "1")
        .args(["scale", "getppid1", "--tasks", "1", "--mode", "process"])
        .args(common::SHORT)
        .args(["--no-store", "--json"])
        .arg(&json)
        .arg("--dir")
        .arg(d.path())
        .assert()
        .success();
    let aslr = &read_json(&json)["config"]["aslr"];
    assert_eq!(aslr["randomised"], true, "{aslr}");
    assert!(
        aslr["how"]
            .as_str()
            .unwrap()
            .contains("did not survive the exec"),
        "{aslr}"
    );
}
