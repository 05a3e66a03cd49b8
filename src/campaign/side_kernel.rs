//! Which kernel a side boots, and with what: the running kernel (its image installed in
//! `/boot`, its modules in `/lib/modules`), an image the user names (with an initrd and a
//! modules directory), or a build (found in the cache or made now). `campaign start`, the vm
//! and kexec executors, a lab box and `bisect` all ask here, and the line that says how a
//! build's kernel was had is written here.

use super::kernel_image;
use crate::build::Build;
use crate::progress::Progress;
use crate::record::campaign::spec::KernelSpec;
use std::path::{Path, PathBuf};

/// Where a release's image is installed.
pub fn installed_image(release: &str) -> PathBuf {
    Path::new("/boot").join(KernelSpec::image_file_name(release))
}

/// Where a release's modules are installed (there or not).
pub fn installed_modules(release: &str) -> PathBuf {
    Path::new("/lib/modules").join(release)
}

/// A release's installed modules, when `depmod` has indexed them there.
pub fn installed_modules_if_any(release: &str) -> Option<PathBuf> {
    let dir = installed_modules(release);
    dir.join("modules.dep").is_file().then_some(dir)
}

/// The running kernel's release.
pub fn running_release() -> String {
    super::executor::this_kernel().release
}

/// The running kernel's installed image; `Err` says which file does not exist, for the caller
/// to say what to give instead.
pub fn running_image() -> Result<PathBuf, String> {
    let image = installed_image(&running_release());
    if image.is_file() {
        Ok(image)
    } else {
        Err(format!("its image {} does not exist", image.display()))
    }
}

/// The running kernel as a side's kernel: its installed image and modules, checked. `Err`
/// says what is missing and how to name the image instead.
pub fn running() -> Result<KernelSpec, String> {
    let image = running_image().map_err(|e| {
        format!(
            "a side without a kernel boots the running kernel, but {e}; name the image with \
             --base IMAGE / --patched IMAGE"
        )
    })?;
    let mut kernel = of_image(&image, None, None)?;
    if kernel.modules.is_none() {
        kernel.modules = installed_modules_if_any(&kernel.release);
    }
    Ok(kernel)
}

/// A side's kernel from an image, checked: its release and SHA-256 read from it, the initrd
/// readable (`none`, a kexec side's "no initrd", is not opened), its modules the directory
/// given (checked) or the one beside the image, when there is one.
pub fn of_image(
    image: &Path,
    initrd: Option<&Path>,
    modules: Option<&Path>,
) -> Result<KernelSpec, String> {
    let info = kernel_image::inspect(image)?;
    if let Some(i) = initrd.filter(|i| *i != Path::new("none")) {
        std::fs::File::open(i).map_err(|e| format!("cannot read initrd {}: {e}", i.display()))?;
    }
    let modules = kernel_image::modules_for(image, &info.release, modules)?;
    Ok(KernelSpec {
        image: image.canonicalize().unwrap_or_else(|_| image.to_path_buf()),
        sha256: info.sha256,
        release: info.release,
        initrd: initrd.map(Path::to_path_buf),
        modules,
    })
}

/// The kernel of a build, for a side to boot (with the initrd given, if any).
pub fn of_build(b: &Build, initrd: Option<&Path>) -> Result<KernelSpec, String> {
    let info = kernel_image::inspect(&b.image)?;
    Ok(KernelSpec {
        image: b.image.clone(),
        sha256: info.sha256,
        release: b.release.clone(),
        initrd: initrd.map(Path::to_path_buf),
        modules: b.modules.clone(),
    })
}

/// Says what `who`'s kernel is and how it was had (built, incrementally, or from the cache).
pub fn say_built(progress: &Progress, who: &str, b: &Build) {
    progress.line(&format!(
        "patchbench: {who}: kernel {} ({}): {}",
        b.release,
        b.how(),
        b.to_ref().line()
    ));
}
