//! `patchbench campaign`: base and patched kernels (or settings) measured in alternation,
//! round after round, until the schedule is done; the state lives in the store.
//!
//! - `start NAME [sides] [schedule] [executor] -- WORKLOAD...`: checks everything (sides'
//!   images, the workload, the executor's needs) before anything is stored or started, stores
//!   the campaign with its first rounds, then runs it in the foreground.
//! - `resume NAME`: takes back steps whose owner died (Ctrl-C, SIGKILL, a crash) and goes on.
//! - `status [NAME]`: progress, ETA, the primary metric's paired interval so far.
//! - `report NAME`: the comparison of the two sides, the rounds, drift, and the failed steps.
//! - `stop NAME`: ends it after the current step.
//! - `resume --boot`: a kexec campaign's part of this boot (the boot hook runs it);
//!   `install-hook` / `remove-hook` write and remove the systemd unit that does.
//!
//! A kexec campaign reboots this machine: `start` checks everything first (each fault one
//! line, exit 2, nothing changed), then asks on a terminal or wants `--yes`.

use super::shared::StoreArg;
use crate::campaign::driver::{Driver, End};
use crate::campaign::executor::Executor;
use crate::campaign::kernel_image;
use crate::error::{usage, Usage};
use crate::progress::Progress;
use crate::record::campaign::plan;
use crate::record::campaign::spec::{
    CampaignSpec, ExecutorKind, KernelSpec, LabSpec, Order, Schedule, Scratch, SideSpec,
};
use crate::record::campaign::state::{Campaign, CampaignState, Owner, StepState};
use crate::store::db::Store;
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};

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
    Stop(StopArgs),
    /// Write and enable the systemd unit that runs `campaign resume --boot` once per boot
    /// (kexec campaigns).
    InstallHook(HookArgs),
    /// Disable and remove the unit of install-hook.
    RemoveHook,
}

/// Options of one side.
#[derive(Debug, Clone, Args, Default)]
pub struct SideArgs {
    /// Kernel image and extra command-line words of the base side: IMAGE[:WORDS], or :WORDS for
    /// the running kernel's image (e.g. --base /boot/vmlinuz-6.1.0-27-amd64:"pti=on").
    #[arg(long, value_name = "IMAGE[:WORDS]", allow_hyphen_values = true)]
    pub base: Option<String>,
    /// Kernel image and extra command-line words of the patched side (as --base).
    #[arg(long, value_name = "IMAGE[:WORDS]", allow_hyphen_values = true)]
    pub patched: Option<String>,
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

#[derive(Debug, Clone, Args)]
pub struct StartArgs {
    /// The campaign's name; its runs are stored under the labels NAME/base and NAME/patched.
    #[arg(value_name = "NAME")]
    pub name: String,
    #[command(flatten)]
    pub sides: SideArgs,
    /// Rounds to run (each runs both sides once). Default: 5, unless --until is given.
    #[arg(long, value_name = "N", conflicts_with = "until",
          value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub rounds: Option<u32>,
    /// Run until the primary metric's paired interval is within ±PCT %: a pilot of 3 rounds,
    /// then as many rounds as Stein's two-stage rule needs (decided once, from the pilot's
    /// spread, never from its difference), capped by --max-rounds and --max-time.
    #[arg(long, value_name = "PCT", value_parser = crate::args::parse_precision)]
    pub until: Option<f64>,
    /// With --until: the most rounds.
    #[arg(long, value_name = "N", default_value_t = 30, requires = "until",
          value_parser = clap::value_parser!(u32).range(3..=10000))]
    pub max_rounds: u32,
    /// With --until: the most time for the whole campaign (e.g. 3600, 90m, 8h).
    #[arg(long, value_name = "D", requires = "until", value_parser = parse_span)]
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
    /// A lab campaign: agents (`patchbench agent`) on N boxes run it, each box every round and
    /// both sides (a box is a block of the analysis); `start` only plans it. The store must be
    /// one the boxes share (--store postgres://...).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub boxes: Option<u32>,
    /// A lab campaign: only boxes whose agent has this tag run it (repeat for several: every
    /// one is needed). Without --boxes, one box.
    #[arg(long = "tag", value_name = "TAG", value_parser = crate::args::parse_tag)]
    pub tags: Vec<String>,
    /// A fresh file system for every step, given to the workload as its --dir: FS:SIZE, e.g.
    /// ext4:1G (a RAM disk in a guest, a loop device with local).
    #[arg(long, value_name = "FS:SIZE", value_parser = parse_scratch)]
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
    /// kexec: the kernel image the last boot returns to (default: the running kernel's,
    /// /boot/vmlinuz-RELEASE).
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
    /// The measuring command and its arguments, after `--`: run ..., aim7 ..., scale ...,
    /// model ... (without --json, --store, --label: the campaign stores each step itself).
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
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Debug, Clone, Args)]
pub struct StopArgs {
    #[arg(value_name = "NAME")]
    pub name: String,
    #[command(flatten)]
    pub store: StoreArg,
}

