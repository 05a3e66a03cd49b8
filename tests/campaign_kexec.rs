//! The kexec executor, for real, inside one QEMU guest under TCG (Debian's kernel, unpacked;
//! the host's root shared read-only, a writable shared directory holding the store). Nothing
//! here loads a kernel on the machine running the tests: the kernel loads and jumps happen in
//! the guest, and every patchbench started on the host runs with `PATCHBENCH_FORBID_KEXEC`.
//!
//! - A campaign of one round, `pti=off` against `pti=on` on the same image, started by the
//!   guest's first boot: 2 kexec boots each run their step through `campaign resume --boot`,
//!   the store holds 2 runs with the command lines read inside, and the last jump returns to
//!   the first boot's kernel and command line, where the hook does nothing and the guest
//!   powers off.
//! - Faults that need a kernel's real state (lockdown refusing an unsigned image, kexec
//!   disabled), checked in a guest booted with `lockdown=integrity`.
//!
//! Those two are the only guests. The failure paths run on the host against a recording fake
//! of the machine (`FakeMachine`, a `kexec::machine::Machine`: it records the loads and jumps,
//! plays the next boot and scripts the steps) through the boot hook's own code (`BootRun`,
//! with the markers of the command line the fake booted, the kexec executor, the driver):
//! - The next step's image missing: the campaign fails with the reason and the machine stays
//!   on the kernel it booted (no further load or jump).
//! - The hook never loops: a step that fails twice (each time in a kexec boot of its own), or
//!   a boot carrying a step's marker without its side's words, fails the campaign where it
//!   stands; `patchbench.stop` on a step's command line stops it and returns home.
//! - On the host, without changing anything: no CAP_SYS_BOOT, a store on a tmpfs, a missing
//!   initrd or modules, no --yes without a terminal, no systemd for install-hook, and a boot
//!   hook that does nothing at a boot that is no step.

mod common;

use common::test_kernel;

use patchbench::campaign::executor::Executor;
use patchbench::campaign::kexec::boot::BootRun;
use patchbench::campaign::kexec::cmdline::Markers;
use patchbench::campaign::kexec::load::{Authority, Loader};
use patchbench::campaign::kexec::machine::Machine;
use patchbench::campaign::scripted::{Act, Scripted};
use patchbench::campaign::vm::accel::Accel;
use patchbench::campaign::vm::checks::ROOT_MODULES;
use patchbench::campaign::vm::host_tools;
use patchbench::campaign::vm::initramfs::{self, Contents};
use patchbench::campaign::vm::modules::ModuleIndex;
use patchbench::campaign::vm::qemu::Guest;
use patchbench::record::campaign::spec::BootTarget;
use patchbench::record::campaign::state::CampaignState;
use patchbench::record::campaign::KernelInfo;
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
            "{pb} campaign start {name} --executor kexec --order abba --rounds 1 --yes \
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

/// The bar: one round × 2 sides across 2 kexec boots in one guest, then home, then power off
/// (the one real kexec chain: more rounds are more of the same boots).
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
        4,
        "first boot, 2 step boots, the return home\n{}",
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
    assert_eq!(runs.len(), 2, "one run per step");
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

