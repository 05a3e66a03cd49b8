//! What a campaign checks of a kernel image before it boots one: that it is an x86 Linux boot
//! image (the `HdrS` setup header of the boot protocol), which release it says it is (the
//! version string the header points to), its SHA-256, and where its modules are
//! (`lib/modules/<release>` beside its `boot/`, as in an extracted `.deb` or an installed
//! kernel), checked to be of the same release.

use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Offset of the setup header's magic `HdrS`.
const MAGIC_AT: usize = 0x202;
/// Offset of the header's `kernel_version` field (a pointer, less 0x200, to the version).
const VERSION_PTR_AT: usize = 0x20E;
/// The most setup code an image has: 255 setup sectors and the boot sector.
const SETUP_MAX: usize = 256 * 512;

/// An image, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageInfo {
    /// The release (the version string's first word), e.g. `6.1.0-27-amd64`.
    pub release: String,
    /// The whole version string.
    pub version: String,
    pub sha256: String,
}

/// Reads and checks a kernel image; the error says what is wrong in words a user can act on.
pub fn inspect(path: &Path) -> Result<ImageInfo, String> {
    let shown = path.display();
    let mut file =
        std::fs::File::open(path).map_err(|e| format!("cannot read kernel image {shown}: {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read kernel image {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("kernel image {shown} is not a regular file"));
    }
    // The version string lies in the real-mode setup code, which is up to 255 + 1 sectors
    // (Debian's 6.1 images have it past 16 KiB).
    let mut head = vec![0u8; SETUP_MAX];
    let n = read_up_to(&mut file, &mut head)
        .map_err(|e| format!("cannot read kernel image {shown}: {e}"))?;
    head.truncate(n);
    if head.get(MAGIC_AT..MAGIC_AT + 4) != Some(b"HdrS") {
        return Err(format!(
            "{shown} is not a Linux kernel image (no x86 boot header); give a bzImage/vmlinuz"
        ));
    }
    let ptr = head
        .get(VERSION_PTR_AT..VERSION_PTR_AT + 2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize + 0x200)
        .ok_or_else(|| format!("{shown}: truncated kernel image"))?;
    let version: String = head
        .get(ptr..)
        .ok_or_else(|| format!("{shown}: the kernel image's version string is out of range"))?
        .iter()
        .take_while(|&&b| b != 0)
        .take(256)
        .map(|&b| b as char)
        .collect();
    let release = version
        .split_whitespace()
        .next()
        .filter(|r| !r.is_empty())
        .ok_or_else(|| format!("{shown}: the kernel image carries no version string"))?
        .to_string();
    Ok(ImageInfo {
        release,
        version,
        sha256: sha256_file(path)?,
    })
}

/// True when the image is a PE file (an EFI-stub kernel) whose certificate table is not
/// empty: it carries a signature. An image without a PE header carries none.
pub fn is_signed(path: &Path) -> Result<bool, String> {
    let shown = path.display();
    let mut file =
        std::fs::File::open(path).map_err(|e| format!("cannot read kernel image {shown}: {e}"))?;
    let len = file
        .metadata()
        .map_err(|e| format!("cannot read kernel image {shown}: {e}"))?
        .len();
    let mut head = vec![0u8; 0x1000];
    let n = read_up_to(&mut file, &mut head)
        .map_err(|e| format!("cannot read kernel image {shown}: {e}"))?;
    head.truncate(n);
    Ok(certificate_table(&head).is_some_and(|(at, size)| size > 0 && at + size <= len))
}

/// The PE certificate table's (file offset, size), from the first bytes of an image.
fn certificate_table(head: &[u8]) -> Option<(u64, u64)> {
    let u16_at = |at: usize| {
        head.get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let u32_at = |at: usize| {
        head.get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    if head.get(0..2) != Some(b"MZ") {
        return None;
    }
    let pe = u32_at(0x3c)? as usize;
    if head.get(pe..pe + 4) != Some(b"PE\0\0") {
        return None;
    }
    let optional = pe + 24;
    let (count_at, dirs_at) = match u16_at(optional)? {
        0x10b => (optional + 92, optional + 96),
        0x20b => (optional + 108, optional + 112),
        _ => return None,
    };
    if u32_at(count_at)? <= 4 {
        return None;
    }
    let entry = dirs_at + 4 * 8;
    Some((u64::from(u32_at(entry)?), u64::from(u32_at(entry + 4)?)))
}

fn read_up_to(f: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// SHA-256 of a file, hex.
pub fn sha256_file(path: &Path) -> Result<String, String> {
    let mut f =
        std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => h.update(&buf[..n]),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        }
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The modules of an image: `given` (checked), else `lib/modules/<release>` beside the image's
/// `boot/` directory, else None (a kernel with what it needs built in). A directory of another
/// release is refused.
pub fn modules_for(
    image: &Path,
    release: &str,
    given: Option<&Path>,
) -> Result<Option<PathBuf>, String> {
    if let Some(dir) = given {
        if !dir.is_dir() {
            return Err(format!(
                "modules directory {} does not exist",
                dir.display()
            ));
        }
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name != release {
            // A lib/modules directory holding this release is fine too.
            let inner = dir.join(release);
            if inner.is_dir() {
                return Ok(Some(inner));
            }
            return Err(format!(
                "modules directory {} is for {name:?}, but the image {} is {release}; give the \
                 image's own modules (lib/modules/{release})",
                dir.display(),
                image.display()
            ));
        }
        if !dir.join("modules.dep").is_file() {
            return Err(format!(
                "modules directory {} has no modules.dep (run depmod for {release})",
                dir.display()
            ));
        }
        return Ok(Some(dir.to_path_buf()));
    }
    let root = image
        .canonicalize()
        .ok()
        .and_then(|p| p.parent()?.parent().map(Path::to_path_buf));
    let found = root
        .map(|r| r.join("lib/modules").join(release))
        .filter(|d| d.join("modules.dep").is_file());
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file with a boot header pointing at `version`.
    pub fn fake_image(dir: &Path, version: &str) -> PathBuf {
        fake_image_at(dir, version, 0x800)
    }

    /// A file with a boot header pointing at `version`, placed at offset `at`.
    pub fn fake_image_at(dir: &Path, version: &str, at: usize) -> PathBuf {
        let mut img = vec![0u8; at + 0x400];
        img[MAGIC_AT..MAGIC_AT + 4].copy_from_slice(b"HdrS");
        img[VERSION_PTR_AT..VERSION_PTR_AT + 2]
            .copy_from_slice(&((at - 0x200) as u16).to_le_bytes());
        img[at..at + version.len()].copy_from_slice(version.as_bytes());
        let p = dir.join("boot/vmlinuz");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, img).unwrap();
        p
    }

    #[test]
    fn reads_the_release_and_finds_the_modules_beside_boot() {
        let d = tempfile::tempdir().unwrap();
        let img = fake_image(
            d.path(),
            "6.1.0-27-amd64 (debian-kernel@lists.debian.org) #1 SMP",
        );
        let info = inspect(&img).unwrap();
        assert_eq!(info.release, "6.1.0-27-amd64");
        assert_eq!(info.sha256.len(), 64);
        assert_eq!(modules_for(&img, &info.release, None).unwrap(), None);
        let m = d.path().join("lib/modules/6.1.0-27-amd64");
        std::fs::create_dir_all(&m).unwrap();
        std::fs::write(m.join("modules.dep"), "").unwrap();
        let found = modules_for(&img, &info.release, None).unwrap().unwrap();
        assert!(found.ends_with("lib/modules/6.1.0-27-amd64"));
        let other = d.path().join("lib/modules/5.10.0-1-amd64");
        std::fs::create_dir_all(&other).unwrap();
        let e = modules_for(&img, &info.release, Some(&other)).unwrap_err();
        assert!(
            e.contains("5.10.0-1-amd64") && e.contains("6.1.0-27-amd64"),
            "{e}"
        );
    }

    #[test]
    fn a_pe_certificate_table_means_signed() {
        let d = tempfile::tempdir().unwrap();
        let p = fake_image(d.path(), "6.1.0 #1");
        assert!(!is_signed(&p).unwrap(), "no PE header: unsigned");
        let mut img = std::fs::read(&p).unwrap();
        img.resize(0x1000, 0);
        img[0..2].copy_from_slice(b"MZ");
        let pe = 0x80usize;
        img[0x3c..0x40].copy_from_slice(&(pe as u32).to_le_bytes());
        img[pe..pe + 4].copy_from_slice(b"PE\0\0");
        let opt = pe + 24;
        img[opt..opt + 2].copy_from_slice(&0x20bu16.to_le_bytes());
        img[opt + 108..opt + 112].copy_from_slice(&16u32.to_le_bytes());
        std::fs::write(&p, &img).unwrap();
        assert!(
            !is_signed(&p).unwrap(),
            "an empty certificate table: unsigned"
        );
        let cert = opt + 112 + 32;
        img[cert..cert + 4].copy_from_slice(&0xc00u32.to_le_bytes());
        img[cert + 4..cert + 8].copy_from_slice(&0x100u32.to_le_bytes());
        std::fs::write(&p, &img).unwrap();
        assert!(is_signed(&p).unwrap());
        img.truncate(0xc80);
        std::fs::write(&p, &img).unwrap();
        assert!(!is_signed(&p).unwrap(), "a table past the end of the file");
    }

    #[test]
    fn reads_a_version_string_past_16_kib_as_debian_images_have_it() {
        let d = tempfile::tempdir().unwrap();
        let img = fake_image_at(d.path(), "6.1.0-48-amd64 (debian-kernel) #1 SMP", 0x44c0);
        assert_eq!(inspect(&img).unwrap().release, "6.1.0-48-amd64");
    }

    #[test]
    fn refuses_what_is_not_a_kernel() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("notes.txt");
        std::fs::write(&p, "hello").unwrap();
        assert!(inspect(&p)
            .unwrap_err()
            .contains("not a Linux kernel image"));
        assert!(inspect(&d.path().join("missing"))
            .unwrap_err()
            .contains("cannot read"));
        assert!(inspect(d.path()).is_err());
    }
}
