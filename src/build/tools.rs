//! The programs and headers a kernel build needs, checked before anything is built, each
//! missing one named with the Debian package that has it. Some are needed by every build of
//! x86_64 (make, gcc, flex and bison for kconfig's parser, bc for the timer constants, the
//! libelf headers for objtool); others only when the config asks for what uses them
//! (the OpenSSL headers for module signing and the trusted keyring, depmod for modules,
//! pahole for BTF, cpio for the in-kernel headers archive, a compressor for the image's or
//! the modules' compression).

use crate::error::Usage;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a build needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// A program on the PATH.
    Program(&'static str),
    /// A header the C compiler finds (`#include <NAME>`).
    Header(&'static str),
}

/// A need, why, and the Debian package.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    pub need: Need,
    pub package: &'static str,
    /// None: every build; else the config symbol that needs it (`=y`).
    pub when: Option<&'static str>,
    pub why: &'static str,
}

/// Every tool a build may need.
pub const TOOLS: &[Tool] = &[
    Tool {
        need: Need::Program("make"),
        package: "make",
        when: None,
        why: "runs kbuild",
    },
    Tool {
        need: Need::Program("gcc"),
        package: "gcc",
        when: None,
        why: "the compiler",
    },
    Tool {
        need: Need::Program("ld"),
        package: "binutils",
        when: None,
        why: "the linker",
    },
    Tool {
        need: Need::Program("flex"),
        package: "flex",
        when: None,
        why: "kconfig's lexer",
    },
    Tool {
        need: Need::Program("bison"),
        package: "bison",
        when: None,
        why: "kconfig's parser",
    },
    Tool {
        need: Need::Program("bc"),
        package: "bc",
        when: None,
        why: "kernel/time's constants",
    },
    Tool {
        need: Need::Program("perl"),
        package: "perl",
        when: None,
        why: "kbuild's scripts",
    },
    Tool {
        need: Need::Header("gelf.h"),
        package: "libelf-dev",
        when: None,
        why: "objtool (x86_64)",
    },
    Tool {
        need: Need::Header("openssl/opensslv.h"),
        package: "libssl-dev",
        when: Some("CONFIG_SYSTEM_TRUSTED_KEYRING"),
        why: "certificate tools",
    },
    Tool {
        need: Need::Header("openssl/opensslv.h"),
        package: "libssl-dev",
        when: Some("CONFIG_MODULE_SIG"),
        why: "module signing",
    },
    Tool {
        need: Need::Program("depmod"),
        package: "kmod",
        when: Some("CONFIG_MODULES"),
        why: "indexes the built modules",
    },
    Tool {
        need: Need::Program("pahole"),
        package: "dwarves",
        when: Some("CONFIG_DEBUG_INFO_BTF"),
        why: "BTF type information",
    },
    Tool {
        need: Need::Program("cpio"),
        package: "cpio",
        when: Some("CONFIG_IKHEADERS"),
        why: "the in-kernel headers archive",
    },
    Tool {
        need: Need::Program("xz"),
        package: "xz-utils",
        when: Some("CONFIG_KERNEL_XZ"),
        why: "compresses the image",
    },
    Tool {
        need: Need::Program("zstd"),
        package: "zstd",
        when: Some("CONFIG_KERNEL_ZSTD"),
        why: "compresses the image",
    },
    Tool {
        need: Need::Program("lz4"),
        package: "lz4",
        when: Some("CONFIG_KERNEL_LZ4"),
        why: "compresses the image",
    },
    Tool {
        need: Need::Program("lzop"),
        package: "lzop",
        when: Some("CONFIG_KERNEL_LZO"),
        why: "compresses the image",
    },
    Tool {
        need: Need::Program("xz"),
        package: "xz-utils",
        when: Some("CONFIG_MODULE_COMPRESS_XZ"),
        why: "compresses the modules",
    },
    Tool {
        need: Need::Program("zstd"),
        package: "zstd",
        when: Some("CONFIG_MODULE_COMPRESS_ZSTD"),
        why: "compresses the modules",
    },
];

/// `name` on the PATH, if there.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// True when the C compiler finds `header`.
fn header_found(header: &str) -> bool {
    use std::io::Write;
    let child = std::process::Command::new("gcc")
        .args(["-E", "-x", "c", "-", "-o", "/dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return false;
    };
    if let Some(mut input) = child.stdin.take() {
        let _ = writeln!(input, "#include <{header}>");
    }
    child.wait().is_ok_and(|s| s.success())
}

fn present(need: Need) -> bool {
    match need {
        Need::Program(p) => on_path(p).is_some(),
        // Without gcc the header cannot be looked for; gcc is reported missing itself.
        Need::Header(h) => on_path("gcc").is_none() || header_found(h),
    }
}

/// Checks what every build needs (`config` None), or what `config` (symbol → value) needs
/// beyond it; the first missing one is one line naming it and its package.
pub fn check(config: Option<&BTreeMap<String, String>>) -> anyhow::Result<()> {
    let mut missing: Vec<&Tool> = Vec::new();
    for t in TOOLS {
        let wanted = match (t.when, config) {
            (None, None) => true,
            (Some(sym), Some(c)) => c.get(sym).is_some_and(|v| v == "y"),
            _ => false,
        };
        if wanted && !missing.iter().any(|m| m.need == t.need) && !present(t.need) {
            missing.push(t);
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = missing
        .iter()
        .map(|t| match t.need {
            Need::Program(p) => format!("{p} ({})", t.why),
            Need::Header(h) => format!("the header {h} ({})", t.why),
        })
        .collect();
    let mut packages: Vec<&str> = missing.iter().map(|t| t.package).collect();
    packages.dedup();
    Err(Usage(format!(
        "building the kernel needs {}, which {} missing: install {} (apt-get install {})",
        names.join(", "),
        if missing.len() == 1 { "is" } else { "are" },
        if packages.len() == 1 { "it" } else { "them" },
        packages.join(" ")
    ))
    .into())
}

/// The compiler's version, as the cache key and the records name it (`gcc --version`'s
/// first line, which kbuild also stores in the config as `CONFIG_CC_VERSION_TEXT`).
pub fn compiler_version() -> anyhow::Result<String> {
    let out = std::process::Command::new("gcc")
        .arg("--version")
        .env("LC_ALL", "C")
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                anyhow::Error::from(Usage(
                    "building the kernel needs gcc (the compiler), which is missing: install it \
                     (apt-get install gcc)"
                        .to_string(),
                ))
            } else {
                anyhow::anyhow!("cannot run gcc --version: {e}")
            }
        })?;
    let text = String::from_utf8_lossy(&out.stdout);
    let first = text.lines().next().unwrap_or("").trim().to_string();
    if !out.status.success() || first.is_empty() {
        anyhow::bail!("gcc --version said nothing");
    }
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_names_a_package_and_config_needs_are_conditional() {
        for t in TOOLS {
            assert!(!t.package.is_empty());
            if let Some(s) = t.when {
                assert!(s.starts_with("CONFIG_"));
            }
        }
        assert!(on_path("sh").is_some());
        assert!(on_path("no-such-program-here").is_none());
        // A config that needs nothing more: fine whatever is installed.
        let none = BTreeMap::from([("CONFIG_MODULES".to_string(), "n".to_string())]);
        let needs = TOOLS
            .iter()
            .filter(|t| {
                t.when
                    .is_some_and(|s| none.get(s).is_some_and(|v| v == "y"))
            })
            .count();
        assert_eq!(needs, 0);
    }
}
