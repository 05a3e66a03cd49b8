//! The kexec executor, for real, inside one QEMU guest under TCG (Debian's kernel, unpacked;
//! the host's root shared read-only, a writable shared directory holding the store). Nothing
//! here loads a kernel on the machine running the tests: the kernel loads and jumps happen in
//! the guest, and every patchbench started on the host runs with `PATCHBENCH_FORBID_KEXEC`.
//!
//! - A campaign of 2 rounds, `pti=off` against `pti=on` on the same image, started by the
//!   guest's first boot: 4 kexec boots each run their step through `campaign resume --boot`,
//!   the store holds 4 runs with the command lines read inside, and the last jump returns to
//!   the first boot's kernel and command line, where the hook does nothing and the guest
//!   powers off.
//! - The next step's image missing: the campaign fails with the reason and the guest stays on
//!   the kernel it booted (no further boot).
//! - The hook never loops: a step that fails twice (each time in a kexec boot of its own), or
//!   a boot carrying a step's marker without its side's words, fails the campaign where it
//!   stands; `patchbench.stop` on a step's command line stops it and returns home.
//! - Faults that need a kernel's real state (lockdown refusing an unsigned image, kexec
//!   disabled), checked in a guest booted with `lockdown=integrity`.
//! - On the host, without changing anything: no CAP_SYS_BOOT, a store on a tmpfs, a missing
//!   initrd or modules, no --yes without a terminal, no systemd for install-hook, and a boot
//!   hook that does nothing at a boot that is no step.

mod common;

use common::test_kernel;

use patchbench::campaign::vm::accel::Accel;
use patchbench::campaign::vm::checks::ROOT_MODULES;
use patchbench::campaign::vm::host_tools;
use patchbench::campaign::vm::initramfs::{self, Contents};
use patchbench::campaign::vm::modules::ModuleIndex;
use patchbench::campaign::vm::qemu::Guest;
use patchbench::record::campaign::state::CampaignState;
use patchbench::store::db::Store;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The guest's view of the shared directory (`init_script::RESULT_MOUNT`).
const SHARED: &str = "/run/patchbench";

/// A one-test workload, short even under TCG.
const WORKLOAD: &str = "run syscall --duration 0.5 --passes 1 --no-settle --copies 1 --dir /tmp";

/// A guest that boots Debian's kernel with the vm executor's initramfs, running `boot.sh` of
/// its shared directory at every boot.
struct TestGuest {
    /// Everything of this test (not under /tmp: the guest covers /tmp with a tmpfs).
    dir: PathBuf,
    shared: PathBuf,
    kernel: test_kernel::TestKernel,
    initramfs: PathBuf,
}

/// What a guest printed, with when.
struct Console {
    lines: Vec<(Duration, String)>,
    status: std::process::ExitStatus,
}