/// Runs `patchbench campaign ...`.
pub fn execute(a: &CampaignArgs) -> anyhow::Result<i32> {
    match &a.command {
        CampaignCommand::Start(s) => start(s),
        CampaignCommand::Resume(r) => resume(r),
        CampaignCommand::Status(s) => status(s),
        CampaignCommand::Report(r) => report(r),
        CampaignCommand::Stop(s) => stop(s),
        CampaignCommand::InstallHook(h) => super::campaign_kexec::install_hook(&h.store),
        CampaignCommand::RemoveHook => super::campaign_kexec::remove_hook(),
    }
}

/// A campaign name: letters, digits and `._-`, up to 64 characters (it becomes a label prefix
/// and is typed on command lines).
fn check_name(name: &str) -> anyhow::Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && !name.starts_with(['-', '.']);
    if ok {
        Ok(())
    } else {
        usage(format!(
            "campaign name {:?} is not usable: use 1-64 letters, digits, '.', '_' or '-', not \
             starting with '-' or '.'",
            crate::safe_text::field(name)
        ))
    }
}

/// `3600`, `90s`, `90m`, `8h`, `2d` as seconds.
fn parse_span(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('s') => (&t[..t.len() - 1], 1.0),
        Some('m') => (&t[..t.len() - 1], 60.0),
        Some('h') => (&t[..t.len() - 1], 3600.0),
        Some('d') => (&t[..t.len() - 1], 86400.0),
        _ => (t, 1.0),
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v * mult <= 366.0 * 86400.0 => Ok(v * mult),
        _ => Err(format!(
            "{s:?} is not a time span; give seconds or a number with s, m, h or d (e.g. 8h)"
        )),
    }
}

/// `ext4:1G` as a [`Scratch`].
fn parse_scratch(s: &str) -> Result<Scratch, String> {
    let (fs, size) = s
        .split_once(':')
        .ok_or_else(|| format!("{s:?}: give FS:SIZE, e.g. ext4:1G"))?;
    if fs != "ext4" {
        return Err(format!(
            "scratch file system {fs:?} is not supported; use ext4 (e.g. ext4:1G)"
        ));
    }
    let kib = crate::args::parse_kib(size)?;
    if !(16 * 1024..=1 << 30).contains(&kib) {
        return Err(format!(
            "a scratch file system must be from 16M to 1T, got {size}"
        ));
    }
    Ok(Scratch {
        fs: fs.to_string(),
        bytes: kib * 1024,
    })
}

/// The workload, parsed with the measuring commands' own argument definitions.
#[derive(Debug, Parser)]
#[command(name = "patchbench", no_binary_name = true)]
struct Workload {
    #[command(subcommand)]
    command: MeasuringCommand,
}

