//! The arguments of `patchbench campaign` and its subcommands, and the groups of options a
//! bisection shares with `campaign start` ([`StepArgs`]: what every step runs and where).
//! Nothing here imports the other files of this folder: they read these structs.

use crate::commands::shared::StoreArg;
use crate::record::campaign::spec::{ExecutorKind, Order, Scratch};
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct CampaignArgs {
    #[command(subcommand)]
    pub command: CampaignCommand,
}

#[derive(Debug, Clone, Subcommand)]
pub enum CampaignCommand {
    /// Plan a campaign and run it: every round runs each side once, in random (or ABBA) order.
    Start(Box<StartArgs>),
    /// Continue a campaign after Ctrl-C, a crash or a reboot (re-runs only unfinished steps).
    Resume(ResumeArgs),
    /// Progress, ETA and the primary metric's interval so far (all campaigns without NAME).
    Status(StatusArgs),
    /// The comparison of the two sides (paired by round), the rounds, drift and failures.
    Report(ReportArgs),
    /// End a campaign after its current step (a kexec campaign: at its next boot, which
    /// returns to the kernel it started from).
    Stop(crate::commands::shared::NameArgs),
    /// Write and enable the systemd unit that runs `campaign resume --boot` once per boot
    /// (kexec campaigns).
    InstallHook(HookArgs),
    /// Disable and remove the unit of install-hook.
    RemoveHook,
    /// A lab campaign: free the place of a box that is gone for good; its rounds not begun go
    /// to a free place another box takes, a round it left half done is recorded as failed.
    ReleaseBox(ReleaseBoxArgs),
}

/// Options of one side.
#[derive(Debug, Clone, Args, Default)]
#[command(next_help_heading = "Sides")]
pub struct SideArgs {
    /// Kernel image and extra command-line words of the base side: IMAGE[:WORDS], or :WORDS for
    /// the running kernel's image (e.g. --base /boot/IMAGE:"pti=on"). With
    /// --tree: the git ref to build, REF[:WORDS] (e.g. --base v6.1).
    #[arg(long, value_name = "IMAGE[:WORDS]", allow_hyphen_values = true)]
    pub base: Option<String>,
    /// Kernel image and extra command-line words of the patched side (as --base). With --tree:
    /// REF[:WORDS] (default: the base side's ref).
    #[arg(long, value_name = "IMAGE[:WORDS]", allow_hyphen_values = true)]
    pub patched: Option<String>,
    /// With --tree: a patch applied on the base side's ref (mbox, series with cover letter,
    /// or diff); repeatable, in order.
    #[arg(long = "base-patch", value_name = "FILE", requires = "tree")]
    pub base_patches: Vec<PathBuf>,
    /// With --tree: a patch applied on the patched side's ref; repeatable, in order.
    #[arg(long = "patched-patch", value_name = "FILE", requires = "tree")]
    pub patched_patches: Vec<PathBuf>,
    /// Initrd to boot the base image with.
    #[arg(long, value_name = "FILE")]
    pub base_initrd: Option<PathBuf>,
    /// Initrd to boot the patched image with.
    #[arg(long, value_name = "FILE")]
    pub patched_initrd: Option<PathBuf>,
    /// The base image's modules (default: lib/modules/<release> beside its boot/).
    #[arg(long, value_name = "DIR")]
    pub base_modules: Option<PathBuf>,
    /// The patched image's modules (default: lib/modules/<release> beside its boot/).
    #[arg(long, value_name = "DIR")]
    pub patched_modules: Option<PathBuf>,
    /// Shell command run before each base step, in the shell that then execs the workload
    /// (`echo $$ > /sys/fs/cgroup/.../cgroup.procs` puts the workload in a cgroup).
    #[arg(long, value_name = "CMD")]
    pub base_setup: Option<String>,
    /// Shell command run before each patched step (as --base-setup).
    #[arg(long, value_name = "CMD")]
    pub patched_setup: Option<String>,
}

