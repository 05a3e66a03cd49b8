//! Debian's kernel for the `vm` tests, fetched once into `target/test-kernels/` and kept across
//! runs: the package the `linux-image-amd64` metapackage depends on, downloaded with `apt-get
//! download` and unpacked with `dpkg -x` (not installed), its modules indexed with `depmod -b`
//! (a `.deb` carries no `modules.dep`). One test at a time fetches it (a file lock); a test
//! that cannot get it fails with the reason.

use std::path::{Path, PathBuf};
use std::process::Command;

/// An unpacked kernel package.
pub struct TestKernel {
    /// `.../boot/vmlinuz-RELEASE`.
    pub image: PathBuf,
    /// `.../lib/modules/RELEASE`.
    pub modules: PathBuf,
    pub release: String,
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot get Debian's kernel for the vm tests: {what}: {e}"));
    assert!(
        out.status.success(),
        "cannot get Debian's kernel for the vm tests: {what} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The cache directory.
fn cache() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap_or(Path::new(env!("CARGO_TARGET_TMPDIR")))
        .join("test-kernels")
}

/// Debian's current kernel, unpacked (fetched on first use).
pub fn debian_kernel() -> TestKernel {
    let dir = cache();
    std::fs::create_dir_all(&dir).unwrap();
    let lock = std::fs::File::create(dir.join(".lock")).unwrap();
    let _held = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive)
        .unwrap_or_else(|(_, e)| panic!("cannot lock {}: {e}", dir.display()));
    let root = dir.join("root");
    let ready = dir.join("ready");
    if !ready.is_file() {
        let depends = run(
            Command::new("apt-cache").args(["depends", "linux-image-amd64"]),
            "apt-cache depends linux-image-amd64 (run apt-get update first)",
        );
        let package = depends
            .lines()
            .filter_map(|l| l.trim().strip_prefix("Depends: "))
            .find(|p| p.starts_with("linux-image-"))
            .unwrap_or_else(|| {
                panic!("linux-image-amd64 depends on no linux-image package: {depends}")
            })
            .to_string();
        let download = dir.join("download");
        let _ = std::fs::remove_dir_all(&download);
        std::fs::create_dir_all(&download).unwrap();
        run(
            Command::new("apt-get")
                .args(["download", &package])
                .current_dir(&download),
            &format!("apt-get download {package}"),
        );
        let deb = std::fs::read_dir(&download)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.extension().is_some_and(|x| x == "deb"))
            .unwrap_or_else(|| panic!("apt-get download {package} left no .deb"));
        let _ = std::fs::remove_dir_all(&root);
        run(
            Command::new("dpkg").arg("-x").arg(&deb).arg(&root),
            "dpkg -x",
        );
        let release = release_in(&root);
        run(
            Command::new("depmod").arg("-b").arg(&root).arg(&release),
            "depmod -b (install kmod)",
        );
        std::fs::remove_file(&deb).unwrap();
        std::fs::write(&ready, &package).unwrap();
    }
    let release = release_in(&root);
    TestKernel {
        image: root.join("boot").join(format!("vmlinuz-{release}")),
        modules: root.join("lib/modules").join(&release),
        release,
    }
}

/// The release of the one kernel in `root/boot`.
fn release_in(root: &Path) -> String {
    std::fs::read_dir(root.join("boot"))
        .unwrap_or_else(|e| panic!("{}: {e}", root.join("boot").display()))
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_prefix("vmlinuz-")
                .map(str::to_string)
        })
        .next()
        .unwrap_or_else(|| panic!("no vmlinuz in {}", root.join("boot").display()))
}
