//! What a campaign is, as `campaign start` fixed it and the store keeps it: its two sides
//! (kernel, command-line words, setup command), the workload, the schedule (how many rounds,
//! in which order), the executor and its options. A spec is checked once, when the campaign
//! starts; every later boot or agent reads it back from the store.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The names of the two sides, in the order they are listed.
pub const SIDES: [&str; 2] = ["base", "patched"];

/// A campaign as planned.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CampaignSpec {
    /// Unique in its store; the sides' runs are labelled `NAME/base` and `NAME/patched`.
    pub name: String,
    /// Exactly two: `base`, then `patched`.
    pub sides: Vec<SideSpec>,
    /// The measuring command and its arguments, as after `--` (`run --quick pipe`).
    pub workload: Vec<String>,
    pub schedule: Schedule,
    pub order: Order,
    /// Seed of the per-round order (and of a duet's CPU-set swaps).
    pub seed: u64,
    pub executor: ExecutorKind,
    /// Both sides' guests at once on disjoint CPU sets (`vm` only).
    #[serde(default)]
    pub duet: bool,
    /// A fresh file system for each step, handed to the workload as its `--dir`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scratch: Option<Scratch>,
    /// Guest settings (`vm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm: Option<VmOptions>,
    /// Bare-metal settings (`kexec`): where the campaign returns at its end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kexec: Option<KexecOptions>,
    /// A lab campaign: agents on this many boxes run it (`patchbench agent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lab: Option<LabSpec>,
    /// Seconds a step may take before it is stopped and counted as failed.
    pub step_timeout_s: f64,
    /// Seconds to wait before each step's workload (after a boot, after the setup command).
    #[serde(default)]
    pub settle_s: f64,
    /// The metric the schedule and `status` follow (a metric key, e.g.
    /// `unixbench.index[copies=1]`); None: chosen from the first stored run
    /// (by the campaign engine, `crate::campaign`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary: Option<String>,
    /// Two-sided confidence of the interval `--until` aims at and `status` shows.
    pub confidence: f64,
    /// The patchbench program the steps run (the one that started the campaign).
    pub program: PathBuf,
    /// Host name of the machine that started it.
    pub started_on: String,
    /// The sides' kernels were built by patchbench from a tree (`campaign start --tree`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<CampaignBuild>,
}

/// How a campaign's kernels were built: from which tree, with which config (resolved once, on
/// the base side), and whether the patched side's config came out different.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CampaignBuild {
    /// The tree as given to `campaign start` (a lab agent may have its own: `agent --tree`).
    pub tree: PathBuf,
    /// How the config was chosen (`tiny`, `running`, `file NAME`).
    pub config: String,
    /// The base side's resolved `.config`, which both sides are built with (and every box).
    pub config_text: String,
    /// What `olddefconfig` changed in it on the patched side (`CONFIG_X: y -> n`); empty when
    /// both sides have the same config.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config_diff: Vec<String>,
}

/// What a side's kernel was built from (so a lab box can build the same key) and what it
/// became.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SideBuild {
    /// The ref as given (`HEAD`, `v6.1`).
    pub git_ref: String,
    /// The working tree's uncommitted changes (`--include-uncommitted`), applied before
    /// `patches`, with the subject they were committed with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncommitted: Option<PatchSource>,
    /// The side's patch files, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<PatchSource>,
    pub build: super::BuildRef,
}

/// A patch file as given: its name, its SHA-256 and its bytes (base64).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PatchSource {
    pub name: String,
    pub sha256: String,
    pub base64: String,
    /// The subject it was committed with, when it is not its own (a plain diff of the
    /// working tree's uncommitted changes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

/// One side of a campaign.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SideSpec {
    /// `base` or `patched`.
    pub name: String,
    /// The kernel to boot; None: the running kernel (the `local` executor, or an A/A).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelSpec>,
    /// Words added to the kernel command line (`pti=off`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cmdline: Vec<String>,
    /// A shell command run before each of this side's steps, in the shell that then execs the
    /// workload (so `echo $$ > cgroup.procs` puts the workload in a cgroup).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<String>,
    /// The kernel was built by patchbench (`campaign start --tree`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<SideBuild>,
}

