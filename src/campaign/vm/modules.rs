//! Which of a kernel's modules a guest's initramfs carries, and in which order they load:
//! the modules a guest needs (9p over virtio for the host's root, the console ports of a duet,
//! the RAM disk and file system of a scratch), each with what it depends on, read from the
//! kernel's `modules.dep` (hard dependencies) and `modules.softdep` (`pre:` modules, found by
//! name or through an exact `modules.alias` entry, loaded when they load), skipping what
//! `modules.builtin` says is built in. Module files may be compressed (`.ko.xz`, `.ko.zst`,
//! `.ko.gz`); they are decompressed here, since busybox's `insmod` cannot.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

/// One module to load.
#[derive(Debug, Clone, PartialEq)]
pub struct ModuleFile {
    /// Its name (`9pnet_virtio`).
    pub name: String,
    /// The file (absolute).
    pub path: PathBuf,
    /// Loaded because another module asked for it softly: a failure to load it is not fatal.
    pub optional: bool,
}

/// A modules directory, indexed.
pub struct ModuleIndex {
    dir: PathBuf,
    /// Name → (file relative to `dir`, the names it depends on).
    deps: HashMap<String, (String, Vec<String>)>,
    builtin: HashSet<String>,
    /// Name → the modules or aliases to load before it.
    softdeps: HashMap<String, Vec<String>>,
    /// Alias → module names (exact aliases only).
    aliases: HashMap<String, Vec<String>>,
}

/// A module's name from its file path: the file name less `.ko` and any compression suffix,
/// with `-` read as `_` (as modprobe does).
pub fn name_of(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.split(".ko").next().unwrap_or(file);
    stem.replace('-', "_")
}

impl ModuleIndex {
    /// Reads `modules.dep` (required), `modules.builtin`, `modules.softdep` and
    /// `modules.alias` (optional) of `dir`.
    pub fn load(dir: &Path) -> Result<ModuleIndex, String> {
        let dep_file = dir.join("modules.dep");
        let text = std::fs::read_to_string(&dep_file).map_err(|e| {
            format!(
                "cannot read {} ({e}); run `depmod -b ROOT RELEASE` for these modules",
                dep_file.display()
            )
        })?;
        let mut deps = HashMap::new();
        for line in text.lines() {
            let Some((file, rest)) = line.split_once(':') else {
                continue;
            };
            let needs = rest.split_whitespace().map(name_of).collect();
            deps.insert(name_of(file), (file.trim().to_string(), needs));
        }
        let optional = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        let builtin = optional("modules.builtin")
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(name_of)
            .collect();
        let mut softdeps: HashMap<String, Vec<String>> = HashMap::new();
        for line in optional("modules.softdep").lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            if words.len() < 3 || words[0] != "softdep" {
                continue;
            }
            let mut pre = false;
            for w in &words[2..] {
                match *w {
                    "pre:" => pre = true,
                    "post:" => pre = false,
                    name if pre => softdeps
                        .entry(words[1].replace('-', "_"))
                        .or_default()
                        .push(name.to_string()),
                    _ => {}
                }
            }
        }
        let mut aliases: HashMap<String, Vec<String>> = HashMap::new();
        for line in optional("modules.alias").lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            if let ["alias", alias, module] = words[..] {
                if !alias.contains(['*', '?', '[']) {
                    aliases
                        .entry(alias.to_string())
                        .or_default()
                        .push(module.replace('-', "_"));
                }
            }
        }
        Ok(ModuleIndex {
            dir: dir.to_path_buf(),
            deps,
            builtin,
            softdeps,
            aliases,
        })
    }

    /// True when the kernel has `name`, as a module or built in.
    pub fn has(&self, name: &str) -> bool {
        self.builtin.contains(name) || self.deps.contains_key(name)
    }

    /// The files to load for `wanted`, dependencies first, each once; built-in modules are
    /// left out. A wanted module the kernel has neither as a file nor built in is an error
    /// naming it.
    pub fn resolve(&self, wanted: &[&str]) -> Result<Vec<ModuleFile>, String> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for &name in wanted {
            let name = name.replace('-', "_");
            if !self.has(&name) {
                return Err(format!(
                    "the kernel's modules ({}) have no {name} module and it is not built in",
                    self.dir.display()
                ));
            }
            self.visit(&name, false, &mut seen, &mut out);
        }
        Ok(out)
    }

    fn visit(
        &self,
        name: &str,
        optional: bool,
        seen: &mut HashSet<String>,
        out: &mut Vec<ModuleFile>,
    ) {
        if self.builtin.contains(name) || !seen.insert(name.to_string()) {
            return;
        }
        let Some((file, needs)) = self.deps.get(name) else {
            return;
        };
        for soft in self.softdeps.get(name).into_iter().flatten() {
            let soft_name = soft.replace('-', "_");
            if self.has(&soft_name) {
                self.visit(&soft_name, true, seen, out);
            } else {
                for m in self.aliases.get(soft.as_str()).into_iter().flatten() {
                    self.visit(m, true, seen, out);
                }
            }
        }
        for need in needs {
            self.visit(need, optional, seen, out);
        }
        out.push(ModuleFile {
            name: name.to_string(),
            path: self.dir.join(file),
            optional,
        });
    }
}

