//! The initramfs a side's guests boot with, built on the host (a `newc` cpio archive) and kept
//! in the executor's private directory for every step of that side: a static busybox, the
//! init (`super::init_script`) and its settings, `/dev/console`, and the modules the guest
//! needs (decompressed, numbered in load order, listed in `/modules/order` with their
//! arguments). A side's own initrd, when it has one, comes first in the same file (the kernel
//! unpacks concatenated archives in order, so our `/init` is the one that runs). A build is
//! reused while its inputs (modules, busybox, settings, initrd) are the same.

use super::init_script;
use super::modules::{read_module, ModuleFile};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What goes into a side's initramfs.
#[derive(Debug, Clone)]
pub struct Contents {
    /// The kernel release (for the guest's `/lib/modules/RELEASE`).
    pub release: String,
    /// The static busybox to carry.
    pub busybox: PathBuf,
    /// Modules in load order, each with its arguments.
    pub modules: Vec<(ModuleFile, String)>,
    /// The side's modules directory on the host (bound at `/lib/modules/RELEASE` in the
    /// guest).
    pub modules_dir: Option<PathBuf>,
    /// The scratch file system to make on the RAM disk, if any.
    pub scratch_fs: Option<String>,
    /// The side's own initrd, unpacked before ours.
    pub initrd: Option<PathBuf>,
    /// The directory of the patchbench programs the steps run: bound back at its own path in
    /// the guest when a tmpfs the guest puts on `/tmp`, `/root`, ... would hide it.
    pub program_dir: Option<PathBuf>,
}

