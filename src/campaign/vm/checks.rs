//! What a `vm` campaign checks before it starts anything (and again on `resume`), each failure
//! one line for the user: QEMU, the accelerator (KVM, or TCG only with `--allow-tcg`), a
//! static busybox, the `mkfs` of a scratch file system, and per side its kernel image (there,
//! readable, a kernel, unchanged since the campaign started), its modules (of the image's
//! release, with what the guest needs: 9p over virtio, the console ports of a duet, the RAM
//! disk and file system of a scratch), and that the patchbench program is where the guest can
//! see it. A side without a kernel gets the running kernel's (`crate::campaign::side_kernel`)
//! when the campaign starts.

use super::accel::{self, Accel};
use super::host_tools;
use super::modules::{ModuleFile, ModuleIndex};
use crate::campaign::kernel_image;
use crate::record::campaign::spec::{CampaignSpec, KernelSpec, Scratch, SideSpec, VmOptions};
use std::path::{Path, PathBuf};

/// The modules the guest needs for the host's root.
pub const ROOT_MODULES: [&str; 3] = ["virtio_pci", "9pnet_virtio", "9p"];
/// Guest memory kept beside a RAM disk, MiB.
const MEMORY_BESIDE_SCRATCH_MIB: u64 = 512;

/// A side, ready to boot.
#[derive(Debug, Clone)]
pub struct SidePlan {
    pub name: String,
    pub kernel: KernelSpec,
    /// The modules to load, each with its arguments.
    pub modules: Vec<(ModuleFile, String)>,
}

/// Everything checked, for the executor.
#[derive(Debug, Clone)]
pub struct Checked {
    pub qemu: PathBuf,
    pub busybox: PathBuf,
    pub accel: Accel,
    /// Why KVM was not used, under TCG.
    pub accel_note: Option<String>,
    pub options: VmOptions,
    pub sides: Vec<SidePlan>,
}

impl Checked {
    pub fn side(&self, name: &str) -> Option<&SidePlan> {
        self.sides.iter().find(|s| s.name == name)
    }
}

/// What the host gives every guest: QEMU, the accelerator, a static busybox.
struct Host {
    options: VmOptions,
    qemu: PathBuf,
    accel: Accel,
    accel_note: Option<String>,
    busybox: PathBuf,
}

/// Checks a campaign's `vm` settings and what this machine needs for them, without its sides
/// (`campaign start --tree` checks this before it builds the sides' kernels).
pub fn check_host(spec: &CampaignSpec) -> Result<(), String> {
    host(spec).map(|_| ())
}

fn host(spec: &CampaignSpec) -> Result<Host, String> {
    let options = spec.vm.clone().ok_or_else(|| {
        "the vm executor needs its guest settings (vCPUs, memory, CPUs)".to_string()
    })?;
    let qemu = host_tools::qemu(&options.qemu)?;
    let (accel, accel_note) = accel::choose(options.allow_tcg)?;
    let busybox = host_tools::static_busybox()?;
    if let Some(s) = &spec.scratch {
        host_tools::mkfs(&s.fs)?;
        let needs = (s.bytes >> 20) + MEMORY_BESIDE_SCRATCH_MIB;
        if options.memory_mib < needs {
            return Err(format!(
                "--scratch {s}: the RAM disk lives in the guest's memory; give the guest at \
                 least {needs} MiB (--memory {needs}), it has {} MiB",
                options.memory_mib
            ));
        }
    }
    if spec.duet && options.cpus.len() < 2 {
        return Err("--duet needs at least 2 CPUs in --cpus".to_string());
    }
    check_visible(&spec.program)?;
    Ok(Host {
        options,
        qemu,
        accel,
        accel_note,
        busybox,
    })
}

/// Checks a campaign's `vm` settings, tools and sides.
pub fn check(spec: &CampaignSpec) -> Result<Checked, String> {
    let Host {
        options,
        qemu,
        accel,
        accel_note,
        busybox,
    } = host(spec)?;
    let sides = spec
        .sides
        .iter()
        .map(|side| check_side(spec, side))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Checked {
        qemu,
        busybox,
        accel,
        accel_note,
        options,
        sides,
    })
}

/// The guest runs the host's patchbench program by its path (its directory is bound back at
/// that path when a tmpfs of the guest, on `/tmp` or `/root`, covers it: `init_script`):
/// refuses one that is not there.
fn check_visible(program: &Path) -> Result<(), String> {
    if !program.is_file() {
        return Err(format!(
            "the patchbench program {} does not exist",
            program.display()
        ));
    }
    Ok(())
}