/// The lab options of `campaign start`: the boxes whose agents run it.
#[derive(Debug, Clone, Args, Default)]
#[command(next_help_heading = "Lab campaigns")]
pub struct LabArgs {
    /// A lab campaign: agents (`patchbench agent`) on N boxes run it, each box every round and
    /// both sides (a box is a block of the analysis); `start` only plans it. The store must be
    /// one the boxes share (--store postgres://...).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub boxes: Option<u32>,
    /// A lab campaign: only boxes whose agent has this tag run it (repeat for several: every
    /// one is needed). Without --boxes, one box.
    #[arg(long = "tag", value_name = "TAG", value_parser = crate::args::parse_tag)]
    pub tags: Vec<String>,
}

/// The options of a kexec campaign: where its last boot returns, and when it starts.
#[derive(Debug, Clone, Args, Default)]
#[command(next_help_heading = "kexec campaigns")]
pub struct KexecArgs {
    /// kexec: the kernel image the last boot returns to (default: the running kernel's image
    /// in /boot).
    #[arg(long, value_name = "IMAGE")]
    pub return_to: Option<PathBuf>,
    /// kexec: the initrd of the kernel returned to (default: initrd.img-RELEASE beside it;
    /// `none` for none).
    #[arg(long, value_name = "FILE")]
    pub return_initrd: Option<PathBuf>,
    /// kexec: start without asking (the machine reboots into the first step's kernel).
    #[arg(long)]
    pub yes: bool,
    /// kexec: seconds between the start and the first reboot (Ctrl-C cancels meanwhile).
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = crate::args::parse_duration_or_zero)]
    pub reboot_in: f64,
}

/// What every step of a campaign runs and where: the schedule, the executor and its
/// machine, the primary metric and the store. `campaign start` and `bisect start` both take
/// exactly these, besides their own.
#[derive(Debug, Clone, Args)]
pub struct StepArgs {
    /// Build both sides' kernels from this git tree (never written): --base and --patched
    /// are refs, --base-patch and --patched-patch their patches; the config is resolved once,
    /// on the base side, and the patched side is built with it (docs/build.md).
    #[arg(long, value_name = "DIR")]
    pub tree: Option<PathBuf>,
    #[command(flatten)]
    pub build: crate::commands::build::BuildOpts,
    /// Rounds to run (each runs both sides once). Default: the fewest with which `compare`
    /// gives a paired verdict at --confidence (7 at 95 %), unless --until is given.
    #[arg(long, value_name = "N", conflicts_with = "until",
          value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub rounds: Option<u32>,
    /// Run until the primary metric's paired interval is within ±PCT %: a pilot (3 rounds, or
    /// as many as fit in 2 minutes for short rounds, at most 30), then as many rounds as
    /// Stein's two-stage rule needs (decided once, from the pilot's spread, never from its
    /// difference), capped by --max-rounds and --max-time.
    #[arg(long, value_name = "PCT", value_parser = crate::args::parse_until)]
    pub until: Option<f64>,
    /// With --until: the most rounds.
    #[arg(long, value_name = "N", default_value_t = 30, requires = "until",
          value_parser = clap::value_parser!(u32).range(3..=10000))]
    pub max_rounds: u32,
    /// With --until: the most time for the whole campaign (e.g. 3600, 90m, 8h).
    #[arg(long, value_name = "D", requires = "until", value_parser = crate::args::parse_span)]
    pub max_time: Option<f64>,
    /// Order of the sides in a round: random (a coin from the seed for each pair of rounds, the
    /// pair's second round the other way round) or abba.
    #[arg(long, value_enum, default_value = "random")]
    pub order: Order,
    /// Seed of the random order (default: a new one, recorded).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Where steps run: local (this kernel; sides differ by setup commands), vm (a QEMU guest
    /// per step booting the side's kernel), kexec (this machine, rebooted into each kernel).
    /// Default: vm when a side names a kernel or command-line words, else local.
    #[arg(long, value_enum)]
    pub executor: Option<ExecutorKind>,
    /// Run both sides' guests at once on disjoint CPU sets, each measured pass started together
    /// (vm only).
    #[arg(long)]
    pub duet: bool,
    /// A fresh file system for every step, given to the workload as its --dir: FS:SIZE, e.g.
    /// ext4:1G (a RAM disk in a guest, a loop device with local).
    #[arg(long, value_name = "FS:SIZE", value_parser = crate::args::parse_scratch)]
    pub scratch: Option<Scratch>,
    /// vCPUs of each guest (vm). Default: 2, or 1 on a machine with fewer than 4 CPUs.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=512))]
    pub vcpus: Option<u32>,
    /// Memory of each guest in MiB (vm).
    #[arg(long, value_name = "MIB", default_value_t = 2048,
          value_parser = clap::value_parser!(u64).range(256..=1048576))]
    pub memory: u64,
    /// Host CPUs every QEMU thread is bound to (vm), e.g. 2-5 (default: the last vCPUs' worth
    /// of CPUs this process may use; a duet splits them).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Allow TCG (software emulation) when KVM is not usable: its numbers time the emulator,
    /// not the kernel; for testing the campaign only.
    #[arg(long)]
    pub allow_tcg: bool,
    /// The QEMU program (vm).
    #[arg(long, value_name = "PATH", default_value = "qemu-system-x86_64")]
    pub qemu: PathBuf,
    /// Seconds a step may take before it is stopped and counted as failed.
    #[arg(long, value_name = "SECS", default_value = "3600", value_parser = crate::args::parse_duration)]
    pub step_timeout: f64,
    /// Seconds to wait before each step's workload (kexec: after the boot).
    #[arg(long, value_name = "SECS", default_value = "0", value_parser = crate::args::parse_duration_or_zero)]
    pub settle: f64,
    /// The metric the schedule and status follow, as a metric key (e.g.
    /// 'unixbench.score[copies=1,test=pipe]'); default: the workload's headline (the System
    /// Benchmarks Index at the fewest copies, AIM7 jobs/min at the highest load, ...).
    #[arg(long, value_name = "KEY")]
    pub primary: Option<String>,
    /// Two-sided confidence of the interval --until aims at and status shows.
    #[arg(long, value_name = "C", default_value = "0.95", value_parser = crate::args::parse_fraction)]
    pub confidence: f64,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Args)]
