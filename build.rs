//! Build script: records the git commit and the rustc that built patchbench, so every result
//! can say exactly which build produced it; and links the two small programs whose process
//! costs the tests measure (`patchbench-execl`, `patchbench-spawn`) with lazy binding, as a C
//! program is linked by default (rustc asks for `-z now`; the later `-z lazy` wins).
use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".to_string());
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let rustc_version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".to_string());
    let profile = std::env::var("PROFILE").unwrap_or_default();
    println!("cargo:rustc-env=PATCHBENCH_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=PATCHBENCH_RUSTC={rustc_version}");
    println!("cargo:rustc-env=PATCHBENCH_PROFILE={profile}");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs/heads");
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        for bin in ["patchbench-execl", "patchbench-spawn"] {
            println!("cargo:rustc-link-arg-bin={bin}=-Wl,-z,lazy");
        }
    }
}
