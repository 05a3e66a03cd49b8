//! Loading the next kernel and jumping to it: `kexec_file_load(2)` (falling back to
//! kexec-tools' `kexec -l`), then a clean shutdown into it (`systemctl kexec` when systemd is
//! PID 1, else `sync` and `reboot(LINUX_REBOOT_CMD_KEXEC)`).
//!
//! Nothing here acts without an [`Authority`]: the boot carries the campaign's marker on its
//! command line, or the user confirmed (`--yes` or a terminal). And nothing acts at all while
//! `PATCHBENCH_FORBID_KEXEC` is set in the environment (for shared machines and test suites:
//! a kexec there ends everybody's work).

use crate::record::campaign::spec::BootTarget;
use std::ffi::CString;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::Command;

/// The environment variable that forbids every kexec and reboot.
pub const FORBID_ENV: &str = "PATCHBENCH_FORBID_KEXEC";

/// Why patchbench may load a kernel and reboot this machine now.
#[derive(Debug, Clone)]
pub struct Authority {
    why: String,
}

impl Authority {
    /// The boot's command line carries `patchbench.campaign=NAME` of the campaign in hand.
    pub fn from_boot(campaign: &str, markers: &super::cmdline::Markers) -> Option<Authority> {
        (markers.campaign.as_deref() == Some(campaign)).then(|| Authority {
            why: format!("this boot is a step of campaign {campaign}"),
        })
    }

    /// The user said yes: `--yes`, or an answer on a terminal.
    pub fn confirmed_by_user(how: &str) -> Authority {
        Authority {
            why: format!("confirmed by the user ({how})"),
        }
    }

    pub fn reason(&self) -> &str {
        &self.why
    }
}

/// Refuses when [`FORBID_ENV`] is set.
fn not_forbidden() -> Result<(), String> {
    match std::env::var_os(FORBID_ENV) {
        Some(v) if !v.is_empty() => Err(format!(
            "kexec and reboot are forbidden here ({FORBID_ENV} is set)"
        )),
        _ => Ok(()),
    }
}

/// How a kernel got loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Loader {
    /// `kexec_file_load(2)`.
    FileLoad,
    /// kexec-tools' `kexec -l` (the older `kexec_load(2)`).
    KexecTools,
}

/// Loads `target` as the kernel the next kexec boots: `kexec_file_load`, then kexec-tools.
/// The error names each way tried and why it failed.
pub fn load(target: &BootTarget, _auth: &Authority) -> Result<Loader, String> {
    not_forbidden()?;
    let first = match file_load(target) {
        Ok(()) => return Ok(Loader::FileLoad),
        Err(e) => e,
    };
    match kexec_tools_load(target) {
        Ok(()) => Ok(Loader::KexecTools),
        Err(second) => Err(format!("{first}; {second}")),
    }
}

/// `kexec_file_load(2)`.
fn file_load(target: &BootTarget) -> Result<(), String> {
    let kernel = std::fs::File::open(&target.image)
        .map_err(|e| format!("cannot open {}: {e}", target.image.display()))?;
    let initrd = match &target.initrd {
        Some(p) => {
            Some(std::fs::File::open(p).map_err(|e| format!("cannot open {}: {e}", p.display()))?)
        }
        None => None,
    };
    let cmdline = CString::new(target.cmdline.as_str())
        .map_err(|_| "the command line holds a NUL byte".to_string())?;
    const KEXEC_FILE_NO_INITRAMFS: libc::c_ulong = 0x4;
    let flags = if initrd.is_some() {
        0
    } else {
        KEXEC_FILE_NO_INITRAMFS
    };
    // SAFETY: the descriptors are open for the duration of the call, the command line is a
    // NUL-terminated buffer of the length passed (its NUL included), as the syscall wants.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_kexec_file_load,
            kernel.as_raw_fd(),
            initrd.as_ref().map_or(-1, |f| f.as_raw_fd()),
            cmdline.as_bytes_with_nul().len() as libc::c_ulong,
            cmdline.as_ptr(),
            flags,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    let hint = match e.raw_os_error() {
        Some(libc::EPERM) => {
            " (no CAP_SYS_BOOT, kexec disabled by kernel.kexec_load_disabled, or lockdown)"
        }
        Some(libc::EKEYREJECTED) | Some(libc::EBADMSG) => {
            " (the image's signature was refused: lockdown or secure boot wants a signed image)"
        }
        Some(libc::ENOEXEC) => " (this kernel cannot kexec this image format)",
        Some(libc::ENOSYS) => " (this kernel was built without CONFIG_KEXEC_FILE)",
        _ => "",
    };
    Err(format!("kexec_file_load failed: {e}{hint}"))
}

