//! `patchbench campaign --executor vm` for real: QEMU guests under TCG booting Debian's kernel
//! package (fetched once into `target/test-kernels/`, unpacked, not installed) or the test
//! tree's tiny kernel (`common::kernel_tree::tiny_kernel`, the shared build cache's) on this
//! machine's root. One round of `pti=off` against `pti=on` on Debian's kernel, profiled,
//! records two runs with the kernel and command line read back from inside the guests, a
//! profile taken in each guest of its own kernel and a scratch ext4 on a RAM disk of modules,
//! and their report warns of nothing that is not true (no BogoMIPS "difference", no directory the workload never wrote in). On the tiny
//! kernel, whose guests boot fastest: a side whose guest never reaches the workload (`rdinit=`
//! of a missing program: the kernel panics) is a failed step with its console, and the other
//! side's scratch ext4 on a RAM disk is the workload's `--dir`; SIGINT mid-step then `resume`
//! completes with nothing lost or duplicated; SIGKILL mid-step leaves no QEMU. `--duet` runs
//! both guests at once, each pinned to its own CPUs (read from /proc while they run) and
//! released together at the barrier (Debian's kernel: its console driver is a module); a step
//! waits for the host's measurement lock (tiny); bad input is refused before anything is
//! stored.
//!
//! Needs `qemu-system-x86`, `busybox-static`, `e2fsprogs`, `kmod` and apt's package lists
//! (`.ci/run` installs them), and for the tiny kernel what tests/build.rs needs; a test that
//! cannot get them fails with the reason. Debian's guests boot in about 10 s of CPU time each;
//! the step timeout is generous for a loaded machine.

mod common;

use common::kernel_tree::tiny_kernel;
use common::test_kernel::debian_kernel;
use common::{children, patchbench_with_store, wait_until, wait_with_timeout};
use patchbench::record::campaign::state::StepState;
use patchbench::record::RunRecord;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

/// A workload of one short test.
const SHORT: [&str; 9] = [
    "run",
    "syscall",
    "--duration",
    "0.5",
    "--passes",
    "1",
    "--no-settle",
    "--copies",
    "1",
];

/// How long a whole campaign of a few guests may take on a loaded machine.
const CAMPAIGN_LIMIT: Duration = Duration::from_secs(1800);

fn start(store: &Path, name: &str, opts: &[&str], work: &[&str]) -> std::process::Command {
    let mut c = patchbench_with_store(store);
    c.args([
        "campaign",
        "start",
        name,
        "--executor",
        "vm",
        "--step-timeout",
        "900",
    ])
    .args(opts)
    .arg("--")
    .args(work);
    c
}

/// A side's `IMAGE[:WORDS]`.
fn side(image: &Path, words: &str) -> String {
    if words.is_empty() {
        image.display().to_string()
    } else {
        format!("{}:{words}", image.display())
    }
}

/// Runs a command to its end (bounded), returning its stderr; fails the test unless it
/// succeeded.
fn run_ok(cmd: &mut std::process::Command) -> String {
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let status = wait_with_timeout(&mut child, CAMPAIGN_LIMIT);
    let err = reader.join().unwrap();
    assert!(status.success(), "{status}: {err}");
    err
}

fn runs(store: &Path, name: &str) -> Vec<RunRecord> {
    let s = common::open_store(store);
    let c = s.campaign(name).unwrap().unwrap();
    s.campaign_runs(c.id)
        .unwrap()
        .into_iter()
        .map(|(_, r)| r)
        .collect()
}

/// The QEMU processes `pid` started.
fn qemus_of(pid: u32) -> Vec<i32> {
    children(pid)
        .into_iter()
        .filter(|c| {
            std::fs::read_to_string(format!("/proc/{c}/comm"))
                .is_ok_and(|comm| comm.starts_with("qemu-system"))
        })
        .collect()
}

