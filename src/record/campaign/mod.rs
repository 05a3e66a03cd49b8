//! The campaign model: what a campaign is ([`spec`]), the state it keeps in the store
//! ([`state`]), its schedule ([`plan`]), and what a run made by a campaign step records about
//! that step ([`StepInfo`]): the campaign, the round, the side and its place in the round, the
//! box, the executor, and the kernel, command line, guest and boot it was measured under, as
//! read back from where the workload ran (not as asked for). `compare` pairs runs of one
//! campaign by (box, round); the analysis treats each run as one boot. The engine that runs
//! campaigns is `crate::campaign`.

pub mod plan;
pub mod spec;
pub mod state;

use serde::{Deserialize, Serialize};

/// The campaign step a run belongs to (`RunRecord::campaign`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StepInfo {
    /// The campaign's name (its runs are labelled `NAME/SIDE`).
    pub campaign: String,
    /// Round number, from 1.
    pub round: u32,
    /// The side's name: `base` or `patched`.
    pub side: String,
    /// Position of the step in its round, from 0 (0 = ran first).
    pub slot: u32,
    /// The box that ran the step (a lab's agent name; empty on a single machine).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub r#box: String,
    /// Which executor ran it: `local`, `vm`, `kexec`.
    pub executor: String,
    /// Which attempt this was (1, or 2 after a retry).
    #[serde(default = "one")]
    pub attempt: u32,
    /// The kernel the workload ran on.
    pub kernel: KernelInfo,
    /// The side's setup command, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<String>,
    /// The scratch file system the workload was given, e.g. `ext4:1G on /dev/ram0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scratch: Option<String>,
    /// The guest, for the `vm` executor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest: Option<GuestInfo>,
    /// The boot, where the executor knows it (`kexec`, `vm`, `local`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot: Option<BootInfo>,
    /// Both guests of a duet round ran at once, this one on `guest.cpus`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub duet: bool,
    /// The processes the step's setup or workload left running, which the step ended when
    /// its workload was over (`NAME (pid N)`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub leftovers: Vec<String>,
    /// The build of the side's kernel, when patchbench built it (`campaign start --tree`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildRef>,
}

/// A kernel patchbench built (`crate::build`), as a campaign's side and each of its runs
/// record it: enough to find the build in a cache and to say what it was made of.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct BuildRef {
    /// The build's id in the cache (16 hex digits of its key).
    pub id: String,
    /// The commit built (after the patches).
    pub commit: String,
    /// The commit the ref named, before the patches.
    pub base_commit: String,
    /// The ref as given (`HEAD`, `v6.1`).
    pub git_ref: String,
    /// The subjects of the patches applied, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<String>,
    /// How the config was chosen: `tiny`, `running`, `file NAME`, `resolved`.
    pub config: String,
    /// SHA-256 of the resolved `.config`, hex.
    pub config_sha256: String,
    /// The compiler's version (`gcc --version`'s first line).
    pub compiler: String,
    /// The built kernel's release.
    pub release: String,
}