impl Console {
    fn text(&self) -> String {
        self.lines
            .iter()
            .map(|(_, l)| l.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn tail(&self) -> String {
        let n = self.lines.len().saturating_sub(60);
        self.lines[n..]
            .iter()
            .map(|(t, l)| format!("{:7.1} {l}", t.as_secs_f64()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The times of the lines that start with `prefix`.
    fn times_of(&self, prefix: &str) -> Vec<Duration> {
        self.lines
            .iter()
            .filter(|(_, l)| l.starts_with(prefix))
            .map(|(t, _)| *t)
            .collect()
    }
}

impl TestGuest {
    fn new(name: &str) -> TestGuest {
        let kernel = test_kernel::debian_kernel();
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("kexec-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let shared = dir.join("shared");
        std::fs::create_dir_all(&shared).unwrap();
        let index = ModuleIndex::load(&kernel.modules)
            .unwrap_or_else(|e| panic!("the test kernel's modules: {e}"));
        let modules = index
            .resolve(&ROOT_MODULES)
            .unwrap_or_else(|e| panic!("the test kernel's 9p modules: {e}"))
            .into_iter()
            .map(|m| (m, String::new()))
            .collect();
        let busybox = host_tools::static_busybox()
            .unwrap_or_else(|e| panic!("the guest needs a static busybox: {e}"));
        let contents = Contents {
            release: kernel.release.clone(),
            busybox,
            modules,
            modules_dir: Some(kernel.modules.clone()),
            scratch_fs: None,
            initrd: None,
            // The whole target directory: the programs and the test kernels both stay
            // visible in the guest when the checkout is under /tmp or /root.
            program_dir: Path::new(env!("CARGO_BIN_EXE_patchbench"))
                .parent()
                .and_then(Path::parent)
                .map(Path::to_path_buf),
        };
        let initramfs = initramfs::build(&dir, "kexec", &contents)
            .unwrap_or_else(|e| panic!("cannot build the guest's initramfs: {e}"));
        // The guest's init runs `step.sh` of the shared directory at every boot.
        std::fs::write(
            shared.join("step.sh"),
            format!(
                "echo \"pbtest: boot $(cat /proc/sys/kernel/random/boot_id) up $(cut -d' ' \
                 -f1 /proc/uptime) s: $(cat /proc/cmdline)\"\n\
                 [ -f {SHARED}/before.sh ] && . {SHARED}/before.sh\n\
                 if [ -f {SHARED}/start.sh ]; then\n\
                   mv {SHARED}/start.sh {SHARED}/started.sh\n\
                   sh {SHARED}/started.sh; echo \"pbtest: start exited $?\"\n\
                 else\n\
                   {pb} campaign resume --boot --store {SHARED}/store.db\n\
                   echo \"pbtest: hook exited $?\"\n\
                 fi\n",
                pb = env!("CARGO_BIN_EXE_patchbench"),
            ),
        )
        .unwrap();
        TestGuest {
            dir,
            shared,
            kernel,
            initramfs,
        }
    }

    /// Writes `start.sh`: the guest's first boot runs it (once).
    fn start_with(&self, script: &str) {
        std::fs::write(self.shared.join("start.sh"), script).unwrap();
    }

    /// `patchbench campaign start ...` as the guest runs it.
    fn start_command(&self, name: &str, patched_image: &str, extra: &str) -> String {
        let img = self.kernel.image.display();
        let mods = self.kernel.modules.display();
        let ir = self.initramfs.display();
        format!(
            "{pb} campaign start {name} --executor kexec --order abba --rounds 2 --yes \
             --reboot-in 0 --base {img}:pti=off --patched {patched_image}:pti=on \
             --base-initrd {ir} --patched-initrd {ir} --base-modules {mods} \
             --patched-modules {mods} --return-to {img} --return-initrd {ir} \
             --store {SHARED}/store.db {extra} -- {WORKLOAD}",
            pb = env!("CARGO_BIN_EXE_patchbench"),
        )
    }

    /// Boots the guest with `words` added to its command line and waits until it powers off
    /// (or `limit` passes: then the test fails with the console).
    fn boot(&self, words: &[String], limit: Duration) -> Console {
        let qemu = host_tools::qemu(Path::new("qemu-system-x86_64"))
            .unwrap_or_else(|e| panic!("the kexec tests need QEMU: {e}"));
        let guest = Guest {
            qemu: &qemu,
            accel: Accel::Tcg,
            vcpus: 1,
            memory_mib: 1024,
            kernel: &self.kernel.image,
            initramfs: &self.initramfs,
            step_id: 0,
            side_words: words,
            result_dir: &self.shared,
            barrier: None,
        };
        let argv = guest.argv();
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", argv[0]));
        let pid = child.id();
        let started = Instant::now();
        let (tx, rx) = std::sync::mpsc::channel();
        let out = child.stdout.take().unwrap();
        let err = child.stderr.take().unwrap();
        for reader in [
            Box::new(out) as Box<dyn std::io::Read + Send>,
            Box::new(err) as Box<dyn std::io::Read + Send>,
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in std::io::BufReader::new(reader).lines() {
                    let Ok(line) = line else { break };
                    let clean: String = line.chars().filter(|c| !c.is_control()).collect();
                    if tx.send((started.elapsed(), clean)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut lines = Vec::new();
        let deadline = started + limit;
        loop {
            match rx.recv_timeout(Duration::from_millis(200)) {
                Ok(l) => {
                    eprintln!("guest {:7.1} {}", l.0.as_secs_f64(), l.1);
                    lines.push(l);
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            }
            if Instant::now() > deadline {
                // SAFETY: killing the QEMU this test started.
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
                let _ = child.wait();
                let text: Vec<String> = lines.iter().map(|(_, l)| l.clone()).collect();
                panic!(
                    "the guest did not power off within {limit:?}; its console:\n{}",
                    text[text.len().saturating_sub(60)..].join("\n")
                );
            }
        }
        let status = child.wait().unwrap();
        Console { lines, status }
    }

    fn store(&self) -> Store {
        common::open_store(self.shared.join("store.db"))
    }
}

impl Drop for TestGuest {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The bar: 2 rounds × 2 sides across 4 kexec boots in one guest, then home, then power off.
#[test]
fn a_campaign_runs_each_step_in_a_kexec_boot_of_its_own_and_returns_home() {
    let g = TestGuest::new("bar");
    let image = g.kernel.image.display().to_string();
    g.start_with(&g.start_command("pti", &image, ""));
    let console = g.boot(&[], Duration::from_secs(3600));
    let text = console.text();
    assert!(
        console.status.success(),
        "QEMU: {}\n{}",
        console.status,
        console.tail()
    );
    let boots = console.times_of("pbtest: boot");
    assert_eq!(
        boots.len(),
        6,
        "first boot, 4 step boots, the return home\n{}",
        console.tail()
    );
    let store = g.store();
    let c = store.campaign("pti").unwrap().unwrap();
    assert_eq!(
        c.state,
        CampaignState::Finished,
        "{:?}\n{}",
        c.state_reason,
        console.tail()
    );
    let runs = store.campaign_runs(c.id).unwrap();
    assert_eq!(runs.len(), 4, "one run per step");
    let steps = store.steps(c.id).unwrap();
    let mut boot_ids = std::collections::BTreeSet::new();
    for (_, r) in &runs {
        let info = r.campaign.as_ref().unwrap();
        let step = steps
            .iter()
            .find(|s| s.run_uuid == r.uuid)
            .expect("the run's step");
        assert_eq!(info.executor, "kexec");
        assert_eq!(info.kernel.release, g.kernel.release);
        let words: Vec<&str> = info.kernel.cmdline.split_whitespace().collect();
        let (want, not) = if info.side == "base" {
            ("pti=off", "pti=on")
        } else {
            ("pti=on", "pti=off")
        };
        assert!(
            words.contains(&want) && !words.contains(&not),
            "{}: {}",
            info.side,
            info.kernel.cmdline
        );
        assert!(words.contains(&"patchbench.campaign=pti"));
        let step_word = format!("patchbench.step={}", step.id);
        assert!(
            words.contains(&step_word.as_str()),
            "{}",
            info.kernel.cmdline
        );
        let boot = info.boot.as_ref().expect("the boot is recorded");
        assert_eq!(boot.via, "kexec");
        assert!(boot.since_boot_s > 0.0);
        assert!(boot_ids.insert(boot.boot_id.clone()), "one boot per run");
        assert_eq!(step.attempts, 1);
    }
    // The first boot's id is not among the steps' (each step had a boot of its own).
    let first_id = text
        .lines()
        .find_map(|l| l.strip_prefix("pbtest: boot "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_string();
    assert!(!boot_ids.contains(&first_id));
    // The return home: the first boot's command line, without our words; the hook is quiet.
    let last_boot = text
        .lines()
        .rfind(|l| l.starts_with("pbtest: boot "))
        .unwrap();
    assert!(!last_boot.contains("patchbench.campaign"), "{last_boot}");
    assert!(!last_boot.contains("pti="), "{last_boot}");
    assert!(text.contains("pbtest: hook exited 0"));
    assert!(
        text.lines()
            .last()
            .is_some_and(|l| l.contains("Power down")),
        "the guest powers off at the end:\n{}",
        console.tail()
    );
    let gaps: Vec<f64> = boots
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64())
        .collect();
    eprintln!(
        "kexec campaign under TCG: {} boots in {:.0} s; from one boot's start to the next: {:?} s",
        boots.len(),
        console.lines.last().map_or(0.0, |l| l.0.as_secs_f64()),
        gaps.iter()
            .map(|g| (g * 10.0).round() / 10.0)
            .collect::<Vec<_>>()
    );
}

/// The next step's image is gone: the campaign fails with the reason, no further boot.
#[test]
fn a_missing_next_image_fails_the_campaign_and_the_guest_stays_on_its_kernel() {
    let g = TestGuest::new("missing");
    let patched = g.shared.join("patched-vmlinuz");
    std::fs::copy(&g.kernel.image, &patched).unwrap();
    let in_guest = format!("{SHARED}/patched-vmlinuz");
    // The first boot writes before.sh, which the next boot runs before its hook.
    g.start_with(&format!(
        "echo 'rm -f {in_guest}' > {SHARED}/before.sh\n{}\n",
        g.start_command("gone", &in_guest, "")
    ));
    let console = g.boot(&[], Duration::from_secs(1800));
    assert!(console.status.success(), "{}", console.tail());
    let text = console.text();
    assert_eq!(
        console.times_of("pbtest: boot").len(),
        2,
        "the first boot and round 1's base, then no more\n{}",
        console.tail()
    );
    let c = g.store().campaign("gone").unwrap().unwrap();
    assert_eq!(c.state, CampaignState::Failed, "{}", console.tail());
    let reason = c.state_reason.clone().unwrap_or_default();
    assert!(
        reason.contains("patched-vmlinuz")
            && reason.contains("gone")
            && reason.contains(&format!("stays on {}", g.kernel.release)),
        "{reason}"
    );
    assert_eq!(g.store().campaign_runs(c.id).unwrap().len(), 1, "base ran");
    assert!(text.contains("pbtest: hook exited 1"), "{}", console.tail());
    let status = common::patchbench()
        .args(["campaign", "status", "gone", "--store"])
        .arg(g.shared.join("store.db"))
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&status.stdout);
    assert!(
        shown.contains("failed") && shown.contains("patched-vmlinuz"),
        "{shown}"
    );
}

/// `patchbench campaign start NAME --executor kexec` on the host with the test kernel's image
/// for both sides and `extra` options; never with --yes, always with PATCHBENCH_FORBID_KEXEC.
fn host_start(store: &Path, name: &str, image: &Path, extra: &[&str]) -> Command {
    let mut c = common::std_patchbench();
    c.env(patchbench::campaign::kexec::load::FORBID_ENV, "1")
        .stdin(Stdio::null())
        .args([
            "campaign",
            "start",
            name,
            "--executor",
            "kexec",
            "--rounds",
            "1",
        ])
        .arg("--base")
        .arg(format!("{}:pti=off", image.display()))
        .arg("--patched")
        .arg(format!("{}:pti=on", image.display()))
        .arg("--store")
        .arg(store)
        .args(extra)
        .arg("--")
        .args(WORKLOAD.split_whitespace());
    assert!(!extra.contains(&"--yes"), "never --yes on the host");
    c
}

/// Runs a command that must be refused: exit 2, one line on stderr containing `want`.
fn refused(mut c: Command, want: &str) -> String {
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains(want), "wanted {want:?} in: {err}");
    err
}

/// Faults found before anything changes, on the host, with real conditions: no CAP_SYS_BOOT
/// (dropped with setpriv), a store on a tmpfs, a missing initrd or modules, no --yes and no
/// terminal. The store is never created.
#[test]
fn faults_are_refused_on_the_host_before_anything_changes() {
    let k = test_kernel::debian_kernel();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let store = dir.path().join("store.db");
    let initrd = dir.path().join("initrd.img");
    std::fs::write(&initrd, b"not really an initrd").unwrap();
    let ir = initrd.display().to_string();
    let img = k.image.display().to_string();
    let complete = [
        "--base-initrd",
        ir.as_str(),
        "--patched-initrd",
        ir.as_str(),
        "--return-to",
        img.as_str(),
        "--return-initrd",
        "none",
    ];
    // All good: only the confirmation is missing.
    refused(host_start(&store, "c", &k.image, &complete), "add --yes");
    // No CAP_SYS_BOOT: dropped from the bounding and inheritable sets, so the exec'd
    // patchbench runs without it.
    let mut no_cap = Command::new("setpriv");
    let inner = host_start(&store, "c", &k.image, &complete);
    no_cap
        .args(["--inh-caps=-sys_boot", "--bounding-set=-sys_boot", "--"])
        .arg(inner.get_program())
        .args(inner.get_args())
        .envs(inner.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .stdin(Stdio::null());
    refused(no_cap, "CAP_SYS_BOOT");
    // No initrd beside the image and none given.
    refused(
        host_start(&store, "c", &k.image, &complete[2..]),
        "--base-initrd FILE",
    );
    // An image whose modules are nowhere (a copy away from its lib/modules).
    let lone = dir.path().join("boot");
    std::fs::create_dir(&lone).unwrap();
    let lone_image = lone.join(k.image.file_name().unwrap());
    std::fs::copy(&k.image, &lone_image).unwrap();
    refused(
        host_start(&store, "c", &lone_image, &complete),
        "has no modules",
    );
    // The kernel to return to must be known.
    refused(
        host_start(&store, "c", &k.image, &complete[..4]),
        "--return-to",
    );
    assert!(!store.exists(), "nothing was stored");
    // A store on a tmpfs would not survive the reboot.
    let shm = Path::new("/dev/shm");
    assert!(
        nix::sys::statfs::statfs(shm)
            .is_ok_and(|s| s.filesystem_type() == nix::sys::statfs::TMPFS_MAGIC),
        "this test needs /dev/shm to be a tmpfs"
    );
    let on_tmpfs = shm.join(format!("patchbench-kexec-{}.db", std::process::id()));
    refused(host_start(&on_tmpfs, "c", &k.image, &complete), "tmpfs");
    assert!(!on_tmpfs.exists());
}

/// A kexec campaign's spec as `start` would store it: both sides on `image`, `pti=off`
/// against `pti=on`, one round in ABBA order, returning to `image` with `cmdline`.
fn kexec_spec(
    name: &str,
    image: &Path,
    release: &str,
    initrd: Option<&Path>,
    cmdline: &str,
) -> patchbench::record::campaign::spec::CampaignSpec {
    use patchbench::record::campaign::spec::*;
    let kernel = KernelSpec {
        image: image.into(),
        sha256: "0".repeat(64),
        release: release.into(),
        initrd: initrd.map(Path::to_path_buf),
        modules: None,
    };
    let side = |name: &str, word: &str| SideSpec {
        name: name.into(),
        kernel: Some(kernel.clone()),
        cmdline: vec![word.into()],
        setup: None,
        build: None,
    };
    CampaignSpec {
        name: name.into(),
        sides: vec![side("base", "pti=off"), side("patched", "pti=on")],
        workload: WORKLOAD.split_whitespace().map(str::to_string).collect(),
        schedule: Schedule::Rounds { rounds: 1 },
        order: Order::Abba,
        seed: 1,
        executor: ExecutorKind::Kexec,
        duet: false,
        scratch: None,
        vm: None,
        lab: None,
        kexec: Some(KexecOptions {
            return_to: BootTarget {
                image: image.into(),
                initrd: initrd.map(Path::to_path_buf),
                cmdline: cmdline.into(),
            },
        }),
        step_timeout_s: 600.0,
        settle_s: 0.0,
        primary: None,
        confidence: 0.95,
        program: env!("CARGO_BIN_EXE_patchbench").into(),
        started_on: "test".into(),
        build: None,
    }
}

/// The boot hook at a boot that is no step: quiet without a store or a campaign; with a
/// running kexec campaign it takes back a step an earlier boot left running (counting the
/// attempt), says how to go on, and loads nothing; the stop file stops the campaign.
#[test]
fn the_hook_does_nothing_at_a_boot_that_is_no_step() {
    use patchbench::record::campaign::plan;
    use patchbench::record::campaign::spec::Order;
    use patchbench::record::campaign::state::StepState;
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let store_path = dir.path().join("store.db");
    let hook = || {
        let mut c = common::std_patchbench();
        c.env(patchbench::campaign::kexec::load::FORBID_ENV, "1")
            .args(["campaign", "resume", "--boot", "--store"])
            .arg(&store_path)
            .stdin(Stdio::null());
        c.output().unwrap()
    };
    let out = hook();
    assert!(out.status.success() && out.stderr.is_empty() && out.stdout.is_empty());
    assert!(!store_path.exists(), "the hook creates no store");
    let spec = kexec_spec(
        "bare",
        Path::new("/boot/vmlinuz-test"),
        "6.1.0-test",
        None,
        "root=/dev/sda1",
    );
    {
        let mut store = common::create_store(&store_path);
        let id = store
            .create_campaign(&spec, 1, &plan::steps(Order::Abba, 1, 1, 1))
            .unwrap();
        // A step an earlier boot of this machine was running when it went down.
        let host = patchbench::sysinfo::hostname();
        let step = store
            .claim_step(id, &format!("{host}:1:0000-earlier-boot"), 0.0, None)
            .unwrap()
            .unwrap();
        assert_eq!(step.attempts, 1);
    }
    let out = hook();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("round 1 base was cut short") && err.contains("campaign resume bare"),
        "{err}"
    );
    let store = common::open_store(&store_path);
    let c = store.campaign("bare").unwrap().unwrap();
    assert_eq!(c.state, CampaignState::Running);
    let steps = store.steps(c.id).unwrap();
    assert_eq!(steps[0].state, StepState::Planned);
    assert_eq!(steps[0].attempts, 1, "the lost attempt counts");
    drop(store);
    // `resume NAME` by hand reboots: it wants --yes without a terminal.
    let mut by_hand = common::std_patchbench();
    by_hand
        .env(patchbench::campaign::kexec::load::FORBID_ENV, "1")
        .args(["campaign", "resume", "bare", "--store"])
        .arg(&store_path)
        .stdin(Stdio::null());
    refused(by_hand, "add --yes");
    // The stop file ends it at the next boot.
    std::fs::write(dir.path().join("bare.stop"), b"").unwrap();
    let out = hook();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.contains("stopped by the stop file"),
        "{err}"
    );
    let c = common::open_store(&store_path)
        .campaign("bare")
        .unwrap()
        .unwrap();
    assert_eq!(c.state, CampaignState::Stopped);
    let out = hook();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "quiet once stopped"
    );
}

/// install-hook and remove-hook need systemd: refused in a mount namespace where /run (and
/// so /run/systemd/system) is an empty tmpfs, and /etc/systemd/system too, so nothing of the
/// host's can be touched even if the check failed.
#[test]
fn the_hook_needs_systemd() {
    for cmd in ["install-hook", "remove-hook"] {
        let out = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg(
                "mount -t tmpfs tmpfs /run || exit 99; \
                 [ -d /etc/systemd/system ] && { mount -t tmpfs tmpfs /etc/systemd/system || exit 99; }; \
                 exec \"$@\"",
            )
            .arg("sh")
            .arg(env!("CARGO_BIN_EXE_patchbench"))
            .args(["campaign", cmd])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(
            out.status.code(),
            Some(99),
            "this test needs root to make a mount namespace: {err}"
        );
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("needs systemd") && err.contains("@reboot"),
            "{err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

/// A copy of `image` without its signature: the PE certificate table's entry zeroed.
fn unsigned_copy(image: &Path, to: &Path) {
    let mut b = std::fs::read(image).unwrap();
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    let pe = u32_at(&b, 0x3c) as usize;
    assert_eq!(
        &b[pe..pe + 4],
        b"PE\0\0",
        "Debian's image is a PE (EFI stub) file"
    );
    let opt = pe + 24;
    assert_eq!(u16::from_le_bytes([b[opt], b[opt + 1]]), 0x20b, "PE32+");
    let cert = opt + 112 + 4 * 8;
    b[cert..cert + 8].fill(0);
    std::fs::write(to, b).unwrap();
}

/// Faults that need the kernel's own state, in a guest booted with `lockdown=integrity`: an
/// unsigned image is refused before anything changes, and so is any start once
/// `kernel.kexec_load_disabled` is 1.
#[test]
fn lockdown_and_disabled_kexec_are_refused_inside_a_guest() {
    let g = TestGuest::new("faults");
    assert!(
        patchbench::campaign::kernel_image::is_signed(&g.kernel.image).unwrap(),
        "Debian's image carries a signature"
    );
    let unsigned = g.shared.join("unsigned-vmlinuz");
    unsigned_copy(&g.kernel.image, &unsigned);
    assert!(!patchbench::campaign::kernel_image::is_signed(&unsigned).unwrap());
    let image = g.kernel.image.display().to_string();
    let no_yes = |name: &str, patched: &str| {
        g.start_command(name, patched, "").replace(" --yes ", " ") + " </dev/null"
    };
    g.start_with(&format!(
        "mount -t securityfs securityfs /sys/kernel/security\n\
         echo \"pbtest: lockdown $(cat /sys/kernel/security/lockdown)\"\n\
         {}; echo \"pbtest: unsigned exited $?\"\n\
         echo 1 > /proc/sys/kernel/kexec_load_disabled\n\
         {}; echo \"pbtest: disabled exited $?\"\n",
        no_yes("unsigned", &format!("{SHARED}/unsigned-vmlinuz")),
        no_yes("disabled", &image),
    ));
    let console = g.boot(
        &["lockdown=integrity".to_string()],
        Duration::from_secs(1200),
    );
    let text = console.text();
    assert!(console.status.success(), "{}", console.tail());
    assert!(
        text.contains("pbtest: lockdown none [integrity]"),
        "{}",
        console.tail()
    );
    let line_before = |marker: &str| {
        let lines: Vec<&str> = text.lines().collect();
        let i = lines
            .iter()
            .position(|l| l.contains(marker))
            .unwrap_or_else(|| panic!("no {marker:?}:\n{}", console.tail()));
        lines[i - 1].to_string()
    };
    assert!(
        text.contains("pbtest: unsigned exited 2"),
        "{}",
        console.tail()
    );
    let why = line_before("pbtest: unsigned exited");
    assert!(
        why.contains("locked down") && why.contains("unsigned-vmlinuz"),
        "{why}"
    );
    assert!(
        text.contains("pbtest: disabled exited 2"),
        "{}",
        console.tail()
    );
    let why = line_before("pbtest: disabled exited");
    assert!(why.contains("kexec_load_disabled"), "{why}");
    assert!(!g.shared.join("store.db").exists(), "nothing was stored");
    assert_eq!(console.times_of("pbtest: boot").len(), 1, "no kexec");
}

/// The hook never loops: a step whose setup fails is retried in a kexec boot of its own, then
/// the campaign fails and the guest stays on the kernel it booted.
#[test]
fn a_step_that_fails_twice_ends_the_campaign_on_its_kernel() {
    let g = TestGuest::new("twice");
    let image = g.kernel.image.display().to_string();
    g.start_with(&g.start_command("twice", &image, "--patched-setup false"));
    let console = g.boot(&[], Duration::from_secs(2400));
    assert!(console.status.success(), "{}", console.tail());
    let text = console.text();
    // The first boot, round 1's base, then round 1's patched twice; no more.
    assert_eq!(
        console.times_of("pbtest: boot").len(),
        4,
        "{}",
        console.tail()
    );
    let store = g.store();
    let c = store.campaign("twice").unwrap().unwrap();
    assert_eq!(c.state, CampaignState::Failed);
    let reason = c.state_reason.clone().unwrap_or_default();
    assert!(
        reason.contains("round 1 patched failed twice in a row")
            && reason.contains("setup command failed")
            && reason.contains(&format!("stays on {}", g.kernel.release)),
        "{reason}"
    );
    let steps = store.steps(c.id).unwrap();
    let patched = steps
        .iter()
        .find(|s| s.side == "patched" && s.round == 1)
        .unwrap();
    assert_eq!(patched.attempts, 2);
    assert_eq!(
        store.campaign_runs(c.id).unwrap().len(),
        1,
        "only base was stored"
    );
    let last_boot = text
        .lines()
        .rfind(|l| l.starts_with("pbtest: boot "))
        .unwrap();
    assert!(last_boot.contains("pti=on"), "{last_boot}");
    assert!(text.contains("pbtest: hook exited 1"), "{}", console.tail());
}

/// A boot that carries a step's marker but not its side's words fails the campaign without a
/// jump; `patchbench.stop` on a step's command line ends a campaign and returns home.
#[test]
fn a_boot_with_the_wrong_words_fails_and_the_stop_word_returns_home() {
    use patchbench::record::campaign::plan;
    use patchbench::record::campaign::spec::Order;
    let g = TestGuest::new("words");
    let origin = "console=ttyS0 panic=-1 quiet rdinit=/init";
    {
        let mut store = common::create_store(g.shared.join("store.db"));
        for name in ["wrong", "halt"] {
            let spec = kexec_spec(
                name,
                &g.kernel.image,
                &g.kernel.release,
                Some(&g.initramfs),
                origin,
            );
            store
                .create_campaign(&spec, 1, &plan::steps(Order::Abba, 1, 1, 1))
                .unwrap();
        }
    }
    let step_of = |name: &str| {
        let s = g.store();
        let c = s.campaign(name).unwrap().unwrap();
        s.steps(c.id).unwrap()[0].id
    };
    // Round 1's base wants pti=off; this boot has pti=on.
    let wrong = step_of("wrong");
    let console = g.boot(
        &[
            "pti=on".into(),
            "patchbench.campaign=wrong".into(),
            format!("patchbench.step={wrong}"),
            "patchbench.via=kexec".into(),
        ],
        Duration::from_secs(1200),
    );
    assert!(console.status.success(), "{}", console.tail());
    assert_eq!(console.times_of("pbtest: boot").len(), 1, "no jump");
    let c = g.store().campaign("wrong").unwrap().unwrap();
    assert_eq!(c.state, CampaignState::Failed, "{}", console.tail());
    let reason = c.state_reason.unwrap_or_default();
    assert!(
        reason.contains("not the expected one") && reason.contains("pti=off"),
        "{reason}"
    );
    assert!(console.text().contains("pbtest: hook exited 1"));
    assert_eq!(g.store().campaign_runs(c.id).unwrap().len(), 0);
    // The stop word at a step's boot: stopped, then home (the origin's words), then quiet.
    let halt = step_of("halt");
    let console = g.boot(
        &[
            "pti=off".into(),
            "patchbench.campaign=halt".into(),
            format!("patchbench.step={halt}"),
            "patchbench.via=kexec".into(),
            "patchbench.stop".into(),
        ],
        Duration::from_secs(1200),
    );
    assert!(console.status.success(), "{}", console.tail());
    let text = console.text();
    let boots: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("pbtest: boot "))
        .collect();
    assert_eq!(boots.len(), 2, "the stop boot and home\n{}", console.tail());
    assert!(boots[1].ends_with(&format!(": {origin}")), "{}", boots[1]);
    let c = g.store().campaign("halt").unwrap().unwrap();
    assert_eq!(c.state, CampaignState::Stopped);
    assert!(c
        .state_reason
        .unwrap_or_default()
        .contains("patchbench.stop"));
    assert_eq!(g.store().campaign_runs(c.id).unwrap().len(), 0);
}