#[derive(Debug, Subcommand)]
enum MeasuringCommand {
    Run(super::run::RunArgs),
    Aim7(super::aim7::Aim7Args),
    Scale(super::scale::ScaleArgs),
    Model(super::model::ModelArgs),
}

/// Checks the workload: a measuring command with valid arguments, none of the options the
/// campaign sets itself, and no `--dir` together with `--scratch`.
fn check_workload(words: &[String], scratch: bool) -> anyhow::Result<()> {
    const MEASURING: [&str; 4] = ["run", "aim7", "scale", "model"];
    let first = words.first().map(String::as_str).unwrap_or("");
    if !MEASURING.contains(&first) {
        return usage(format!(
            "the workload after `--` must be a measuring command (run, aim7, scale or model) \
             with its arguments, got {:?}",
            crate::safe_text::field(first)
        ));
    }
    let parsed = Workload::try_parse_from(words).map_err(|e| {
        let text = e.to_string();
        let line = text
            .lines()
            .find(|l| l.starts_with("error:"))
            .unwrap_or("invalid arguments")
            .trim_start_matches("error: ");
        Usage(format!("the workload's arguments: {line}"))
    })?;
    struct Sets<'a> {
        json: bool,
        html: bool,
        other_file: Option<&'static str>,
        store: &'a super::shared::StoreOpts,
        dir: bool,
        list: bool,
    }
    let sets = match &parsed.command {
        MeasuringCommand::Run(r) => {
            super::run::plan(r)?;
            Sets {
                json: r.json.is_some(),
                html: r.html.is_some(),
                other_file: r.csv.as_ref().map(|_| "--csv"),
                store: &r.store,
                dir: r.dir.is_some(),
                list: false,
            }
        }
        MeasuringCommand::Aim7(a) => Sets {
            json: a.json.is_some(),
            html: a.html.is_some(),
            other_file: None,
            store: &a.store,
            dir: !a.dirs.is_empty(),
            list: false,
        },
        MeasuringCommand::Scale(s) => Sets {
            json: s.opts.json.is_some(),
            html: s.opts.html.is_some(),
            other_file: s
                .csv
                .as_ref()
                .map(|_| "--csv")
                .or(s.svg.as_ref().map(|_| "--svg")),
            store: &s.opts.store,
            dir: s.opts.dir.is_some(),
            list: s.list,
        },
        MeasuringCommand::Model(m) => Sets {
            json: m.opts.json.is_some(),
            html: m.opts.html.is_some(),
            other_file: None,
            store: &m.opts.store,
            dir: m.opts.dir.is_some(),
            list: m.list,
        },
    };
    let refused = if sets.json {
        Some("--json")
    } else if sets.html {
        Some("--html")
    } else if sets.store.store.is_some() {
        Some("--store")
    } else if sets.store.no_store {
        Some("--no-store")
    } else if sets.store.label.is_some() {
        Some("--label")
    } else {
        sets.other_file
    };
    if let Some(opt) = refused {
        return usage(format!(
            "the workload must not have {opt}: the campaign writes each step's JSON and stores \
             its run under NAME/base or NAME/patched itself; drop {opt}"
        ));
    }
    if sets.list {
        return usage("the workload must measure something; drop --list");
    }
    if sets.dir && scratch {
        return usage(
            "the workload's --dir and --scratch both say where the workload works; drop one",
        );
    }
    Ok(())
}

/// `IMAGE[:WORDS]` or `:WORDS`: the image (None: the running kernel's) and the words.
fn split_side(s: &str) -> (Option<PathBuf>, Vec<String>) {
    if Path::new(s).is_file() {
        return (Some(PathBuf::from(s)), Vec::new());
    }
    let (image, words) = match s.split_once(':') {
        Some((i, w)) => (i, w),
        None => (s, ""),
    };
    let image = (!image.is_empty()).then(|| PathBuf::from(image));
    (
        image,
        words.split_whitespace().map(str::to_string).collect(),
    )
}