impl BuildRef {
    /// One line: `build 0123456789abcdef: 5cd5dc9f6349 (HEAD 1a2b3c4d5e6f + "subject"), config tiny 9f8e7d6c5b4a, gcc ...`.
    pub fn line(&self) -> String {
        let patches = if self.patches.is_empty() {
            String::new()
        } else {
            format!(
                " + {}",
                self.patches
                    .iter()
                    .map(|s| format!("{s:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        format!(
            "build {}: commit {} ({} {}{patches}), config {} {}, {}",
            self.id,
            short(&self.commit),
            self.git_ref,
            short(&self.base_commit),
            self.config,
            short(&self.config_sha256),
            self.compiler
        )
    }
}

/// The first 12 characters of a hash.
fn short(h: &str) -> &str {
    &h[..h.len().min(12)]
}

fn one() -> u32 {
    1
}

/// The kernel a step ran on, read where the workload ran.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct KernelInfo {
    /// `uname -r`.
    pub release: String,
    /// The image booted (a path on the host), when the side named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// SHA-256 of that image, hex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_sha256: Option<String>,
    /// `/proc/cmdline` as read where the workload ran, with the values of secret-looking
    /// words replaced ([`redact_cmdline`]).
    pub cmdline: String,
    /// The words the side asked for on the command line (each was found in `cmdline`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cmdline_words: Vec<String>,
}

/// The guest a `vm` step ran in.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct GuestInfo {
    /// `kvm` or `tcg`.
    pub accelerator: String,
    /// The exact QEMU command, one word per entry.
    pub qemu_command: Vec<String>,
    pub vcpus: u32,
    pub memory_mib: u64,
    /// Host CPUs every QEMU thread was bound to.
    pub cpus: Vec<u32>,
}

/// The boot a step ran in.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct BootInfo {
    /// `/proc/sys/kernel/random/boot_id`.
    pub boot_id: String,
    /// Seconds from boot to the workload's start.
    pub since_boot_s: f64,
    /// How this boot came about: `kexec`, `firmware`, `qemu` (a fresh guest), or `unknown`.
    pub via: String,
}

/// The key of a campaign run's warnings in `RunRecord::extra`: a list of sentences saying
/// what makes its numbers doubtful (measured under TCG; a workload not fit for a duet).
pub const WARNINGS_KEY: &str = "warnings";

/// A run's warnings (`extra.warnings`).
pub fn run_warnings(record: &crate::record::RunRecord) -> Vec<String> {
    record
        .extra
        .get(WARNINGS_KEY)
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|w| w.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Adds a warning to a run (`extra.warnings`).
pub fn add_run_warning(record: &mut crate::record::RunRecord, text: String) {
    let list = record
        .extra
        .entry(WARNINGS_KEY.to_string())
        .or_insert_with(|| serde_json::Value::Array(Vec::new()));
    if let serde_json::Value::Array(items) = list {
        items.push(serde_json::Value::String(text));
    }
}

impl StepInfo {
    /// The label the step's run is stored under: `NAME/SIDE`.
    pub fn label(&self) -> String {
        format!("{}/{}", self.campaign, self.side)
    }

    /// What identifies the block a run belongs to: (box, round).
    pub fn block(&self) -> (String, u32) {
        (self.r#box.clone(), self.round)
    }
}

/// What a key of a command-line word says about a secret value (`rootpass=`, `api_token=`,
/// `luks.key=`...): such values are stored as `***`. A kernel's command line can carry them
/// (provisioning tokens, initramfs passwords) and a run's record goes to a shared store.
const SECRET_KEYS: [&str; 7] = [
    "pass",
    "pwd",
    "secret",
    "token",
    "credential",
    "apikey",
    "api_key",
];

/// `cmdline` with the value of every `KEY=VALUE` word whose key names a secret (any of
/// [`SECRET_KEYS`] in it, or ending in `key`) replaced by `***`.
pub fn redact_cmdline(cmdline: &str) -> String {
    cmdline
        .split(' ')
        .map(|word| match word.split_once('=') {
            Some((key, value)) if !value.is_empty() && is_secret_key(key) => format!("{key}=***"),
            _ => word.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    SECRET_KEYS.iter().any(|s| k.contains(s)) || k.ends_with("key")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_values_of_a_command_line_are_not_kept() {
        assert_eq!(
            redact_cmdline(
                "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro pti=off rootpass=hunter2 \
                 cloud.api_token=abc luks.key=/k quiet"
            ),
            "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro pti=off rootpass=*** cloud.api_token=*** \
             luks.key=*** quiet"
        );
        // Nothing else changes: keys that merely look alike, words without values.
        let plain = "console=ttyS0 keyboard=us passive mitigations=off";
        assert_eq!(redact_cmdline(plain), plain);
    }
}