fn check_side(spec: &CampaignSpec, side: &SideSpec) -> Result<SidePlan, String> {
    let name = &side.name;
    let kernel = match &side.kernel {
        Some(k) => k.clone(),
        None => crate::campaign::side_kernel::running()?,
    };
    let info = kernel_image::inspect(&kernel.image).map_err(|e| format!("the {name} side: {e}"))?;
    if info.sha256 != kernel.sha256 {
        return Err(format!(
            "the {name} side's image {} changed since the campaign started (its SHA-256 is now \
             {}); start a new campaign for the new image",
            kernel.image.display(),
            info.sha256
        ));
    }
    if let Some(i) = &kernel.initrd {
        std::fs::File::open(i)
            .map_err(|e| format!("the {name} side: cannot read initrd {}: {e}", i.display()))?;
    }
    let modules = match &kernel.modules {
        None => {
            if let Some(option) = modular_root_support(&kernel) {
                return Err(format!(
                    "the {name} side's kernel {} has {option}=m, but no modules were found for \
                     it (lib/modules/{} with a modules.dep beside its boot/, or \
                     --{name}-modules DIR)",
                    kernel.release, kernel.release
                ));
            }
            Vec::new()
        }
        Some(dir) => {
            let dir_name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if dir_name != kernel.release {
                return Err(format!(
                    "the {name} side's modules {} are for {dir_name:?}, but its image is {}; \
                     give the image's own modules (lib/modules/{})",
                    dir.display(),
                    kernel.release,
                    kernel.release
                ));
            }
            let index = ModuleIndex::load(dir).map_err(|e| format!("the {name} side: {e}"))?;
            let wanted = wanted_modules(spec.duet, spec.scratch.as_ref());
            let wanted: Vec<&str> = wanted.iter().map(String::as_str).collect();
            index
                .resolve(&wanted)
                .map_err(|e| {
                    format!(
                        "the {name} side: {e}; the guest needs {}",
                        wanted.join(", ")
                    )
                })?
                .into_iter()
                .map(|m| {
                    let args = match (m.name.as_str(), &spec.scratch) {
                        ("brd", Some(s)) => brd_args(s),
                        _ => String::new(),
                    };
                    (m, args)
                })
                .collect()
        }
    };
    Ok(SidePlan {
        name: name.clone(),
        kernel,
        modules,
    })
}

/// The first option the guest's root needs that the image's `config-RELEASE` (beside it, as
/// in `/boot`) says is a module; None when it is built in or there is no config to read.
fn modular_root_support(kernel: &KernelSpec) -> Option<&'static str> {
    let config = kernel
        .image
        .parent()?
        .join(format!("config-{}", kernel.release));
    let text = std::fs::read_to_string(config).ok()?;
    ["CONFIG_VIRTIO_PCI", "CONFIG_NET_9P_VIRTIO", "CONFIG_9P_FS"]
        .into_iter()
        .find(|o| text.lines().any(|l| l == format!("{o}=m")))
}

/// The modules a guest needs.
pub fn wanted_modules(duet: bool, scratch: Option<&Scratch>) -> Vec<String> {
    let mut w: Vec<String> = ROOT_MODULES.iter().map(|s| s.to_string()).collect();
    if duet {
        w.push("virtio_console".into());
    }
    if let Some(s) = scratch {
        w.push("brd".into());
        w.push(s.fs.clone());
    }
    w
}

/// `brd`'s arguments for one RAM disk of the scratch's size.
pub fn brd_args(s: &Scratch) -> String {
    format!("rd_nr=1 rd_size={} max_part=0", s.bytes.div_ceil(1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_must_be_visible_in_the_guest() {
        let e = check_visible(Path::new("/no/such/patchbench")).unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
        // Under /tmp is fine: the guest binds the directory back (tests/vm.rs runs from a
        // checkout there too).
        let d = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
        let p = d.path().join("patchbench");
        std::fs::write(&p, "").unwrap();
        assert!(check_visible(&p).is_ok());
        assert!(check_visible(Path::new("/bin/sh")).is_ok());
    }

    #[test]
    fn the_guest_needs_more_modules_for_a_duet_and_a_scratch() {
        let s = Scratch {
            fs: "ext4".into(),
            bytes: 64 << 20,
        };
        assert_eq!(
            wanted_modules(true, Some(&s)),
            [
                "virtio_pci",
                "9pnet_virtio",
                "9p",
                "virtio_console",
                "brd",
                "ext4"
            ]
        );
        assert_eq!(brd_args(&s), "rd_nr=1 rd_size=65536 max_part=0");
    }

    #[test]
    fn a_kernel_whose_9p_is_a_module_needs_its_modules() {
        let d = tempfile::tempdir().unwrap();
        let kernel = KernelSpec {
            image: d.path().join("vmlinuz-6.1.0-1-amd64"),
            sha256: String::new(),
            release: "6.1.0-1-amd64".into(),
            initrd: None,
            modules: None,
        };
        assert_eq!(modular_root_support(&kernel), None);
        let config = d.path().join("config-6.1.0-1-amd64");
        std::fs::write(&config, "CONFIG_VIRTIO_PCI=y\nCONFIG_NET_9P_VIRTIO=m\n").unwrap();
        assert_eq!(modular_root_support(&kernel), Some("CONFIG_NET_9P_VIRTIO"));
        std::fs::write(
            &config,
            "CONFIG_VIRTIO_PCI=y\nCONFIG_NET_9P_VIRTIO=y\nCONFIG_9P_FS=y\n",
        )
        .unwrap();
        assert_eq!(modular_root_support(&kernel), None);
    }
}