/// The running kernel's image, for a side that gives command-line words only.
fn running_image() -> anyhow::Result<PathBuf> {
    let release = crate::campaign::executor::this_kernel().release;
    let p = PathBuf::from(format!("/boot/vmlinuz-{release}"));
    if p.is_file() {
        Ok(p)
    } else {
        usage(format!(
            "a side without an image boots the running kernel, but {} does not exist; give \
             the image (--base IMAGE:WORDS)",
            p.display()
        ))
    }
}

/// Builds and checks one side.
fn side(
    name: &str,
    given: Option<&str>,
    initrd: Option<&Path>,
    modules: Option<&Path>,
    setup: Option<&str>,
    executor: ExecutorKind,
) -> anyhow::Result<SideSpec> {
    let (image, cmdline) = given.map(split_side).unwrap_or((None, Vec::new()));
    let boots = executor != ExecutorKind::Local;
    if !boots && (image.is_some() || !cmdline.is_empty() || initrd.is_some() || modules.is_some()) {
        return usage(format!(
            "the local executor measures the running kernel: the {name} side cannot have a \
             kernel image, command-line words, an initrd or modules (use --executor vm or \
             kexec, or a --{name}-setup command)"
        ));
    }
    let kernel = if boots {
        let image = match image {
            Some(i) => i,
            None => running_image()?,
        };
        let info = kernel_image::inspect(&image).map_err(Usage)?;
        if let Some(i) = initrd.filter(|i| *i != Path::new("none")) {
            std::fs::File::open(i).map_err(|e| {
                Usage(format!(
                    "cannot read the {name} initrd {}: {e}",
                    i.display()
                ))
            })?;
        }
        let modules = kernel_image::modules_for(&image, &info.release, modules).map_err(Usage)?;
        let image = image.canonicalize().unwrap_or(image);
        Some(KernelSpec {
            image,
            sha256: info.sha256,
            release: info.release,
            initrd: initrd.map(Path::to_path_buf),
            modules,
        })
    } else {
        None
    };
    if let Some(s) = setup {
        if s.trim().is_empty() {
            return usage(format!(
                "--{name}-setup is empty; give a shell command or drop it"
            ));
        }
    }
    Ok(SideSpec {
        name: name.to_string(),
        kernel,
        cmdline,
        setup: setup.map(str::to_string),
    })
}

/// Builds the spec from the arguments, checking everything that can be checked here.
pub(super) fn spec(a: &StartArgs) -> anyhow::Result<CampaignSpec> {
    check_name(&a.name)?;
    check_workload(&a.workload, a.scratch.is_some())?;
    let s = &a.sides;
    let boots = s.base.is_some() || s.patched.is_some();
    let executor = a.executor.unwrap_or(if boots {
        ExecutorKind::Vm
    } else {
        ExecutorKind::Local
    });
    if a.duet && executor != ExecutorKind::Vm {
        return usage("--duet runs two guests at once: it needs --executor vm");
    }
    let lab = (a.boxes.is_some() || !a.tags.is_empty()).then(|| LabSpec {
        boxes: a.boxes.unwrap_or(1),
        tags: a.tags.clone(),
    });
    if lab.is_some() && executor == ExecutorKind::Kexec {
        return usage(
            "--boxes/--tag plan a campaign for lab agents, which run local or vm steps; a kexec \
             campaign runs on the machine that starts it",
        );
    }
    let sides = vec![
        side(
            "base",
            s.base.as_deref(),
            s.base_initrd.as_deref(),
            s.base_modules.as_deref(),
            s.base_setup.as_deref(),
            executor,
        )?,
        side(
            "patched",
            s.patched.as_deref(),
            s.patched_initrd.as_deref(),
            s.patched_modules.as_deref(),
            s.patched_setup.as_deref(),
            executor,
        )?,
    ];
    let schedule = match a.until {
        Some(pct) => Schedule::Until {
            pct,
            max_rounds: a.max_rounds,
            max_time_s: a.max_time,
        },
        None => Schedule::Rounds {
            rounds: a.rounds.unwrap_or(5),
        },
    };
    // SAFETY: geteuid has no preconditions.
    if executor == ExecutorKind::Local && a.scratch.is_some() && (unsafe { libc::geteuid() }) != 0 {
        return usage("--scratch with the local executor mounts a loop device: run as root");
    }
    let vm = if executor == ExecutorKind::Vm {
        let cpus = match a.cpus.as_deref() {
            Some(list) => Some(parse_cpu_list(list).map_err(Usage)?),
            None => None,
        };
        let given = crate::campaign::vm::options::Given {
            vcpus: a.vcpus,
            memory_mib: Some(a.memory),
            cpus,
            allow_tcg: a.allow_tcg,
            qemu: Some(a.qemu.clone()),
            duet: a.duet,
        };
        Some(crate::campaign::vm::options::resolve(&given).map_err(Usage)?)
    } else {
        None
    };
    let program = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("cannot find the patchbench program itself: {e}"))?;
    Ok(CampaignSpec {
        name: a.name.clone(),
        sides,
        workload: a.workload.clone(),
        schedule,
        order: a.order,
        seed: a.seed.unwrap_or_else(plan::new_seed),
        executor,
        duet: a.duet,
        scratch: a.scratch.clone(),
        vm,
        kexec: None,
        lab,
        step_timeout_s: a.step_timeout,
        settle_s: a.settle,
        primary: a.primary.clone(),
        confidence: a.confidence,
        program,
        started_on: crate::sysinfo::hostname(),
    })
}

