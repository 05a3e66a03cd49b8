//! Which accelerator a guest runs under: KVM when this machine's KVM can boot a stock kernel,
//! else TCG (QEMU's emulator) when the user allowed it, else a refusal. KVM is usable when
//! `/dev/kvm` opens read-write, answers the API version 12, and is backed by `kvm_intel` or
//! `kvm_amd`; a PVM host (`kvm_pvm`, a paravirtual KVM for nested clouds) is not, since a stock
//! kernel never gets past its decompressor there. TCG times an emulated CPU: its numbers say
//! nothing about a kernel's speed, so it is refused unless `--allow-tcg`, and recorded.

use std::os::fd::AsRawFd;
use std::path::Path;

/// The accelerator of a guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accel {
    Kvm,
    Tcg,
}

impl Accel {
    pub fn as_str(self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
        }
    }

    /// QEMU's words for it: the accelerator and the CPU model (the host's CPU under KVM, every
    /// feature TCG emulates under TCG).
    pub fn qemu_args(self) -> [&'static str; 4] {
        match self {
            Accel::Kvm => ["-accel", "kvm", "-cpu", "host"],
            Accel::Tcg => ["-accel", "tcg", "-cpu", "max"],
        }
    }
}

/// `KVM_GET_API_VERSION` (`_IO(0xAE, 0x00)`).
const KVM_GET_API_VERSION: libc::c_ulong = 0xAE00;

/// Why KVM cannot run a stock kernel here (`sys`: the sysfs root, `dev`: the device), or None
/// when it can.
pub fn kvm_unusable(sys: &Path, dev: &Path) -> Option<String> {
    let shown = dev.display();
    let file = match std::fs::OpenOptions::new().read(true).write(true).open(dev) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Some(format!("there is no {shown} (no KVM on this machine)"))
        }
        Err(e) => {
            return Some(format!(
                "cannot open {shown} ({e}; a user in the kvm group may)"
            ))
        }
    };
    // SAFETY: an ioctl without arguments on a descriptor we own.
    let version = unsafe { libc::ioctl(file.as_raw_fd(), KVM_GET_API_VERSION as _, 0) };
    if version != 12 {
        return Some(format!("{shown} answers KVM API version {version}, not 12"));
    }
    let module = |m: &str| sys.join("module").join(m).exists();
    if module("kvm_pvm") {
        return Some(format!(
            "{shown} is a PVM host (kvm_pvm), where a stock kernel does not boot"
        ));
    }
    if !module("kvm_intel") && !module("kvm_amd") {
        return Some("neither kvm_intel nor kvm_amd is loaded".to_string());
    }
    None
}

/// The accelerator for this machine: KVM when usable; else TCG if `allow_tcg` (with the reason
/// KVM was not used); else the one-line refusal.
pub fn choose(allow_tcg: bool) -> Result<(Accel, Option<String>), String> {
    choose_with(
        kvm_unusable(Path::new("/sys"), Path::new("/dev/kvm")),
        allow_tcg,
    )
}

fn choose_with(
    unusable: Option<String>,
    allow_tcg: bool,
) -> Result<(Accel, Option<String>), String> {
    match unusable {
        None => Ok((Accel::Kvm, None)),
        Some(why) if allow_tcg => Ok((Accel::Tcg, Some(why))),
        Some(why) => Err(format!(
            "KVM is not usable here: {why}; QEMU's emulator (TCG) would time an emulated CPU, \
             not the kernel; pass --allow-tcg to run the guests under TCG anyway"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_device_or_a_pvm_host_is_not_usable() {
        let d = tempfile::tempdir().unwrap();
        let why = kvm_unusable(d.path(), &d.path().join("kvm")).unwrap();
        assert!(why.contains("no KVM"), "{why}");
        // A file that is not the KVM device answers no API version.
        let fake = d.path().join("fake-kvm");
        std::fs::write(&fake, "").unwrap();
        let why = kvm_unusable(d.path(), &fake).unwrap();
        assert!(why.contains("API version"), "{why}");
    }

    #[test]
    fn this_machines_kvm_is_judged_by_its_modules() {
        // Whatever this machine has, the answer agrees with its modules.
        let sys = Path::new("/sys/module");
        let answer = kvm_unusable(Path::new("/sys"), Path::new("/dev/kvm"));
        if sys.join("kvm_pvm").exists() {
            assert!(answer.as_deref().unwrap_or("").contains("PVM"));
        }
        if answer.is_none() {
            assert!(sys.join("kvm_intel").exists() || sys.join("kvm_amd").exists());
        }
    }

    #[test]
    fn tcg_only_when_allowed() {
        assert_eq!(choose_with(None, false).unwrap().0, Accel::Kvm);
        let (a, why) = choose_with(Some("no KVM".into()), true).unwrap();
        assert_eq!((a, why.as_deref()), (Accel::Tcg, Some("no KVM")));
        let e = choose_with(Some("no KVM".into()), false).unwrap_err();
        assert!(e.contains("--allow-tcg") && e.contains("no KVM"), "{e}");
        assert_eq!(Accel::Tcg.qemu_args()[1], "tcg");
    }
}