/// kexec-tools' `kexec -l` (`kexec_load(2)`), when the program is there.
fn kexec_tools_load(target: &BootTarget) -> Result<(), String> {
    let Some(kexec) = kexec_program() else {
        return Err("kexec-tools is not installed (no `kexec` program to fall back to)".into());
    };
    let mut cmd = Command::new(&kexec);
    cmd.arg("-l")
        .arg(&target.image)
        .arg(format!("--command-line={}", target.cmdline));
    if let Some(i) = &target.initrd {
        cmd.arg(format!("--initrd={}", i.display()));
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", kexec.display()))?;
    if out.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&out.stderr);
    Err(format!(
        "`kexec -l` failed ({}): {}",
        out.status,
        text.trim().lines().last().unwrap_or("")
    ))
}

fn kexec_program() -> Option<std::path::PathBuf> {
    ["/usr/sbin/kexec", "/sbin/kexec", "/usr/bin/kexec"]
        .iter()
        .map(std::path::PathBuf::from)
        .find(|p| p.is_file())
}

/// Unloads a loaded kernel (after a jump failed, or the user cancelled the first reboot).
pub fn unload() -> Result<(), String> {
    const KEXEC_FILE_UNLOAD: libc::c_ulong = 0x1;
    // SAFETY: with KEXEC_FILE_UNLOAD the descriptors and the command line are ignored.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_kexec_file_load,
            -1,
            -1,
            0 as libc::c_ulong,
            std::ptr::null::<libc::c_char>(),
            KEXEC_FILE_UNLOAD,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!(
            "cannot unload the kexec kernel: {}",
            std::io::Error::last_os_error()
        ))
    }
}

/// True when systemd runs this boot (PID 1).
pub fn systemd_is_init() -> bool {
    Path::new("/run/systemd/system").is_dir()
}

/// Jumps to the loaded kernel after a clean shutdown: `systemctl kexec` under systemd (this
/// process is then stopped with the rest of the system), else `sync` and
/// `reboot(LINUX_REBOOT_CMD_KEXEC)`. Returns only on failure (or, under systemd, once the
/// shutdown is under way; the caller then just exits).
pub fn jump(_auth: &Authority) -> Result<(), String> {
    not_forbidden()?;
    if systemd_is_init() {
        let out = Command::new("systemctl")
            .arg("kexec")
            .output()
            .map_err(|e| format!("cannot run systemctl kexec: {e}"))?;
        if out.status.success() {
            return Ok(());
        }
        // systemd refused (an old version wanting kexec-tools, say): do it ourselves.
    }
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    // SAFETY: reboot with LINUX_REBOOT_CMD_KEXEC boots the loaded kernel, or fails with errno.
    let rc = unsafe { libc::reboot(libc::LINUX_REBOOT_CMD_KEXEC) };
    let e = std::io::Error::last_os_error();
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("reboot(LINUX_REBOOT_CMD_KEXEC) failed: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_loaded_or_rebooted_while_forbidden() {
        // The test suite runs with the variable set (see .cargo/config.toml): make sure.
        std::env::set_var(FORBID_ENV, "1");
        let auth = Authority::confirmed_by_user("a test");
        let t = BootTarget {
            image: "/nonexistent".into(),
            initrd: None,
            cmdline: String::new(),
        };
        assert!(load(&t, &auth).unwrap_err().contains(FORBID_ENV));
        assert!(jump(&auth).unwrap_err().contains(FORBID_ENV));
    }

    #[test]
    fn only_the_campaigns_own_marker_gives_authority() {
        let m = super::super::cmdline::Markers::parse("root=/dev/sda patchbench.campaign=a");
        assert!(Authority::from_boot("a", &m).is_some());
        assert!(Authority::from_boot("b", &m).is_none());
        let none = super::super::cmdline::Markers::parse("root=/dev/sda");
        assert!(Authority::from_boot("a", &none).is_none());
    }
}