/// `0-3,6` as CPU numbers.
fn parse_cpu_list(s: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let num = |t: &str| {
            t.trim()
                .parse::<u32>()
                .map_err(|_| format!("--cpus {s:?}: {t:?} is not a CPU number (e.g. 2-5)"))
        };
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(part)?, num(part)?),
        };
        if lo > hi || hi >= 4096 {
            return Err(format!("--cpus {s:?}: {part:?} is not a CPU range"));
        }
        out.extend(lo..=hi);
    }
    out.sort_unstable();
    out.dedup();
    if out.is_empty() {
        return Err("--cpus names no CPU (e.g. --cpus 2-5)".to_string());
    }
    Ok(out)
}

/// The executor a campaign's steps run with.
pub(super) fn executor_for(spec: &CampaignSpec) -> anyhow::Result<Box<dyn Executor>> {
    match spec.executor {
        ExecutorKind::Local => Ok(Box::new(crate::campaign::local::Local::new()?)),
        ExecutorKind::Vm => Ok(Box::new(crate::campaign::vm::Vm::new(spec)?)),
        ExecutorKind::Kexec => usage(
            "a kexec campaign runs one step per boot: `patchbench campaign resume --boot` \
             (the boot hook) runs it",
        ),
    }
}

fn start(a: &StartArgs) -> anyhow::Result<i32> {
    let spec = spec(a)?;
    if spec.executor == ExecutorKind::Kexec {
        return super::campaign_kexec::start(a, spec);
    }
    if let Some(lab) = &spec.lab {
        return plan_for_lab(a, &spec, lab);
    }
    let mut executor = executor_for(&spec)?;
    let mut store = a.store.open(true)?;
    let rounds = spec.schedule.initial_rounds();
    let steps = plan::steps(spec.order, spec.seed, 1, rounds);
    store.create_campaign(&spec, rounds, &steps)?;
    crate::safe_text::eprint_line(&format!(
        "patchbench: campaign {} planned: {} of 2 steps ({} executor, {} order, seed {}) \
         in store {}",
        spec.name,
        schedule_words(&spec.schedule),
        spec.executor.as_str(),
        match spec.order {
            Order::Random => "random",
            Order::Abba => "ABBA",
        },
        spec.seed,
        store.path().display()
    ));
    run_campaign(&mut store, &spec.name, executor.as_mut())
}

