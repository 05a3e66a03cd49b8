//! The QEMU command of one guest, word for word (it is recorded with the run): no default
//! devices or user config, no display, no reboot (a panic with `panic=-1` ends QEMU), the
//! console on the serial port to standard output, the accelerator and CPU model, vCPUs and
//! memory, the side's kernel with our initramfs, and the kernel command line (ours, then the
//! side's words, so a side's word wins where both set one); the host's `/` exported read-only
//! over 9p and the step's result directory read-write; for a duet, a virtio-serial port whose
//! other end is the host's barrier socket.

use super::accel::Accel;
use super::init_script::{BARRIER_PORT, RESULT_TAG, ROOT_TAG};
use std::path::{Path, PathBuf};

/// The kernel command-line word that carries the step's identity.
pub const STEP_WORD: &str = "patchbench.step";

/// One guest to start.
pub struct Guest<'a> {
    pub qemu: &'a Path,
    pub accel: Accel,
    pub vcpus: u32,
    pub memory_mib: u64,
    pub kernel: &'a Path,
    pub initramfs: &'a Path,
    pub step_id: i64,
    /// The side's words.
    pub side_words: &'a [String],
    pub result_dir: &'a Path,
    /// The host end of the barrier port (a unix socket QEMU connects to), for a duet.
    pub barrier: Option<PathBuf>,
}

/// The words patchbench puts on every guest's command line, before the side's.
pub fn our_words(step_id: i64) -> Vec<String> {
    vec![
        "console=ttyS0".into(),
        "panic=-1".into(),
        "quiet".into(),
        "rdinit=/init".into(),
        format!("{STEP_WORD}={step_id}"),
    ]
}

/// QEMU's `-fsdev` path option, with commas doubled as QEMU's option syntax asks.
fn option_path(p: &Path) -> String {
    p.display().to_string().replace(',', ",,")
}

impl Guest<'_> {
    /// The kernel command line.
    pub fn cmdline(&self) -> String {
        let mut words = our_words(self.step_id);
        words.extend(self.side_words.iter().cloned());
        words.join(" ")
    }

    /// The command, program first.
    pub fn argv(&self) -> Vec<String> {
        let mut a: Vec<String> = vec![self.qemu.display().to_string()];
        let mut add = |words: &[&str]| a.extend(words.iter().map(|w| w.to_string()));
        add(&[
            "-name",
            &format!("patchbench-step-{}", self.step_id),
            "-nodefaults",
            "-no-user-config",
            "-display",
            "none",
            "-no-reboot",
            "-machine",
            "q35",
        ]);
        add(&self.accel.qemu_args());
        add(&[
            "-smp",
            &self.vcpus.to_string(),
            "-m",
            &format!("{}M", self.memory_mib),
            "-serial",
            "stdio",
            "-kernel",
            &self.kernel.display().to_string(),
            "-initrd",
            &self.initramfs.display().to_string(),
            "-append",
            &self.cmdline(),
            "-fsdev",
            "local,id=root,path=/,readonly=on,security_model=none,multidevs=remap",
            "-device",
            &format!("virtio-9p-pci,fsdev=root,mount_tag={ROOT_TAG}"),
            "-fsdev",
            &format!(
                "local,id=result,path={},security_model=none",
                option_path(self.result_dir)
            ),
            "-device",
            &format!("virtio-9p-pci,fsdev=result,mount_tag={RESULT_TAG}"),
        ]);
        if let Some(sock) = &self.barrier {
            add(&[
                "-device",
                "virtio-serial-pci",
                "-chardev",
                &format!("socket,id=barrier,path={}", option_path(sock)),
                "-device",
                &format!("virtserialport,chardev=barrier,name={BARRIER_PORT}"),
            ]);
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_carries_the_guest_and_the_side_words_last() {
        let words = vec!["pti=off".to_string(), "rdinit=/bin/false".to_string()];
        let g = Guest {
            qemu: Path::new("/usr/bin/qemu-system-x86_64"),
            accel: Accel::Tcg,
            vcpus: 2,
            memory_mib: 1024,
            kernel: Path::new("/k/vmlinuz"),
            initramfs: Path::new("/p/initramfs.cpio"),
            step_id: 12,
            side_words: &words,
            result_dir: Path::new("/p/step,12"),
            barrier: Some(PathBuf::from("/p/barrier.sock")),
        };
        let argv = g.argv();
        let after = |flag: &str| {
            argv.iter()
                .position(|w| w == flag)
                .map(|i| argv[i + 1].clone())
                .unwrap()
        };
        assert_eq!(argv[0], "/usr/bin/qemu-system-x86_64");
        assert_eq!(after("-smp"), "2");
        assert_eq!(after("-m"), "1024M");
        assert_eq!(after("-accel"), "tcg");
        assert!(argv.contains(&"-no-reboot".to_string()));
        let cmdline = after("-append");
        assert!(cmdline.starts_with("console=ttyS0 panic=-1"), "{cmdline}");
        assert!(cmdline.contains("patchbench.step=12"));
        assert!(cmdline.ends_with("pti=off rdinit=/bin/false"), "{cmdline}");
        assert!(argv.iter().any(|w| w.contains("path=/p/step,,12")));
        assert!(argv.iter().any(|w| w.contains("path=/,readonly=on")));
        assert!(argv.iter().any(|w| w.contains("name=patchbench.barrier")));
    }
}
