//! What a kexec campaign checks before anything is changed: that this process may load and
//! boot a kernel (CAP_SYS_BOOT, `kernel.kexec_load_disabled`, lockdown against an unsigned
//! image), that every side's image has an initrd and modules, that the kernel to return to is
//! known, and that the store lives on a file system that survives a reboot. Each failure is one
//! line saying what is wrong and what to do.

use crate::campaign::{kernel_image, side_kernel};
use crate::record::campaign::spec::{BootTarget, KernelSpec};
use std::path::{Path, PathBuf};

/// Bit of CAP_SYS_BOOT in the capability sets.
const CAP_SYS_BOOT: u32 = 22;

/// statfs f_type of a ramfs.
const RAMFS_MAGIC: u32 = 0x8584_58f6;

/// Where the lockdown state is shown (securityfs).
pub const LOCKDOWN: &str = "/sys/kernel/security/lockdown";

/// The machine lets this process kexec: CAP_SYS_BOOT in its effective set, and kexec not
/// disabled for this boot.
pub fn may_kexec() -> Result<(), String> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| format!("cannot read /proc/self/status: {e}"))?;
    let eff = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .ok_or_else(|| "cannot read this process's capabilities".to_string())?;
    if eff & (1 << CAP_SYS_BOOT) == 0 {
        return Err(
            "a kexec campaign boots kernels, which needs CAP_SYS_BOOT: run it as root (sudo)"
                .to_string(),
        );
    }
    let disabled = std::fs::read_to_string("/proc/sys/kernel/kexec_load_disabled")
        .map(|s| s.trim() == "1")
        .unwrap_or(false);
    if disabled {
        return Err(
            "kexec is disabled on this boot (kernel.kexec_load_disabled = 1, which only a \
             reboot clears): boot without whatever sets it, or use --executor vm"
                .to_string(),
        );
    }
    Ok(())
}

/// The lockdown mode in force: `none`, `integrity` or `confidentiality` (the bracketed word
/// of the lockdown file); None when the kernel has no lockdown.
pub fn lockdown_mode() -> Option<String> {
    let text = std::fs::read_to_string(LOCKDOWN).ok()?;
    let start = text.find('[')?;
    let end = text[start..].find(']')? + start;
    Some(text[start + 1..end].to_string())
}

/// Under lockdown the kernel boots only signed images: refuses an unsigned one.
pub fn signed_if_locked_down(image: &Path, mode: Option<&str>) -> Result<(), String> {
    let Some(mode) = mode.filter(|m| *m != "none") else {
        return Ok(());
    };
    if kernel_image::is_signed(image)? {
        return Ok(());
    }
    Err(format!(
        "this kernel is locked down ({mode}, {LOCKDOWN}) and kexec boots only signed images, \
         but {} carries no signature: sign it (sbsign) with a key the kernel trusts, or boot \
         with lockdown off",
        image.display()
    ))
}

/// Checks a side's kernel for a kexec boot: an initrd (given, or `boot/initrd.img-<release>`
/// beside the image; `--SIDE-initrd none` for a kernel that needs none) and its modules
/// (found by the campaign, or installed in `/lib/modules/<release>`). Fills in the initrd found.
pub fn side_kernel(side: &str, k: &mut KernelSpec) -> Result<(), String> {
    side_kernel_built(side, k, false)
}

/// [`side_kernel`]; for a kernel patchbench built (`built`), modules are needed only when it
/// has them (a config without CONFIG_MODULES has none), and they are installed later
/// (`super::modules`).
pub fn side_kernel_built(side: &str, k: &mut KernelSpec, built: bool) -> Result<(), String> {
    match k.initrd.as_deref() {
        Some(p) if p == Path::new("none") => k.initrd = None,
        Some(_) => {}
        None => match initrd_beside(&k.image, &k.release) {
            Some(found) => k.initrd = Some(found),
            None => {
                return Err(format!(
                    "the {side} image {} has no initrd (no initrd.img-{} beside it): give \
                     --{side}-initrd FILE (e.g. made by `update-initramfs -c -k {}`), or \
                     --{side}-initrd none for a kernel that needs none",
                    k.image.display(),
                    k.release,
                    k.release
                ))
            }
        },
    }
    if built {
        return Ok(());
    }
    if k.modules.is_none() {
        let installed = side_kernel::installed_modules(&k.release);
        if let Some(dir) = side_kernel::installed_modules_if_any(&k.release) {
            k.modules = Some(dir);
        } else {
            return Err(format!(
                "the {side} image {} ({}) has no modules: install them in {} (make \
                 modules_install) or give --{side}-modules DIR",
                k.image.display(),
                k.release,
                installed.display()
            ));
        }
    }
    Ok(())
}

/// `boot/initrd.img-<release>` beside the image.
fn initrd_beside(image: &Path, release: &str) -> Option<PathBuf> {
    let dir = image.parent()?;
    [
        format!("initrd.img-{release}"),
        format!("initramfs-{release}.img"),
    ]
    .iter()
    .map(|n| dir.join(n))
    .find(|p| p.is_file())
}

