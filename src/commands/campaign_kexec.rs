//! The kexec half of `patchbench campaign`: `start --executor kexec` (every check before
//! anything changes, then the user's confirmation, then the first reboot), `resume NAME` of a
//! kexec campaign (confirmed: it reboots), `resume --boot` (the boot hook's command, quiet when
//! this boot is no campaign's), and `install-hook` / `remove-hook`.

use super::campaign::{ResumeArgs, StartArgs};
use super::shared::StoreArg;
use crate::campaign::executor::this_kernel;
use crate::campaign::kexec::boot::{read_cmdline, stop_file, BootRun};
use crate::campaign::kexec::cmdline::Markers;
use crate::campaign::kexec::load::Authority;
use crate::campaign::kexec::{hook, modules, preflight};
use crate::error::{usage, Usage};
use crate::progress::Progress;
use crate::record::campaign::plan;
use crate::record::campaign::spec::{CampaignSpec, KexecOptions, Schedule};
use crate::record::campaign::state::{Campaign, CampaignState};
use crate::store::db::Store;
use std::io::{BufRead, IsTerminal, Write};

/// `campaign start --executor kexec`: checks, confirmation, the campaign stored, the first
/// reboot.
pub fn start(a: &StartArgs, mut spec: CampaignSpec) -> anyhow::Result<i32> {
    preflight::may_kexec().map_err(Usage)?;
    let lockdown = preflight::lockdown_mode();
    let modules_root = std::path::Path::new("/lib/modules");
    for side in spec.sides.iter_mut() {
        let built = side.build.is_some();
        let Some(k) = side.kernel.as_mut() else {
            return usage(format!("the {} side names no kernel to boot", side.name));
        };
        preflight::side_kernel_built(&side.name, k, built).map_err(Usage)?;
        preflight::signed_if_locked_down(&k.image, lockdown.as_deref()).map_err(Usage)?;
        if built && k.modules.is_some() {
            modules::target(modules_root, &k.release).map_err(Usage)?;
        }
    }
    let here = this_kernel();
    let return_to = preflight::return_target(
        a.return_to.as_deref(),
        a.return_initrd.as_deref(),
        &here.release,
        &here.cmdline,
    )
    .map_err(Usage)?;
    preflight::signed_if_locked_down(&return_to.image, lockdown.as_deref()).map_err(Usage)?;
    spec.kexec = Some(KexecOptions { return_to });
    let store_path = file_store(&a.store)?;
    preflight::store_survives(&store_path).map_err(Usage)?;
    if store_path.exists() {
        let store = Store::open(&store_path, false)?;
        if store.campaign(&spec.name)?.is_some() {
            return usage(format!(
                "a campaign named {:?} already exists in store {}; choose another name",
                spec.name,
                store_path.display()
            ));
        }
    }
    let rounds = spec.schedule.initial_rounds();
    let boots = match &spec.schedule {
        Schedule::Rounds { rounds } => format!("{}", 2 * rounds),
        Schedule::Until { max_rounds, .. } => format!("{} to {}", 2 * rounds, 2 * max_rounds),
    };
    let what = format!(
        "campaign {} reboots this machine (kexec) about {:.0} s after it starts, into round 1's \
         first kernel, then once per step ({boots} boots), and at the end into {}",
        spec.name,
        a.reboot_in,
        spec.kexec
            .as_ref()
            .map_or(String::new(), |k| k.return_to.image.display().to_string())
    );
    let auth = confirm(a.yes, &what)?;
    // A built kernel's modules go where its boots look for them.
    for side in spec.sides.iter_mut() {
        let Some(b) = side.build.as_ref() else {
            continue;
        };
        let id = b.build.id.clone();
        if let Some(k) = side.kernel.as_mut() {
            if let Some(from) = k.modules.clone() {
                let at = modules::install(modules_root, &k.release, &from, &id).map_err(Usage)?;
                crate::safe_text::eprint_line(&format!(
                    "patchbench: the {} kernel's modules are installed in {}",
                    side.name,
                    at.display()
                ));
                k.modules = Some(at);
            }
        }
    }
    let mut store = a.store.open(true)?;
    let steps = plan::steps(spec.order, spec.seed, 1, rounds);
    store.create_campaign(&spec, rounds, &steps)?;
    crate::safe_text::eprint_line(&format!(
        "patchbench: campaign {} planned: {} rounds of 2 steps (kexec executor, seed {}) in \
         store {}; each boot runs its step through the boot hook (`patchbench campaign \
         install-hook` under systemd); `patchbench campaign stop {}`, `touch {}` or \
         patchbench.stop on the kernel command line ends it at its next boot",
        spec.name,
        rounds,
        spec.seed,
        store.path().display(),
        spec.name,
        stop_file(&store_path, &spec.name).display()
    ));
    let signals = crate::proc::signals::Signals::install()?;
    let mut progress = Progress::new();
    let mut run = BootRun {
        signals: &signals,
        progress: &mut progress,
        markers: Markers::parse(&read_cmdline()),
    };
    let code = run.first_jump(store, &spec.name, auth, a.reboot_in);
    progress.finish();
    code
}