/// `5 rounds`, or `a pilot of 3 rounds, then up to 30 rounds for ±2 %,` (for a start line).
fn schedule_words(schedule: &Schedule) -> String {
    match schedule {
        Schedule::Rounds { rounds } => format!("{rounds} rounds"),
        Schedule::Until {
            pct, max_rounds, ..
        } => format!("a pilot of 3 rounds, then up to {max_rounds} rounds for ±{pct} %,"),
    }
}

/// Plans a lab campaign: every round for each of its boxes' places, which the first agents
/// of matching boxes take; nothing runs here.
fn plan_for_lab(a: &StartArgs, spec: &CampaignSpec, lab: &LabSpec) -> anyhow::Result<i32> {
    let mut store = a.store.open(true)?;
    let rounds = spec.schedule.initial_rounds();
    let steps = plan::for_boxes(
        &plan::steps(spec.order, spec.seed, 1, rounds),
        &plan::box_places(lab.boxes),
    );
    store.create_campaign(spec, rounds, &steps)?;
    let tags = if lab.tags.is_empty() {
        String::new()
    } else {
        format!(" tagged {}", lab.tags.join(", "))
    };
    crate::safe_text::eprint_line(&format!(
        "patchbench: campaign {} planned for {} box{}{tags}: {} of 2 steps on each ({} \
         executor, seed {}) in store {}; agents run it: `patchbench agent --store {}{}` on each \
         box; `patchbench campaign status {}{}` follows it",
        spec.name,
        lab.boxes,
        if lab.boxes == 1 { "" } else { "es" },
        schedule_words(&spec.schedule),
        spec.executor.as_str(),
        spec.seed,
        store.path().display(),
        store.path().display(),
        lab.tags
            .iter()
            .map(|t| format!(" --tag {t}"))
            .collect::<String>(),
        spec.name,
        store.location().hint(),
    ));
    Ok(0)
}

fn resume(a: &ResumeArgs) -> anyhow::Result<i32> {
    let Some(name) = a.name.as_deref().filter(|_| !a.boot) else {
        return super::campaign_kexec::at_boot(&a.store);
    };
    let mut store = a.store.open(false)?;
    let campaign = find(&store, name)?;
    if campaign.spec.executor == ExecutorKind::Kexec {
        return super::campaign_kexec::resume(a, store, campaign);
    }
    if let Some(lab) = &campaign.spec.lab {
        return usage(format!(
            "campaign {} is run by lab agents on {} box(es) (`patchbench agent --store ...` on \
             each); `campaign status {}` shows where it stands",
            campaign.name, lab.boxes, campaign.name
        ));
    }
    if campaign.state == CampaignState::Stopped || campaign.state == CampaignState::Finished {
        crate::safe_text::eprint_line(&format!(
            "patchbench: campaign {} is {}; nothing to resume",
            campaign.name,
            campaign.state.as_str()
        ));
        return Ok(0);
    }
    // One process runs a campaign at a time: two would measure each other.
    let steps = store.steps(campaign.id)?;
    if let Some(live) = steps.iter().find(|s| {
        s.state == StepState::Running
            && s.owner
                .as_deref()
                .and_then(Owner::parse)
                .is_some_and(|o| o.host == crate::sysinfo::hostname() && !o.is_dead_here())
    }) {
        let pid = live.owner.as_deref().and_then(Owner::parse).map(|o| o.pid);
        return usage(format!(
            "campaign {} is being run by process {} (round {} {}); wait for it, or `patchbench \
             campaign stop {}`",
            campaign.name,
            pid.map(|p| p.to_string()).unwrap_or_default(),
            live.round,
            live.side,
            campaign.name
        ));
    }
    let taken = store.reclaim_steps(
        campaign.id,
        &|owner| Owner::parse(owner).is_none_or(|o| o.is_dead_here()),
        false,
    )?;
    for s in &taken {
        crate::safe_text::eprint_line(&format!(
            "patchbench: campaign {}: round {} {} was left unfinished; it runs again",
            campaign.name, s.round, s.side
        ));
    }
    let mut executor = executor_for(&campaign.spec)?;
    run_campaign(&mut store, &campaign.name, executor.as_mut())
}