/// The CPU lists every thread of `pid` may run on.
fn thread_cpus(pid: i32) -> BTreeSet<String> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .filter_map(|t| {
                    let status = std::fs::read_to_string(t.ok()?.path().join("status")).ok()?;
                    status
                        .lines()
                        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                        .map(|v| v.trim().to_string())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// True while a process exists and is not a zombie.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

/// The one vm campaign of Debian's kernel: what the guests ran is read back from inside them,
/// the profile is taken in the guest, of the guest's kernel, and the scratch ext4 is made on a
/// RAM disk of modules loaded with their arguments (the tiny kernel's are built in).
#[test]
fn pti_off_against_pti_on_records_what_the_guests_ran_and_profiles_them_in_the_guest() {
    let k = debian_kernel();
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    // Two seconds a pass: enough samples at 999 Hz in a TCG guest (perf, slow to start there,
    // is enabled only once ready, so the window is covered whole).
    let mut work = SHORT.to_vec();
    work[3] = "2";
    work.push("--profile");
    let err = run_ok(&mut start(
        &store,
        "pti",
        &[
            "--allow-tcg",
            "--base",
            &side(&k.image, "pti=off"),
            "--patched",
            &side(&k.image, "pti=on"),
            "--rounds",
            "1",
            "--scratch",
            "ext4:64M",
        ],
        &work,
    ));
    eprintln!("{err}");
    let runs = runs(&store, "pti");
    assert_eq!(runs.len(), 2, "{err}");
    let mut seen = BTreeSet::new();
    let mut boots = BTreeSet::new();
    for r in &runs {
        let step = r.campaign.as_ref().unwrap();
        assert!(
            seen.insert((step.round, step.side.clone())),
            "one run per step"
        );
        assert_eq!(step.executor, "vm");
        // Read back from inside the guest.
        assert_eq!(step.kernel.release, k.release);
        let words: Vec<&str> = step.kernel.cmdline.split_whitespace().collect();
        let (want, not) = if step.side == "base" {
            ("pti=off", "pti=on")
        } else {
            ("pti=on", "pti=off")
        };
        assert!(words.contains(&want) && !words.contains(&not), "{words:?}");
        assert!(words.iter().any(|w| w.starts_with("patchbench.step=")));
        let guest = step.guest.as_ref().unwrap();
        assert_eq!(guest.accelerator, "tcg");
        assert!(guest.qemu_command[0].contains("qemu-system"));
        let append = guest
            .qemu_command
            .iter()
            .position(|w| w == "-append")
            .map(|i| &guest.qemu_command[i + 1])
            .unwrap();
        assert_eq!(*append, step.kernel.cmdline);
        assert!(!guest.cpus.is_empty() && guest.vcpus >= 1);
        let boot = step.boot.as_ref().unwrap();
        assert_eq!(boot.via, "qemu");
        assert!(boot.since_boot_s > 0.0);
        eprintln!(
            "round {} {}: the workload started {:.1} s after the guest's boot",
            step.round, step.side, boot.since_boot_s
        );
        boots.insert(boot.boot_id.clone());
        assert!(!r.metrics.is_empty());
        let warnings = patchbench::record::campaign::run_warnings(r);
        assert!(warnings.iter().any(|w| w.contains("TCG")), "{warnings:?}");
        assert_eq!(r.config["dir_fstype"], "ext4", "{:?}", r.config);
        assert_eq!(
            step.scratch.as_deref(),
            Some("ext4:64M on /dev/ram0 (brd) in the guest")
        );
        // The run was measured and profiled in the guest, on the guest's kernel.
        assert!(
            r.system.kernel_release == k.release,
            "{}",
            r.system.kernel_release
        );
        let rows: Vec<(&str, f64)> = r
            .metrics
            .iter()
            .filter(|m| m.name.starts_with("perf-profile."))
            .map(|m| (m.name.as_str(), m.value))
            .collect();
        assert!(!rows.is_empty(), "no profile rows: {:?}", r.monitors);
        // Folded inside the guest, from the guest kernel's /proc/kallsyms (Debian's
        // System.map is a stub, so the names cannot be checked against the image): the
        // system call path, and the calls syscall's loop makes (dup, close, getpid, getuid,
        // umask), named as kernel functions.
        let sys_calls = rows
            .iter()
            .filter(|(n, _)| n.starts_with("perf-profile.children.") && n.contains(".__x64_sys_"))
            .count();
        // Entry points, with their callees (children): in a loaded TCG guest a call's own
        // (self) time can sit in its helpers (alloc_fd, __task_pid_nr_ns) below the 0.5 % cut.
        assert!(sys_calls >= 3, "{rows:?}");
        let entry = rows.iter().find(|(n, _)| {
            n.starts_with("perf-profile.children.") && n.ends_with(".do_syscall_64")
        });
        assert!(entry.is_some_and(|(_, v)| *v > 10.0), "{rows:?}");
        eprintln!(
            "{}: kernel {} (this host's: {}): {sys_calls} __x64_sys_ symbols; do_syscall_64 {:.1} % with children",
            step.side,
            r.system.kernel_release,
            host_release(),
            entry.map_or(0.0, |e| e.1)
        );
    }
    assert_eq!(boots.len(), 2, "every step is a fresh boot");
    let report = patchbench_with_store(&store)
        .args(["campaign", "report", "pti"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(text.contains("TCG"), "{text}");
    // One image, two command lines: nothing else differs, and a warning must be true. BogoMIPS
    // (calibrated anew at every boot) is no difference, and the file tests' directory (the
    // guest's /tmp, a tmpfs of under 1 GiB) says nothing about `run syscall`, which writes no
    // file. The TCG warning is true; a noise line may be only about activity measured then.
    for command in [
        vec!["campaign", "report", "pti"],
        vec!["compare", "pti/base", "pti/patched"],
    ] {
        let out = patchbench_with_store(&store)
            .args(&command)
            .output()
            .unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let warnings: Vec<&str> = all.lines().filter(|l| l.contains("warning")).collect();
        eprintln!("{command:?}: {warnings:#?}");
        for w in &warnings {
            assert!(!w.contains("not comparable"), "{command:?}: {w}");
            assert!(!w.contains("bogomips"), "{command:?}: {w}");
            assert!(!w.contains("file tests' directory"), "{command:?}: {w}");
        }
    }
}

/// This host's kernel release.
fn host_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// On the tiny kernel (no modules: its RAM disk and ext4 are built in).
#[test]
fn a_guest_that_never_reaches_the_workload_fails_its_step_and_scratch_is_ext4() {
    let k = tiny_kernel();
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    let err = run_ok(&mut start(
        &store,
        "fails",
        &[
            "--allow-tcg",
            "--base",
            &side(&k.image, ""),
            "--patched",
            &side(&k.image, "rdinit=/nonexistent"),
            "--rounds",
            "1",
            "--scratch",
            "ext4:64M",
        ],
        &[
            "run",
            "fstime-w",
            "--duration",
            "0.3",
            "--passes",
            "1",
            "--no-settle",
            "--copies",
            "1",
        ],
    ));
    eprintln!("{err}");
    let s = common::open_store(&store);
    let c = s.campaign("fails").unwrap().unwrap();
    assert_eq!(c.state.as_str(), "finished");
    let steps = s.steps(c.id).unwrap();
    let patched = steps.iter().find(|s| s.side == "patched").unwrap();
    assert_eq!(patched.state, StepState::Failed);
    assert_eq!(patched.attempts, 2, "retried once");
    let reason = patched.error.as_deref().unwrap();
    assert!(
        reason.contains("panicked before the workload") || reason.contains("never reached"),
        "{reason}"
    );
    let console = patched.console_tail.as_deref().unwrap();
    assert!(console.contains("Kernel panic"), "{console}");
    let base = steps.iter().find(|s| s.side == "base").unwrap();
    assert_eq!(base.state, StepState::Done);
    let runs = runs(&store, "fails");
    assert_eq!(runs.len(), 1);
    let r = &runs[0];
    assert_eq!(r.config["dir_fstype"], "ext4", "{:?}", r.config);
    assert_eq!(
        r.campaign.as_ref().unwrap().scratch.as_deref(),
        Some("ext4:64M on /dev/ram0 (brd) in the guest")
    );
}

/// Starts a campaign of one round on `image` and returns it once a guest runs, with that
/// guest's pid.
fn start_and_wait_for_a_guest(
    store: &Path,
    name: &str,
    image: &Path,
) -> (std::process::Child, i32) {
    let child = start(
        store,
        name,
        &[
            "--allow-tcg",
            "--base",
            &side(image, ""),
            "--patched",
            &side(image, ""),
            "--rounds",
            "1",
        ],
        &SHORT,
    )
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap();
    let mut qemu = 0;
    wait_until(Duration::from_secs(300), "a guest to start", || {
        qemu = qemus_of(child.id()).first().copied().unwrap_or(0);
        qemu != 0
    });
    // Into the guest's boot (the tiny kernel's whole step takes a few seconds under TCG).
    std::thread::sleep(Duration::from_secs(1));
    (child, qemu)
}

/// On the tiny kernel.
#[test]
fn sigint_mid_step_stops_the_guest_and_resume_completes_without_loss_or_duplicates() {
    let k = tiny_kernel();
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    let (mut child, qemu) = start_and_wait_for_a_guest(&store, "int", &k.image);
    common::signal(&child, libc::SIGINT);
    let status = wait_with_timeout(&mut child, Duration::from_secs(120));
    assert_eq!(status.code(), Some(130));
    wait_until(Duration::from_secs(20), "the guest to go", || !alive(qemu));
    {
        let s = common::open_store(&store);
        let c = s.campaign("int").unwrap().unwrap();
        let steps = s.steps(c.id).unwrap();
        assert!(
            steps.iter().all(|s| s.state == StepState::Planned),
            "handed back"
        );
        assert!(s.list(None).unwrap().is_empty(), "no half-stored run");
    }
    run_ok(patchbench_with_store(&store).args(["campaign", "resume", "int"]));
    let runs = runs(&store, "int");
    let sides: BTreeSet<(u32, String)> = runs
        .iter()
        .map(|r| {
            let s = r.campaign.as_ref().unwrap();
            (s.round, s.side.clone())
        })
        .collect();
    assert_eq!(runs.len(), 2);
    assert_eq!(
        sides,
        BTreeSet::from([(1, "base".to_string()), (1, "patched".to_string())])
    );
}

/// On the tiny kernel.
#[test]
fn sigkill_of_patchbench_mid_step_leaves_no_qemu() {
    let k = tiny_kernel();
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    let (mut child, qemu) = start_and_wait_for_a_guest(&store, "kill", &k.image);
    assert!(alive(qemu));
    common::signal(&child, libc::SIGKILL);
    let status = wait_with_timeout(&mut child, Duration::from_secs(60));
    assert_eq!(status.code(), None);
    wait_until(
        Duration::from_secs(20),
        "QEMU to die with patchbench",
        || !alive(qemu),
    );
    let s = common::open_store(&store);
    assert!(s.list(None).unwrap().is_empty(), "no half-stored run");
    // The killed process's private directory (the guest's initramfs, the step's script) is
    // still there; `campaign stop` plans the dead step again and removes it.
    let prefix = format!("patchbench-vm-{}-", child.id());
    let left = || {
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            .count()
    };
    assert_eq!(left(), 1, "a SIGKILL leaves its private directory");
    let out = patchbench_with_store(&store)
        .args(["campaign", "stop", "kill"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("campaign kill is stopped"), "{err}");
    assert!(
        err.contains("removed what killed patchbench processes left"),
        "{err}"
    );
    assert_eq!(left(), 0, "{err}");
}

#[test]
fn a_duet_runs_both_guests_at_once_on_disjoint_cpus_released_together() {
    let k = debian_kernel();
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    let mut child = start(
        &store,
        "duet",
        &[
            "--allow-tcg",
            "--base",
            &side(&k.image, "pti=off"),
            "--patched",
            &side(&k.image, "pti=on"),
            "--rounds",
            "1",
            "--duet",
        ],
        &SHORT,
    )
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let mut qemus = Vec::new();
    wait_until(Duration::from_secs(300), "two guests at once", || {
        qemus = qemus_of(child.id());
        qemus.len() == 2
    });
    // Every thread of each QEMU is bound to its guest's set; the two sets do not meet.
    let sets: Vec<BTreeSet<String>> = qemus.iter().map(|&q| thread_cpus(q)).collect();
    eprintln!("the guests' threads may run on {sets:?}");
    for s in &sets {
        assert_eq!(s.len(), 1, "every thread of a guest on one set: {s:?}");
    }
    let cpus = |s: &BTreeSet<String>| -> BTreeSet<usize> {
        patchbench::noise::sysfs::parse_cpu_list(s.iter().next().unwrap())
            .into_iter()
            .collect()
    };
    assert!(cpus(&sets[0]).is_disjoint(&cpus(&sets[1])), "{sets:?}");
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let status = wait_with_timeout(&mut child, CAMPAIGN_LIMIT);
    let err = reader.join().unwrap();
    assert!(status.success(), "{err}");
    let runs = runs(&store, "duet");
    assert_eq!(runs.len(), 2, "{err}");
    let guest_cpus: Vec<BTreeSet<u32>> = runs
        .iter()
        .map(|r| {
            let step = r.campaign.as_ref().unwrap();
            assert!(step.duet);
            // One measured pass: one release at the barrier.
            assert_eq!(r.extra["duet_barrier_releases"], 1, "{:?}", r.extra);
            step.guest.as_ref().unwrap().cpus.iter().copied().collect()
        })
        .collect();
    assert!(guest_cpus[0].is_disjoint(&guest_cpus[1]), "{guest_cpus:?}");
}

#[test]
fn bad_vm_input_is_refused_in_one_line_before_anything_is_stored() {
    let k = debian_kernel();
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    let other = d.path().join("lib/modules/5.10.0-1-amd64");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("modules.dep"), "").unwrap();
    let base = side(&k.image, "");
    let other_s = other.display().to_string();
    let mut cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "--allow-tcg",
                "--base",
                &base,
                "--qemu",
                "/nonexistent/qemu",
            ],
            "no QEMU",
        ),
        (
            vec!["--allow-tcg", "--base", &base, "--base-modules", &other_s],
            "5.10.0-1-amd64",
        ),
        (
            vec![
                "--allow-tcg",
                "--base",
                &base,
                "--memory",
                "256",
                "--scratch",
                "ext4:64M",
            ],
            "--memory",
        ),
        (
            vec!["--allow-tcg", "--base", &base, "--cpus", "4095"],
            "--cpus",
        ),
    ];
    // Without --allow-tcg: refused where KVM cannot boot a stock kernel (as on a PVM host).
    let kvm =
        patchbench::campaign::vm::accel::kvm_unusable(Path::new("/sys"), Path::new("/dev/kvm"));
    match &kvm {
        Some(_) => cases.push((vec!["--base", &base], "--allow-tcg")),
        None => eprintln!("KVM is usable here: a campaign without --allow-tcg would run under it"),
    }
    for (mut opts, why) in cases {
        opts.extend(["--patched", &base]);
        let out = start(&store, "bad", &opts, &SHORT).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{opts:?}: {err}");
        assert!(err.contains(why), "{opts:?}: {err}");
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "one line: {err}");
        assert!(!store.exists(), "{opts:?} created the store");
    }
}