pub struct StartArgs {
    /// The campaign's name; its runs are stored under the labels NAME/base and NAME/patched.
    #[arg(value_name = "NAME")]
    pub name: String,
    #[command(flatten)]
    pub sides: SideArgs,
    #[command(flatten)]
    pub steps: StepArgs,
    #[command(flatten)]
    pub lab: LabArgs,
    #[command(flatten)]
    pub kexec: KexecArgs,
    /// The measuring command and its arguments, after `--`: run ..., aim7 ..., scale ...,
    /// model ..., exec -- PROGRAM ... (without --json, --store, --label: the campaign stores
    /// each step itself).
    #[arg(last = true, required = true, value_name = "WORKLOAD")]
    pub workload: Vec<String>,
}

#[derive(Debug, Clone, Args)]
pub struct ResumeArgs {
    /// The campaign (not with --boot).
    #[arg(
        value_name = "NAME",
        required_unless_present = "boot",
        conflicts_with = "boot"
    )]
    pub name: Option<String>,
    /// Do this boot's part of the kexec campaign whose step it is (what the boot hook runs;
    /// quiet when there is none).
    #[arg(long)]
    pub boot: bool,
    /// kexec: continue without asking (it reboots into the next step's kernel).
    #[arg(long)]
    pub yes: bool,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Args)]
pub struct HookArgs {
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Args)]
pub struct StatusArgs {
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: StatusFormat,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum StatusFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Noise band of the verdicts, as in `compare`.
    #[arg(long, value_name = "PCT", default_value = "1", value_parser = crate::args::parse_pct)]
    pub noise: f64,
    /// Rows of the second table, "what changed with it" (the monitor rows that changed,
    /// largest change first, each with its interval and a q-value over the monitor rows
    /// alone): a number, or `all`.
    #[arg(long, value_name = "N|all", default_value = "20", value_parser = crate::args::parse_why)]
    pub why: crate::args::WhyRows,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Args)]
pub struct ReleaseBoxArgs {
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The box (as `campaign status` names it).
    #[arg(value_name = "BOX", value_parser = crate::args::parse_tag)]
    pub r#box: String,
    #[command(flatten)]
    pub store: StoreArg,
}