/// The kernel the campaign returns to at its end: `--return-to IMAGE` (with `--return-initrd`),
/// else the running kernel's installed image and its initrd; with this boot's
/// command line less patchbench's words.
pub fn return_target(
    image: Option<&Path>,
    initrd: Option<&Path>,
    running_release: &str,
    cmdline: &str,
) -> Result<BootTarget, String> {
    let (image, release) = match image {
        Some(i) => {
            let info = kernel_image::inspect(i)?;
            (i.to_path_buf(), info.release)
        }
        None => {
            let p = side_kernel::installed_image(running_release);
            if !p.is_file() {
                return Err(format!(
                    "the campaign returns to the running kernel at its end, but its image {} \
                     does not exist: give --return-to IMAGE (and --return-initrd FILE)",
                    p.display()
                ));
            }
            (p, running_release.to_string())
        }
    };
    let initrd = match initrd {
        Some(p) if p == Path::new("none") => None,
        Some(p) => {
            std::fs::File::open(p)
                .map_err(|e| format!("cannot read the --return-initrd {}: {e}", p.display()))?;
            Some(p.to_path_buf())
        }
        None => match initrd_beside(&image, &release) {
            Some(p) => Some(p),
            None => {
                return Err(format!(
                    "the kernel to return to ({}) has no initrd beside it: give \
                     --return-initrd FILE (or --return-initrd none)",
                    image.display()
                ))
            }
        },
    };
    let image = image.canonicalize().unwrap_or(image);
    Ok(BootTarget {
        image,
        initrd,
        cmdline: super::cmdline::without_ours(cmdline),
    })
}

/// The store must survive the reboots: refuses one on a tmpfs or ramfs.
pub fn store_survives(store: &Path) -> Result<(), String> {
    // The store's directory, or the nearest one above it that exists (it is made later).
    let mut dir = match store.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    while !dir.exists() {
        match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => dir = p.to_path_buf(),
            _ => break,
        }
    }
    let stat = nix::sys::statfs::statfs(&dir).map_err(|e| {
        format!(
            "cannot inspect the store's directory {}: {e}",
            dir.display()
        )
    })?;
    let magic = stat.filesystem_type();
    let kind = if magic == nix::sys::statfs::TMPFS_MAGIC {
        "a tmpfs"
    } else if magic == nix::sys::statfs::FsType(RAMFS_MAGIC as _) {
        "a ramfs"
    } else {
        return Ok(());
    };
    Err(format!(
        "the store {} is on {kind}, which a reboot empties: put it on a disk (--store \
         /var/lib/patchbench/results.db)",
        store.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_test_process_may_be_asked_and_the_store_in_a_tmpfs_is_refused() {
        // /dev/shm is a tmpfs on every Linux this runs on; the check reads the real statfs.
        if nix::sys::statfs::statfs("/dev/shm")
            .is_ok_and(|s| s.filesystem_type() == nix::sys::statfs::TMPFS_MAGIC)
        {
            let e = store_survives(Path::new("/dev/shm/x.db")).unwrap_err();
            assert!(e.contains("tmpfs"), "{e}");
        }
        let d = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        assert!(store_survives(&d.path().join("x.db")).is_ok());
    }

    #[test]
    fn an_initrd_is_found_beside_the_image_or_asked_for() {
        let d = tempfile::tempdir().unwrap();
        let image = d.path().join("vmlinuz-6.1.0-x");
        std::fs::write(&image, b"").unwrap();
        let mut k = KernelSpec {
            image: image.clone(),
            sha256: String::new(),
            release: "6.1.0-x".into(),
            initrd: None,
            modules: Some(d.path().to_path_buf()),
        };
        let e = side_kernel("base", &mut k.clone()).unwrap_err();
        assert!(e.contains("--base-initrd"), "{e}");
        std::fs::write(d.path().join("initrd.img-6.1.0-x"), b"").unwrap();
        side_kernel("base", &mut k).unwrap();
        assert_eq!(k.initrd, Some(d.path().join("initrd.img-6.1.0-x")));
        let mut none = KernelSpec {
            initrd: Some("none".into()),
            ..k.clone()
        };
        side_kernel("base", &mut none).unwrap();
        assert_eq!(none.initrd, None);
        let mut no_modules = KernelSpec {
            modules: None,
            release: "0.0.0-nonexistent".into(),
            ..k
        };
        let e = side_kernel("patched", &mut no_modules).unwrap_err();
        assert!(e.contains("--patched-modules"), "{e}");
    }

    #[test]
    fn lockdown_refuses_an_unsigned_image_only_when_locked() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("img");
        std::fs::write(&p, vec![0u8; 4096]).unwrap();
        assert!(signed_if_locked_down(&p, None).is_ok());
        assert!(signed_if_locked_down(&p, Some("none")).is_ok());
        let e = signed_if_locked_down(&p, Some("integrity")).unwrap_err();
        assert!(e.contains("integrity") && e.contains("signature"), "{e}");
    }
}