#[test]
fn a_guest_step_waits_for_the_hosts_measurement_lock_and_says_whom_for() {
    let k = tiny_kernel();
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("s.db");
    // The test holds the campaign's measurement lock, as another measurement would.
    let lock = common::private_measure_lock();
    let held = nix::fcntl::Flock::lock(
        std::fs::File::open(&lock).unwrap(),
        nix::fcntl::FlockArg::LockExclusive,
    )
    .unwrap();
    let mut child = start(
        &store,
        "locked",
        &[
            "--allow-tcg",
            "--base",
            &side(&k.image, ""),
            "--patched",
            &side(&k.image, ""),
            "--rounds",
            "1",
        ],
        &SHORT,
    )
    .env(patchbench::proc::measure_lock::LOCK_ENV, &lock)
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        use std::io::BufRead;
        assert!(err.read_line(&mut line).unwrap() > 0, "{seen}");
        seen.push_str(&line);
        if line.contains(patchbench::proc::measure_lock::WAITING) {
            break;
        }
    }
    assert!(
        seen.contains(&format!("waiting for pid {}", std::process::id())),
        "{seen}"
    );
    // No guest starts while the lock is held.
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        qemus_of(child.id()).is_empty(),
        "a guest started while the host measured"
    );
    drop(held);
    let mut rest = String::new();
    use std::io::Read;
    err.read_to_string(&mut rest).unwrap();
    let status = wait_with_timeout(&mut child, Duration::from_secs(300));
    assert!(status.success(), "{seen}{rest}");
    assert_eq!(runs(&store, "locked").len(), 2, "{rest}");
}