/// A module file's contents, decompressed when its name says it is compressed.
pub fn read_module(path: &Path) -> Result<Vec<u8>, String> {
    let shown = path.display();
    let raw = std::fs::read(path).map_err(|e| format!("cannot read module {shown}: {e}"))?;
    let name = path.to_string_lossy();
    let bad = |e: &dyn std::fmt::Display| format!("cannot decompress module {shown}: {e}");
    if name.ends_with(".ko.xz") {
        let mut out = Vec::new();
        lzma_rs::xz_decompress(&mut raw.as_slice(), &mut out).map_err(|e| bad(&e))?;
        Ok(out)
    } else if name.ends_with(".ko.zst") {
        let mut out = Vec::new();
        ruzstd::decoding::StreamingDecoder::new(raw.as_slice())
            .map_err(|e| bad(&e))?
            .read_to_end(&mut out)
            .map_err(|e| bad(&e))?;
        Ok(out)
    } else if name.ends_with(".ko.gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(raw.as_slice())
            .read_to_end(&mut out)
            .map_err(|e| bad(&e))?;
        Ok(out)
    } else {
        Ok(raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn fake_modules(dir: &Path) {
        let w = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
        w(
            "modules.dep",
            "kernel/fs/9p/9p.ko.xz: kernel/net/9p/9pnet.ko kernel/fs/netfs/netfs.ko\n\
             kernel/net/9p/9pnet.ko:\n\
             kernel/fs/netfs/netfs.ko:\n\
             kernel/net/9p/9pnet_virtio.ko: kernel/net/9p/9pnet.ko kernel/drivers/virtio/virtio_ring.ko\n\
             kernel/drivers/virtio/virtio_ring.ko:\n\
             kernel/fs/ext4/ext4.ko: kernel/fs/jbd2/jbd2.ko\n\
             kernel/fs/jbd2/jbd2.ko:\n\
             kernel/crypto/crc32c_generic.ko:\n\
             kernel/drivers/block/brd.ko.zst:\n",
        );
        w("modules.builtin", "kernel/drivers/virtio/virtio_pci.ko\n");
        w(
            "modules.softdep",
            "# comment\nsoftdep ext4 pre: crypto-crc32c\n",
        );
        w(
            "modules.alias",
            "alias crypto-crc32c crc32c_generic\nalias pci:v00001AF4d* virtio_pci\n",
        );
    }

    #[test]
    fn dependencies_load_first_builtins_are_skipped_softdeps_are_optional() {
        let d = tempfile::tempdir().unwrap();
        fake_modules(d.path());
        let index = ModuleIndex::load(d.path()).unwrap();
        let files = index
            .resolve(&["virtio_pci", "9pnet_virtio", "9p", "ext4"])
            .unwrap();
        let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "9pnet",
                "virtio_ring",
                "9pnet_virtio",
                "netfs",
                "9p",
                "crc32c_generic",
                "jbd2",
                "ext4"
            ]
        );
        assert!(
            files
                .iter()
                .find(|f| f.name == "crc32c_generic")
                .unwrap()
                .optional
        );
        assert!(!files.iter().find(|f| f.name == "jbd2").unwrap().optional);
        assert!(files[4].path.ends_with("kernel/fs/9p/9p.ko.xz"));
        let e = index.resolve(&["btrfs"]).unwrap_err();
        assert!(e.contains("no btrfs module"), "{e}");
    }

    #[test]
    fn a_directory_without_modules_dep_says_to_run_depmod() {
        let d = tempfile::tempdir().unwrap();
        let e = ModuleIndex::load(d.path()).err().unwrap();
        assert!(e.contains("depmod"), "{e}");
    }

    #[test]
    fn compressed_modules_are_read_back_as_written() {
        let d = tempfile::tempdir().unwrap();
        let body = b"\x7fELF a module body".repeat(100);
        let plain = d.path().join("a.ko");
        std::fs::write(&plain, &body).unwrap();
        assert_eq!(read_module(&plain).unwrap(), body);
        let gz = d.path().join("b.ko.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(&body).unwrap();
        std::fs::write(&gz, enc.finish().unwrap()).unwrap();
        assert_eq!(read_module(&gz).unwrap(), body);
        let xz = d.path().join("c.ko.xz");
        let mut out = Vec::new();
        lzma_rs::xz_compress(&mut body.as_slice(), &mut out).unwrap();
        std::fs::write(&xz, out).unwrap();
        assert_eq!(read_module(&xz).unwrap(), body);
        let broken = d.path().join("d.ko.zst");
        std::fs::write(&broken, b"not zstd").unwrap();
        assert!(read_module(&broken)
            .unwrap_err()
            .contains("cannot decompress"));
    }
}