fn run_campaign(store: &mut Store, name: &str, executor: &mut dyn Executor) -> anyhow::Result<i32> {
    let signals = crate::proc::signals::Signals::install()?;
    let mut progress = Progress::new();
    let mut driver = Driver {
        store,
        executor,
        signals: &signals,
        progress: &mut progress,
        owner: Owner::me().to_string(),
        lease_s: 0.0,
        r#box: None,
        spool: None,
    };
    let end = driver.drive(name);
    progress.finish();
    let end = end?;
    let campaign = find(store, name)?;
    let steps = store.steps(campaign.id)?;
    let done = steps.iter().filter(|s| s.state == StepState::Done).count();
    let failed = steps
        .iter()
        .filter(|s| s.state == StepState::Failed)
        .count();
    let word = match end {
        End::Finished => "finished",
        End::Stopped => "stopped",
        End::Idle => "has no step left for this process",
    };
    crate::safe_text::eprint_line(&format!(
        "patchbench: campaign {name} {word}: {done} steps done, {failed} failed; \
         `patchbench campaign report {name}{}` compares the sides",
        store.location().hint()
    ));
    Ok(0)
}

pub(super) fn find(store: &Store, name: &str) -> anyhow::Result<Campaign> {
    store.campaign(name)?.ok_or_else(|| {
        let known: Vec<String> = store
            .campaigns()
            .map(|cs| cs.into_iter().map(|c| c.name).collect())
            .unwrap_or_default();
        Usage(format!(
            "no campaign named {:?} in store {} (campaigns there: {})",
            crate::safe_text::field(name),
            store.path().display(),
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        ))
        .into()
    })
}

fn status(a: &StatusArgs) -> anyhow::Result<i32> {
    let store = a.store.open(false)?;
    let campaigns = match &a.name {
        Some(n) => vec![find(&store, n)?],
        None => store.campaigns()?,
    };
    let mut views = Vec::new();
    for c in campaigns {
        let steps = store.steps(c.id)?;
        let runs: Vec<_> = store
            .campaign_runs(c.id)?
            .into_iter()
            .map(|(_, r)| r)
            .collect();
        let mut view = crate::report::campaign::StatusView::of(c, steps, &runs);
        view.store_hint = store.location().hint();
        views.push(view);
    }
    let text = match a.format {
        StatusFormat::Text => crate::report::campaign::status_text(&views),
        StatusFormat::Json => crate::report::campaign::status_json(&views)?,
    };
    crate::report::print(&text)?;
    Ok(0)
}

fn report(a: &ReportArgs) -> anyhow::Result<i32> {
    let store = a.store.open(false)?;
    let c = find(&store, &a.name)?;
    let steps = store.steps(c.id)?;
    let runs = store.campaign_runs(c.id)?;
    let side = |name: &str| {
        crate::compare::Side::new(
            format!("{}/{name}", c.name),
            runs.iter()
                .filter(|(_, r)| r.campaign.as_ref().is_some_and(|s| s.side == name))
                .map(|(id, r)| (id.to_string(), r.clone()))
                .collect(),
        )
    };
    let (base, patched) = (side("base"), side("patched"));
    if base.runs.is_empty() || patched.runs.is_empty() {
        return usage(format!(
            "campaign {} has no stored run of {} yet; `patchbench campaign status {}` shows \
             where it is",
            c.name,
            if base.runs.is_empty() {
                "the base side"
            } else {
                "the patched side"
            },
            c.name
        ));
    }
    let settings = crate::compare::verdict::Settings {
        rule: crate::compare::verdict::Rule::Welch,
        confidence: c.spec.confidence,
        noise_pct: a.noise,
        plan_pct: vec![1.0, 2.0],
        sensitivity: true,
    };
    let comparison = crate::compare::compare(&base, &patched, &settings)?;
    let records: Vec<_> = runs.iter().map(|(_, r)| r.clone()).collect();
    let view = crate::report::campaign::StatusView::of(c, steps, &records);
    let text = crate::report::campaign::report_text(&view, &comparison)?;
    crate::report::print(&text)?;
    Ok(0)
}

