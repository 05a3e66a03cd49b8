//! The host programs the `vm` executor needs, found and checked: QEMU (a name looked up in
//! `PATH`, or a path), a static busybox for the initramfs (a dynamically linked one would find
//! no C library there: the ELF file must have no program interpreter), and the `mkfs` of a
//! scratch file system (run in the guest from the host's root).

use std::io::Read;
use std::path::{Path, PathBuf};

/// Where system programs live besides `PATH` (root's `sbin` directories are often not on a
/// user's `PATH`).
const SYSTEM_DIRS: [&str; 4] = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"];

fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `name` as a program: a path as given when it has a `/`, else the first executable of that
/// name in `PATH` or the system directories.
pub fn find_program(name: &Path) -> Option<PathBuf> {
    if name.as_os_str().as_encoded_bytes().contains(&b'/') {
        return executable(name).then(|| name.to_path_buf());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(SYSTEM_DIRS.iter().map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| executable(p))
}

/// The QEMU program, or the one-line refusal.
pub fn qemu(given: &Path) -> Result<PathBuf, String> {
    find_program(given).ok_or_else(|| {
        format!(
            "no QEMU: {} is not an executable program; install qemu-system-x86 or name it with \
             --qemu PATH",
            given.display()
        )
    })
}

/// The static busybox the initramfs carries, or the one-line refusal.
pub fn static_busybox() -> Result<PathBuf, String> {
    let found = find_program(Path::new("busybox"));
    match found {
        Some(p) if is_static_elf(&p) => Ok(p),
        Some(p) => Err(format!(
            "{} is linked dynamically; the guest's initramfs needs a static busybox: install \
             busybox-static",
            p.display()
        )),
        None => Err(
            "no busybox: the guest's initramfs needs a static busybox; install \
                     busybox-static"
                .to_string(),
        ),
    }
}

/// The `mkfs` of a scratch file system type, or the one-line refusal.
pub fn mkfs(fs: &str) -> Result<PathBuf, String> {
    find_program(Path::new(&format!("mkfs.{fs}"))).ok_or_else(|| {
        format!(
            "--scratch {fs}: no mkfs.{fs} on this machine (the guest runs the host's); install \
             its tools (e2fsprogs for ext4)"
        )
    })
}

/// True for a 64-bit little-endian ELF file without a program interpreter (`PT_INTERP`).
pub fn is_static_elf(path: &Path) -> bool {
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = vec![0u8; 64];
    if f.read_exact(&mut head).is_err() || &head[..4] != b"\x7fELF" || head[4] != 2 || head[5] != 1
    {
        return false;
    }
    let u16_at = |b: &[u8], i: usize| u16::from_le_bytes([b[i], b[i + 1]]) as usize;
    let phoff = u64::from_le_bytes(head[0x20..0x28].try_into().unwrap_or([0; 8])) as usize;
    let (phentsize, phnum) = (u16_at(&head, 0x36), u16_at(&head, 0x38));
    let mut rest = Vec::new();
    if f.read_to_end(&mut rest).is_err() {
        return false;
    }
    let whole = [head, rest].concat();
    (0..phnum).all(|i| {
        let at = phoff + i * phentsize;
        whole
            .get(at..at + 4)
            .map(|t| u32::from_le_bytes([t[0], t[1], t[2], t[3]]) != 3)
            .unwrap_or(false)
    }) && phnum > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_found_by_name_or_path() {
        assert!(find_program(Path::new("sh")).is_some());
        assert_eq!(
            find_program(Path::new("/bin/sh")),
            Some(PathBuf::from("/bin/sh"))
        );
        assert_eq!(find_program(Path::new("/no/such/qemu")), None);
        let e = qemu(Path::new("no-such-qemu-here")).unwrap_err();
        assert!(e.contains("no QEMU") && e.contains("--qemu"), "{e}");
    }

    #[test]
    fn a_dynamic_program_is_not_static_and_text_is_not_elf() {
        // /bin/sh on a Debian system is dynamically linked.
        assert!(!is_static_elf(Path::new("/bin/sh")));
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("t");
        std::fs::write(&t, "#!/bin/sh\n").unwrap();
        assert!(!is_static_elf(&t));
    }
}