/// Copies a kernel image to `to` with its version string's release changed (same length, its
/// flavour after the last `-` replaced by `x`s), so that no `/lib/modules/<release>` of the
/// host can be its modules.
fn copy_with_a_release_no_host_has(from: &Path, to: &Path) {
    let mut bytes = std::fs::read(from).unwrap();
    let at = u16::from_le_bytes([bytes[0x20E], bytes[0x20F]]) as usize + 0x200;
    let len = bytes[at..]
        .iter()
        .position(|&b| b == b' ' || b == 0)
        .unwrap();
    let release = String::from_utf8(bytes[at..at + len].to_vec()).unwrap();
    let cut = release.rfind('-').map_or(0, |i| i + 1);
    let fake = format!("{}{}", &release[..cut], "x".repeat(release.len() - cut));
    assert!(
        !Path::new("/lib/modules").join(&fake).exists(),
        "/lib/modules/{fake} exists"
    );
    bytes[at..at + len].copy_from_slice(fake.as_bytes());
    std::fs::write(to, bytes).unwrap();
    let info = patchbench::campaign::kernel_image::inspect(to).unwrap();
    assert_eq!(info.release, fake);
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
    // An image whose modules are nowhere: a copy away from its lib/modules, of a release no
    // host has installed (a kernel developer's host may well have Debian's in /lib/modules).
    let lone = dir.path().join("boot");
    std::fs::create_dir(&lone).unwrap();
    let lone_image = lone.join(k.image.file_name().unwrap());
    copy_with_a_release_no_host_has(&k.image, &lone_image);
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
        // The image's own (a step's boot checks it), or a placeholder for an image that is
        // not there.
        sha256: patchbench::campaign::kernel_image::sha256_file(image)
            .unwrap_or_else(|_| "0".repeat(64)),
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

/// The release the fake machine's images boot (as their boot headers would say).
const FAKE_RELEASE: &str = "6.1.0-99-fake";

/// The command line the fake machine's first boot has, and a campaign returns to.
const ORIGIN: &str = "console=ttyS0 panic=-1 quiet rdinit=/init";

/// A load or a jump the fake machine was asked for.
#[derive(Debug, Clone, PartialEq)]
enum Call {
    Load { image: PathBuf, cmdline: String },
    Jump,
    Unload,
}

/// A recording fake of the machine a kexec campaign's boots act on
/// (`patchbench::campaign::kexec::machine::Machine`): each load and jump is recorded, a jump
/// makes the loaded image and command line the next boot's, and [`FakeMachine::boots`] runs
/// the boot hook's own code (`BootRun::at_boot`, what `campaign resume --boot` runs) at each
/// boot until one does not jump. A step is the scripted executor's (it measures, or fails on
/// the side `failing` names), wrapped by the kexec executor as a real boot's local step is,
/// so its run is recorded on the boot the fake says this is. Nothing is loaded and nothing
/// reboots: the real chain is
/// `a_campaign_runs_each_step_in_a_kexec_boot_of_its_own_and_returns_home`.
struct FakeMachine {
    /// This boot: its kernel's release and command line.
    now: KernelInfo,
    loaded: Option<BootTarget>,
    jumped: bool,
    calls: Vec<Call>,
    /// The side whose steps fail.
    failing: Option<String>,
    /// The steps run, every boot's.
    steps: patchbench::campaign::scripted::Log,
}

/// What a failing scripted step says (a real step of a side whose setup is `false` says
/// "the side's setup command failed (the step's shell exited 3)").
const SETUP_FAILED: &str = "the side's setup command failed (scripted)";

impl Machine for FakeMachine {
    fn kernel(&self) -> KernelInfo {
        self.now.clone()
    }

    fn step_executor(&mut self) -> anyhow::Result<Box<dyn Executor>> {
        let failing = self.failing.clone();
        Ok(Box::new(
            Scripted::new(move |req| {
                if failing.as_deref() == Some(req.side.name.as_str()) {
                    Act::fail(SETUP_FAILED)
                } else {
                    Act::measure(1000.0)
                }
            })
            .with_log(self.steps.clone()),
        ))
    }

    fn load(&mut self, target: &BootTarget, _auth: &Authority) -> Result<Loader, String> {
        // As kexec_file_load: the image and initrd must open.
        for file in std::iter::once(&target.image).chain(&target.initrd) {
            std::fs::File::open(file)
                .map_err(|e| format!("cannot open {}: {e}", file.display()))?;
        }
        self.calls.push(Call::Load {
            image: target.image.clone(),
            cmdline: target.cmdline.clone(),
        });
        self.loaded = Some(target.clone());
        Ok(Loader::FileLoad)
    }

    fn jump(&mut self, _auth: &Authority) -> Result<(), String> {
        let target = self.loaded.take().ok_or("no kernel is loaded")?;
        self.calls.push(Call::Jump);
        self.now = KernelInfo {
            release: FAKE_RELEASE.to_string(),
            cmdline: target.cmdline,
            ..Default::default()
        };
        self.jumped = true;
        Ok(())
    }

    fn unload(&mut self) -> Result<(), String> {
        self.calls.push(Call::Unload);
        self.loaded = None;
        Ok(())
    }
}

/// One boot the fake machine played: its command line and the hook's exit status there.
#[derive(Debug)]
struct FakeBoot {
    cmdline: String,
    hook_exit: i32,
}

impl FakeMachine {
    /// A machine booted with `cmdline` on [`FAKE_RELEASE`]. This test process is forbidden
    /// to load a kernel or reboot from then on: should any path reach the real machine
    /// instead of the fake, it is refused, never carried out on the host.
    fn booted(cmdline: &str) -> FakeMachine {
        std::env::set_var(patchbench::campaign::kexec::load::FORBID_ENV, "1");
        FakeMachine {
            now: KernelInfo {
                release: FAKE_RELEASE.to_string(),
                cmdline: cmdline.to_string(),
                ..Default::default()
            },
            loaded: None,
            jumped: false,
            calls: Vec::new(),
            failing: None,
            steps: Default::default(),
        }
    }

    fn run<'a>(
        &'a mut self,
        signals: &'a patchbench::proc::signals::Signals,
        progress: &'a mut patchbench::progress::Progress,
    ) -> BootRun<'a> {
        BootRun {
            signals,
            progress,
            markers: Markers::parse(&self.now.cmdline),
            machine: self,
        }
    }

    /// `campaign start`'s first reboot of stored campaign `name`, confirmed, at once.
    fn first_jump(&mut self, store: &Path, name: &str) -> i32 {
        let signals = patchbench::proc::signals::Signals::install().unwrap();
        let mut progress = patchbench::progress::Progress::hidden();
        let auth = Authority::confirmed_by_user("a test");
        self.run(&signals, &mut progress)
            .first_jump(common::open_store(store), name, auth, 0.0)
            .unwrap()
    }

    /// Boots while the last boot jumped: `before(boot number)` first (as a boot script
    /// would), then the boot hook's part on `store`; each boot played.
    fn boots(&mut self, store: &Path, mut before: impl FnMut(usize)) -> Vec<FakeBoot> {
        let signals = patchbench::proc::signals::Signals::install().unwrap();
        let mut progress = patchbench::progress::Progress::hidden();
        let mut played = Vec::new();
        while std::mem::take(&mut self.jumped) {
            before(played.len());
            let cmdline = self.now.cmdline.clone();
            let hook_exit = self
                .run(&signals, &mut progress)
                .at_boot(common::open_store(store))
                .unwrap();
            eprintln!(
                "fake boot {}: {cmdline:?}: hook exited {hook_exit}",
                played.len()
            );
            played.push(FakeBoot { cmdline, hook_exit });
        }
        played
    }

    /// The command lines the machine was asked to boot, in order.
    fn loaded_cmdlines(&self) -> Vec<&str> {
        self.calls
            .iter()
            .filter_map(|c| match c {
                Call::Load { cmdline, .. } => Some(cmdline.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// A kexec campaign of one round for the fake machine, stored in `store`: `pti=off` against
/// `pti=on`, each side on an image file of its own in `dir` (any bytes: the fake boots it by
/// name, the step's boot checks its SHA-256), returning to a third with [`ORIGIN`].
fn fake_campaign(
    dir: &Path,
    store: &Path,
    name: &str,
    patched_setup: Option<&str>,
) -> (PathBuf, PathBuf) {
    use patchbench::record::campaign::plan;
    use patchbench::record::campaign::spec::Order;
    let image = |side: &str| {
        let p = dir.join(format!("vmlinuz-{name}-{side}"));
        std::fs::write(&p, format!("the {side} kernel of {name}")).unwrap();
        p
    };
    let (base, patched, home) = (image("base"), image("patched"), image("home"));
    let mut spec = kexec_spec(name, &base, FAKE_RELEASE, None, ORIGIN);
    spec.kexec.as_mut().unwrap().return_to.image = home;
    let k = spec.sides[1].kernel.as_mut().unwrap();
    k.image = patched.clone();
    k.sha256 = patchbench::campaign::kernel_image::sha256_file(&patched).unwrap();
    spec.sides[1].setup = patched_setup.map(str::to_string);
    let mut s = if store.exists() {
        common::open_store(store)
    } else {
        common::create_store(store)
    };
    s.create_campaign(&spec, 1, &plan::steps(Order::Abba, 1, 1, 1))
        .unwrap();
    (base, patched)
}

/// The next step's image is gone: the campaign fails with the reason, no further boot.
/// (Against the recording fake.)
#[test]
fn a_missing_next_image_fails_the_campaign_and_the_machine_stays_on_its_kernel() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let store = dir.path().join("store.db");
    let (base, patched) = fake_campaign(dir.path(), &store, "gone", None);
    let mut m = FakeMachine::booted(ORIGIN);
    assert_eq!(m.first_jump(&store, "gone"), 0);
    // Round 1's base boots, and its image is removed before its hook runs.
    let boots = m.boots(&store, |_| {
        let _ = std::fs::remove_file(&patched);
    });
    assert_eq!(
        boots.len(),
        1,
        "round 1's base, then no more (the first boot is the start's): {boots:?}"
    );
    assert!(boots[0].cmdline.contains("pti=off"), "{boots:?}");
    assert_eq!(boots[0].hook_exit, 1);
    assert_eq!(
        m.calls.iter().filter(|c| **c == Call::Jump).count(),
        1,
        "only the start's jump: {:?}",
        m.calls
    );
    assert!(matches!(&m.calls[0], Call::Load { image, .. } if *image == base));
    let c = failed_saying(
        &common::open_store(&store),
        "gone",
        &["vmlinuz-gone-patched", "gone"],
    );
    let runs = common::open_store(&store).campaign_runs(c.id).unwrap();
    assert_eq!(runs.len(), 1, "base ran");
    let info = runs[0].1.campaign.as_ref().unwrap();
    assert_eq!(
        (info.side.as_str(), info.executor.as_str()),
        ("base", "kexec")
    );
    assert_eq!(info.kernel.release, FAKE_RELEASE);
    assert!(info.kernel.cmdline.contains("pti=off"));
    let status = common::patchbench()
        .args(["campaign", "status", "gone", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&status.stdout);
    assert!(
        shown.contains("failed") && shown.contains("vmlinuz-gone-patched"),
        "{shown}"
    );
}

/// The hook never loops: a step whose setup fails is retried in a kexec boot of its own, then
/// the campaign fails and the machine stays on the kernel it booted. (Against the recording
/// fake, whose patched steps fail as a failing setup does.)
#[test]
fn a_step_that_fails_twice_ends_the_campaign_on_its_kernel() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let store = dir.path().join("store.db");
    fake_campaign(dir.path(), &store, "twice", Some("false"));
    let mut m = FakeMachine::booted(ORIGIN);
    m.failing = Some("patched".to_string());
    assert_eq!(m.first_jump(&store, "twice"), 0);
    let boots = m.boots(&store, |_| {});
    // Round 1's base, then round 1's patched twice; no more.
    assert_eq!(boots.len(), 3, "{boots:?}");
    assert_eq!(
        m.calls.iter().filter(|c| **c == Call::Jump).count(),
        3,
        "{:?}",
        m.calls
    );
    let s = common::open_store(&store);
    let c = failed_saying(
        &s,
        "twice",
        &[
            "round 1 patched failed twice in a row",
            "setup command failed",
        ],
    );
    let steps = s.steps(c.id).unwrap();
    let patched = steps
        .iter()
        .find(|s| s.side == "patched" && s.round == 1)
        .unwrap();
    assert_eq!(patched.attempts, 2);
    assert_eq!(
        s.campaign_runs(c.id).unwrap().len(),
        1,
        "only base was stored"
    );
    let last = boots.last().unwrap();
    assert!(last.cmdline.contains("pti=on"), "{last:?}");
    assert_eq!(last.hook_exit, 1);
    // Both patched boots were for the same step: the retry, not a next one, each attempt in
    // a boot of its own.
    let loads = m.loaded_cmdlines();
    assert_eq!(loads.len(), 3, "{loads:?}");
    assert_eq!(loads[1], loads[2], "{loads:?}");
    let ran: Vec<(String, u32)> = m
        .steps
        .lock()
        .unwrap()
        .iter()
        .map(|r| (r.side.clone(), r.attempt))
        .collect();
    assert_eq!(
        ran,
        [
            ("base".to_string(), 1),
            ("patched".to_string(), 1),
            ("patched".to_string(), 2)
        ]
    );
}

/// A boot that carries a step's marker but not its side's words fails the campaign without a
/// jump; `patchbench.stop` on a step's command line ends a campaign and returns home.
/// (Against the recording fake.)
#[test]
fn a_boot_with_the_wrong_words_fails_and_the_stop_word_returns_home() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let store = dir.path().join("store.db");
    for name in ["wrong", "halt"] {
        fake_campaign(dir.path(), &store, name, None);
    }
    let step_of = |name: &str| {
        let s = common::open_store(&store);
        let c = s.campaign(name).unwrap().unwrap();
        s.steps(c.id).unwrap()[0].id
    };
    // Round 1's base wants pti=off; this boot has pti=on.
    let wrong = step_of("wrong");
    let mut m = FakeMachine::booted(&format!(
        "{ORIGIN} pti=on patchbench.campaign=wrong patchbench.step={wrong} patchbench.via=kexec"
    ));
    m.jumped = true;
    let boots = m.boots(&store, |_| {});
    assert_eq!(boots.len(), 1, "no jump: {boots:?}");
    assert!(m.calls.is_empty(), "nothing loaded: {:?}", m.calls);
    let c = common::open_store(&store)
        .campaign("wrong")
        .unwrap()
        .unwrap();
    assert_eq!(c.state, CampaignState::Failed);
    let reason = c.state_reason.unwrap_or_default();
    assert!(
        reason.contains("not the expected one") && reason.contains("pti=off"),
        "{reason}"
    );
    assert_eq!(boots[0].hook_exit, 1);
    assert_eq!(
        common::open_store(&store)
            .campaign_runs(c.id)
            .unwrap()
            .len(),
        0
    );
    // The stop word at a step's boot: stopped, then home (the origin's words), then quiet.
    let halt = step_of("halt");
    let mut m = FakeMachine::booted(&format!(
        "{ORIGIN} pti=off patchbench.campaign=halt patchbench.step={halt} patchbench.via=kexec \
         patchbench.stop"
    ));
    m.jumped = true;
    let boots = m.boots(&store, |_| {});
    assert_eq!(boots.len(), 2, "the stop boot and home: {boots:?}");
    assert_eq!(boots[1].cmdline, ORIGIN, "{boots:?}");
    assert!(boots.iter().all(|b| b.hook_exit == 0), "{boots:?}");
    assert!(
        matches!(&m.calls[0], Call::Load { image, .. } if image.ends_with("vmlinuz-halt-home")),
        "{:?}",
        m.calls
    );
    let c = common::open_store(&store)
        .campaign("halt")
        .unwrap()
        .unwrap();
    assert_eq!(c.state, CampaignState::Stopped);
    assert!(c
        .state_reason
        .unwrap_or_default()
        .contains("patchbench.stop"));
    assert_eq!(
        common::open_store(&store)
            .campaign_runs(c.id)
            .unwrap()
            .len(),
        0
    );
}

/// Campaign `name` failed, its reason saying each of `says` and that the machine stays on its
/// kernel.
fn failed_saying(
    s: &patchbench::store::db::Store,
    name: &str,
    says: &[&str],
) -> patchbench::record::campaign::state::Campaign {
    let c = s.campaign(name).unwrap().unwrap();
    assert_eq!(c.state, CampaignState::Failed);
    let reason = c.state_reason.clone().unwrap_or_default();
    let stays = format!("stays on {FAKE_RELEASE}");
    assert!(
        says.iter().all(|w| reason.contains(w)) && reason.contains(&stays),
        "{reason}"
    );
    c
}