impl Contents {
    /// A digest of everything the archive is made from (files by path, size and mtime).
    fn key(&self) -> String {
        let mut h = Sha256::new();
        let mut file = |p: &Path| {
            h.update(p.as_os_str().as_encoded_bytes());
            if let Ok(m) = std::fs::metadata(p) {
                h.update(m.len().to_le_bytes());
                if let Ok(t) = m.modified() {
                    h.update(format!("{t:?}").as_bytes());
                }
            }
            h.update([0]);
        };
        file(&self.busybox);
        for (m, _) in &self.modules {
            file(&m.path);
        }
        if let Some(i) = &self.initrd {
            file(i);
        }
        h.update(self.settings().as_bytes());
        h.update(init_script::text().as_bytes());
        h.finalize()
            .iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// `/modules/order`: one line per module, `FILE required|optional ARGS`.
    fn order(&self) -> String {
        self.modules
            .iter()
            .enumerate()
            .map(|(i, (m, args))| {
                let kind = if m.optional { "optional" } else { "required" };
                format!("{} {kind} {args}\n", module_file_name(i, m))
            })
            .collect()
    }

    /// `/etc/patchbench.conf`.
    fn conf(&self) -> String {
        let dir = self.modules_dir.as_ref().map(|d| d.display().to_string());
        let program = self.program_dir.as_ref().map(|d| d.display().to_string());
        init_script::conf(
            &self.release,
            dir.as_deref(),
            self.scratch_fs.as_deref(),
            program.as_deref(),
        )
    }

    fn settings(&self) -> String {
        format!("{}\n{}", self.order(), self.conf())
    }
}

fn module_file_name(i: usize, m: &ModuleFile) -> String {
    format!("{i:02}-{}.ko", m.name)
}

/// The initramfs for `contents`, built in `dir` (`initramfs-NAME-KEY.cpio`) unless an
/// identical one is there.
pub fn build(dir: &Path, name: &str, contents: &Contents) -> Result<PathBuf, String> {
    let path = dir.join(format!("initramfs-{name}-{}.cpio", contents.key()));
    if path.is_file() {
        return Ok(path);
    }
    let tmp = dir.join(format!(".initramfs-{name}-{}.tmp", std::process::id()));
    let written = write(&tmp, contents).and_then(|()| {
        std::fs::rename(&tmp, &path).map_err(|e| format!("cannot rename {}: {e}", tmp.display()))
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map(|()| path)
}

fn write(path: &Path, contents: &Contents) -> Result<(), String> {
    let shown = path.display();
    let file = std::fs::File::create(path).map_err(|e| format!("cannot create {shown}: {e}"))?;
    let mut out = std::io::BufWriter::new(file);
    let io = |e: std::io::Error| format!("cannot write {shown}: {e}");
    if let Some(initrd) = &contents.initrd {
        let bytes = std::fs::read(initrd)
            .map_err(|e| format!("cannot read initrd {}: {e}", initrd.display()))?;
        out.write_all(&bytes).map_err(io)?;
        // Archives start on a 4-byte boundary.
        let pad = (4 - bytes.len() % 4) % 4;
        out.write_all(&[0u8; 3][..pad]).map_err(io)?;
    }
    let mut archive = Archive {
        out: Some(out),
        ino: 1,
    };
    for d in [
        "bin", "dev", "etc", "proc", "sys", "newroot", "mods", "modules",
    ] {
        archive.dir(d).map_err(io)?;
    }
    archive.console().map_err(io)?;
    let busybox = std::fs::read(&contents.busybox)
        .map_err(|e| format!("cannot read {}: {e}", contents.busybox.display()))?;
    archive.file("bin/busybox", 0o755, &busybox).map_err(io)?;
    archive
        .file("init", 0o755, init_script::text().as_bytes())
        .map_err(io)?;
    archive
        .file("etc/patchbench.conf", 0o644, contents.conf().as_bytes())
        .map_err(io)?;
    archive
        .file("modules/order", 0o644, contents.order().as_bytes())
        .map_err(io)?;
    for (i, (m, _)) in contents.modules.iter().enumerate() {
        let body = read_module(&m.path)?;
        archive
            .file(&format!("modules/{}", module_file_name(i, m)), 0o644, &body)
            .map_err(io)?;
    }
    let out = archive
        .out
        .take()
        .ok_or_else(|| io(std::io::Error::other("lost")))?;
    let mut out = cpio::newc::trailer(out).map_err(io)?;
    out.flush().map_err(io)?;
    out.into_inner()
        .map_err(|e| io(e.into_error()))?
        .sync_all()
        .map_err(io)
}

/// A `newc` archive being written.
struct Archive<W: Write> {
    /// Taken while an entry is written (the cpio writer owns it then).
    out: Option<W>,
    ino: u32,
}

impl<W: Write> Archive<W> {
    fn entry(
        &mut self,
        name: &str,
        mode: u32,
        body: &[u8],
        rdev: Option<(u32, u32)>,
    ) -> std::io::Result<()> {
        self.ino += 1;
        let mut b = cpio::newc::Builder::new(name)
            .ino(self.ino)
            .mode(mode)
            .uid(0)
            .gid(0)
            .nlink(if mode & 0o170000 == 0o040000 { 2 } else { 1 });
        if let Some((major, minor)) = rdev {
            b = b.rdev_major(major).rdev_minor(minor);
        }
        let out = self
            .out
            .take()
            .ok_or_else(|| std::io::Error::other("an earlier write failed"))?;
        let mut w = b.write(out, body.len() as u32);
        w.write_all(body)?;
        self.out = Some(w.finish()?);
        Ok(())
    }

    fn dir(&mut self, name: &str) -> std::io::Result<()> {
        self.entry(name, 0o040755, &[], None)
    }

    fn file(&mut self, name: &str, perm: u32, body: &[u8]) -> std::io::Result<()> {
        self.entry(name, 0o100000 | perm, body, None)
    }

    /// `/dev/console` (character device 5:1), which the kernel opens for init's stdio.
    fn console(&mut self) -> std::io::Result<()> {
        self.entry("dev/console", 0o020600, &[], Some((5, 1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry of an archive: (name, mode, rdev major, body).
    fn entries(path: &Path) -> Vec<(String, u32, u32, Vec<u8>)> {
        let mut data = std::fs::File::open(path).unwrap();
        let mut out = Vec::new();
        loop {
            let mut r = cpio::NewcReader::new(data).unwrap();
            if r.entry().is_trailer() {
                break;
            }
            let e = (
                r.entry().name().to_string(),
                r.entry().mode(),
                r.entry().rdev_major(),
            );
            let mut body = Vec::new();
            std::io::Read::read_to_end(&mut r, &mut body).unwrap();
            out.push((e.0, e.1, e.2, body));
            data = r.finish().unwrap();
        }
        out
    }

    #[test]
    fn carries_busybox_init_console_and_the_modules_in_order_and_is_reused() {
        let d = tempfile::tempdir().unwrap();
        let busybox = d.path().join("busybox");
        std::fs::write(&busybox, b"\x7fELF busybox").unwrap();
        let m = |name: &str, optional| {
            let path = d.path().join(format!("{name}.ko"));
            std::fs::write(&path, format!("module {name}")).unwrap();
            ModuleFile {
                name: name.to_string(),
                path,
                optional,
            }
        };
        let contents = Contents {
            release: "6.1.0-1-amd64".into(),
            busybox,
            modules: vec![
                (m("9pnet", false), String::new()),
                (m("crc32c_generic", true), String::new()),
                (m("brd", false), "rd_nr=1 rd_size=65536".into()),
            ],
            modules_dir: Some(d.path().join("lib/modules/6.1.0-1-amd64")),
            scratch_fs: Some("ext4".into()),
            initrd: None,
            program_dir: Some("/root/src/patchbench/target/release".into()),
        };
        let out = d.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let path = build(&out, "base", &contents).unwrap();
        let all = entries(&path);
        let get = |n: &str| {
            all.iter()
                .find(|e| e.0 == n)
                .unwrap_or_else(|| panic!("{n}"))
        };
        assert_eq!(get("init").3, init_script::text().as_bytes());
        assert_eq!(get("init").1, 0o100755);
        assert_eq!(get("bin/busybox").3, b"\x7fELF busybox");
        assert_eq!((get("dev/console").1, get("dev/console").2), (0o020600, 5));
        assert_eq!(get("newroot").1, 0o040755);
        assert_eq!(
            String::from_utf8_lossy(&get("modules/order").3),
            "00-9pnet.ko required \n01-crc32c_generic.ko optional \n\
             02-brd.ko required rd_nr=1 rd_size=65536\n"
        );
        assert_eq!(get("modules/02-brd.ko").3, b"module brd");
        let conf = String::from_utf8_lossy(&get("etc/patchbench.conf").3).into_owned();
        assert!(conf.contains("SCRATCH_FS='ext4'"), "{conf}");
        assert!(
            conf.contains("PROGRAM_DIR='/root/src/patchbench/target/release'"),
            "{conf}"
        );
        // Same inputs: the same file, not rebuilt.
        let again = build(&out, "base", &contents).unwrap();
        assert_eq!(again, path);
        let other = Contents {
            scratch_fs: None,
            ..contents.clone()
        };
        assert_ne!(build(&out, "base", &other).unwrap(), path);
        // A side's own initrd comes first, padded to 4 bytes.
        let initrd = d.path().join("initrd");
        std::fs::write(&initrd, b"12345").unwrap();
        let with = Contents {
            initrd: Some(initrd),
            ..contents
        };
        let bytes = std::fs::read(build(&out, "patched", &with).unwrap()).unwrap();
        assert_eq!(&bytes[..8], b"12345\0\0\0");
        assert_eq!(&bytes[8..14], b"070701");
    }
}