fn stop(a: &StopArgs) -> anyhow::Result<i32> {
    let mut store = a.store.open(false)?;
    let c = find(&store, &a.name)?;
    if !c.state.is_open() {
        crate::safe_text::eprint_line(&format!(
            "patchbench: campaign {} is already {}",
            c.name,
            c.state.as_str()
        ));
        return Ok(0);
    }
    let steps = store.steps(c.id)?;
    let running = steps.iter().any(|s| s.state == StepState::Running);
    let (state, what) = if running {
        (CampaignState::Stopping, "will stop after its current step")
    } else {
        (CampaignState::Stopped, "is stopped")
    };
    store.set_campaign_state(c.id, state, Some("stopped by `campaign stop`"))?;
    if c.spec.executor == ExecutorKind::Kexec {
        crate::safe_text::eprint_line(&format!(
            "patchbench: campaign {} stops at its next boot (or once this boot's step is stored) \
             and returns to {}",
            c.name,
            c.spec
                .kexec
                .as_ref()
                .map_or("the kernel it started from".to_string(), |k| k
                    .return_to
                    .image
                    .display()
                    .to_string())
        ));
        return Ok(0);
    }
    crate::safe_text::eprint_line(&format!(
        "patchbench: campaign {} {what}; `patchbench campaign report {}{}` compares what it has",
        c.name,
        c.name,
        store.location().hint()
    ));
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_scratch_and_cpu_lists_parse() {
        assert_eq!(parse_span("90m"), Ok(5400.0));
        assert_eq!(parse_span("8h"), Ok(28800.0));
        assert_eq!(parse_span("3600"), Ok(3600.0));
        assert!(parse_span("soon").is_err() && parse_span("-1h").is_err());
        let s = parse_scratch("ext4:64M").unwrap();
        assert_eq!(s.bytes, 64 << 20);
        assert!(parse_scratch("xfs:1G").is_err() && parse_scratch("ext4").is_err());
        assert!(parse_scratch("ext4:1k").is_err());
        assert_eq!(parse_cpu_list("0-2,5").unwrap(), vec![0, 1, 2, 5]);
        assert!(parse_cpu_list("3-1").is_err() && parse_cpu_list("x").is_err());
    }

    #[test]
    fn sides_split_image_and_words() {
        assert_eq!(
            split_side(":pti=off quiet"),
            (None, vec!["pti=off".to_string(), "quiet".to_string()])
        );
        assert_eq!(
            split_side("/nonexistent/vmlinuz:pti=on"),
            (
                Some(PathBuf::from("/nonexistent/vmlinuz")),
                vec!["pti=on".to_string()]
            )
        );
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("pti-test_1.2").is_ok());
        for bad in ["", "-x", ".x", "a/b", "a b", "a\nb", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn workloads_are_checked() {
        let w = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert!(check_workload(&w("run --quick syscall"), false).is_ok());
        for (bad, why) in [
            ("list", "measuring command"),
            ("compare a b", "measuring command"),
            ("run --quick syscall --json x.json", "--json"),
            ("run --quick syscall --label x", "--label"),
            ("run --quick syscall --no-store", "--no-store"),
            ("run --quick nosuchtest", "nosuchtest"),
            ("run --copies 0", "workload's arguments"),
            ("scale --list", "--list"),
        ] {
            let e = check_workload(&w(bad), false).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
        let e = check_workload(&w("run --quick syscall --dir /tmp"), true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--scratch"), "{e}");
    }
}
