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
//! - Faults that need a kernel's real state (lockdown refusing an unsigned image, kexec
//!   disabled), checked in a guest booted with `lockdown=integrity`.
//! - On the host, without changing anything: no CAP_SYS_BOOT, a store on a tmpfs, a missing
//!   initrd or modules, no --yes without a terminal, no systemd for install-hook, and a boot
//!   hook that does nothing at a boot that is no step.

mod common;
#[path = "common/test_kernel.rs"]
mod test_kernel;

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
const WORKLOAD: &str =
    "run syscall --duration 0.5 --passes 1 --no-settle --copies 1 --dir /tmp";

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
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "kexec-{name}-{}",
            std::process::id()
        ));
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
        Store::open(&self.shared.join("store.db"), false).unwrap()
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
        assert!(words.contains(&step_word.as_str()), "{}", info.kernel.cmdline);
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
        .filter(|l| l.starts_with("pbtest: boot "))
        .last()
        .unwrap();
    assert!(!last_boot.contains("patchbench.campaign"), "{last_boot}");
    assert!(!last_boot.contains("pti="), "{last_boot}");
    assert!(text.contains("pbtest: hook exited 0"));
    assert!(
        text.lines().last().is_some_and(|l| l.contains("Power down")),
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
        gaps.iter().map(|g| (g * 10.0).round() / 10.0).collect::<Vec<_>>()
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
    assert!(shown.contains("failed") && shown.contains("patched-vmlinuz"), "{shown}");
}