/// A kernel image and what goes with it, as checked when the campaign started.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KernelSpec {
    /// The image (bzImage / vmlinuz).
    pub image: PathBuf,
    /// SHA-256 of the image when the campaign started, hex.
    pub sha256: String,
    /// The release the image says it is (its version string's first word), e.g. `6.1.0-27-amd64`.
    pub release: String,
    /// An initrd to boot with, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initrd: Option<PathBuf>,
    /// The image's modules directory (`lib/modules/<release>`), if found or given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modules: Option<PathBuf>,
}

impl KernelSpec {
    /// The file name of a release's kernel image, as distributions install it in `/boot` and
    /// as the build cache keeps it in a build's `boot/`: the one place it is spelled.
    pub fn image_file_name(release: &str) -> String {
        format!("vmlinuz-{release}")
    }
}

/// How many rounds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub enum Schedule {
    /// A fixed number of rounds.
    Rounds { rounds: u32 },
    /// A pilot of [`PILOT_ROUNDS`] rounds, then as many as Stein's two-stage rule needs for
    /// the primary metric's paired interval to reach ±`pct` %, capped.
    Until {
        pct: f64,
        max_rounds: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_time_s: Option<f64>,
    },
}

/// Rounds in the pilot of `--until`.
pub const PILOT_ROUNDS: u32 = 3;

impl Schedule {
    /// Rounds planned before any decision: all of them, or the pilot.
    pub fn initial_rounds(&self) -> u32 {
        match self {
            Schedule::Rounds { rounds } => *rounds,
            Schedule::Until { max_rounds, .. } => PILOT_ROUNDS.min(*max_rounds),
        }
    }
}

/// In which order a round runs its sides.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    /// Drawn per round from the campaign's seed.
    Random,
    /// base, patched; patched, base; and again.
    Abba,
}

/// Where a step runs.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ExecutorKind {
    /// The running kernel for both sides; sides differ by their setup commands.
    Local,
    /// A fresh QEMU guest per step, booting the side's kernel on the host's root.
    Vm,
    /// This machine, rebooted into each step's kernel with kexec.
    Kexec,
}

impl ExecutorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ExecutorKind::Local => "local",
            ExecutorKind::Vm => "vm",
            ExecutorKind::Kexec => "kexec",
        }
    }
}

/// `--scratch FS:SIZE`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Scratch {
    /// File system type: `ext4` (made with `mkfs.ext4`).
    pub fs: String,
    /// Size in bytes.
    pub bytes: u64,
}

impl std::fmt::Display for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}M", self.fs, self.bytes >> 20)
    }
}

/// Guest settings of the `vm` executor.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VmOptions {
    pub vcpus: u32,
    pub memory_mib: u64,
    /// Host CPUs every QEMU thread is bound to (each duet guest gets its own half).
    pub cpus: Vec<u32>,
    /// TCG was allowed (`--allow-tcg`); without it a machine without usable KVM is refused.
    pub allow_tcg: bool,
    /// The QEMU program.
    pub qemu: PathBuf,
}

/// Settings of the `kexec` executor, fixed at `campaign start`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KexecOptions {
    /// The kernel the last boot returns to: the one the campaign was started from (or
    /// `--return-to`), with the command line every step's words are added to.
    pub return_to: BootTarget,
}

/// A kernel to boot: image, initrd and the whole command line.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BootTarget {
    pub image: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initrd: Option<PathBuf>,
    /// The command line, without patchbench's own words.
    pub cmdline: String,
}

impl CampaignSpec {
    /// The side called `name`.
    pub fn side(&self, name: &str) -> Option<&SideSpec> {
        self.sides.iter().find(|s| s.name == name)
    }

    /// The measuring command (`run`, `aim7`, `scale`, `model`).
    pub fn workload_command(&self) -> &str {
        self.workload.first().map(String::as_str).unwrap_or("")
    }
}

/// Which boxes run a lab campaign: `boxes` of them, each having every tag in `tags`; each box
/// runs every round, both sides.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LabSpec {
    pub boxes: u32,
    #[serde(default)]
    pub tags: Vec<String>,
}

impl LabSpec {
    /// True when a box with `tags` that offers `executors` may run this campaign's steps.
    pub fn admits(
        &self,
        executor: ExecutorKind,
        tags: &[String],
        executors: &[ExecutorKind],
    ) -> bool {
        executors.contains(&executor) && self.tags.iter().all(|t| tags.contains(t))
    }
}