/// `campaign resume NAME` of a kexec campaign, by hand: it reboots, so it is confirmed.
pub fn resume(a: &ResumeArgs, mut store: Store, c: Campaign) -> anyhow::Result<i32> {
    if matches!(c.state, CampaignState::Finished | CampaignState::Stopped) {
        crate::safe_text::eprint_line(&format!(
            "patchbench: campaign {} is {}; nothing to resume",
            c.name,
            c.state.as_str()
        ));
        return Ok(0);
    }
    preflight::may_kexec().map_err(Usage)?;
    let markers = Markers::parse(&read_cmdline());
    let auth = match Authority::from_boot(&c.name, &markers) {
        Some(auth) => auth,
        None => confirm(
            a.yes,
            &format!(
                "continuing campaign {} reboots this machine (kexec) into its next step's kernel",
                c.name
            ),
        )?,
    };
    if c.state == CampaignState::Failed {
        crate::safe_text::eprint_line(&format!(
            "patchbench: campaign {} had failed ({}); it goes on",
            c.name,
            c.state_reason.as_deref().unwrap_or("no reason recorded")
        ));
        store.set_campaign_state(c.id, CampaignState::Running, None)?;
    }
    let signals = crate::proc::signals::Signals::install()?;
    let mut progress = Progress::new();
    let mut run = BootRun {
        signals: &signals,
        progress: &mut progress,
        markers,
    };
    let code = run.by_hand(store, &c.name, auth);
    progress.finish();
    code
}

/// `campaign resume --boot`.
pub fn at_boot(store: &StoreArg) -> anyhow::Result<i32> {
    let path = file_store(store)?;
    let signals = crate::proc::signals::Signals::install()?;
    let mut progress = Progress::new();
    let mut run = BootRun {
        signals: &signals,
        progress: &mut progress,
        markers: Markers::parse(&read_cmdline()),
    };
    let code = run.at_boot(&path);
    progress.finish();
    code
}

/// Asks on the terminal, or takes `--yes`; refuses without either.
fn confirm(yes: bool, what: &str) -> anyhow::Result<Authority> {
    if yes {
        return Ok(Authority::confirmed_by_user("--yes"));
    }
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return usage(format!(
            "{what}: add --yes to confirm (there is no terminal to ask on); nothing was changed"
        ));
    }
    // A prompt: no newline, so not `eprint_line`; `what` is the sanitised question.
    let _ = write!(
        std::io::stderr(),
        "patchbench: {}. Go on? [y/N] ",
        crate::safe_text::line(what)
    );
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    stdin
        .lock()
        .read_line(&mut answer)
        .map_err(|e| anyhow::anyhow!("cannot read the answer: {e}"))?;
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        Ok(Authority::confirmed_by_user("answered yes on the terminal"))
    } else {
        usage("not confirmed; nothing was changed")
    }
}

/// `campaign install-hook`.
pub fn install_hook(store: &StoreArg) -> anyhow::Result<i32> {
    hook::need_systemd("campaign install-hook").map_err(Usage)?;
    let path = file_store(store)?;
    let path = std::path::absolute(&path)
        .map_err(|e| anyhow::anyhow!("cannot make {} absolute: {e}", path.display()))?;
    preflight::store_survives(&path).map_err(Usage)?;
    let program = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("cannot find the patchbench program itself: {e}"))?;
    let unit = hook::install(&program, &path).map_err(Usage)?;
    crate::safe_text::eprint_line(&format!(
        "patchbench: wrote and enabled {}: every boot runs `{} campaign resume --boot --store {}`",
        unit.display(),
        program.display(),
        path.display()
    ));
    Ok(0)
}

/// `campaign remove-hook`.
pub fn remove_hook() -> anyhow::Result<i32> {
    let removed = hook::remove().map_err(Usage)?;
    if removed {
        crate::safe_text::eprint_line(&format!("patchbench: disabled and removed {}", hook::UNIT));
    } else {
        crate::safe_text::eprint_line(&format!("patchbench: {} was not installed", hook::UNIT));
    }
    Ok(0)
}

/// The store of a kexec campaign: a local SQLite file (on a disk that survives the reboots).
fn file_store(store: &StoreArg) -> anyhow::Result<std::path::PathBuf> {
    let location = crate::store::location::store_location(store.store.as_deref())?;
    match location.file() {
        Some(p) => Ok(p.to_path_buf()),
        None => usage(format!(
            "a kexec campaign keeps its state in a local SQLite store on a persistent disk; {} \
             is not one (give --store PATH, and `patchbench push` the runs afterwards)",
            location.display()
        )),
    }
}
