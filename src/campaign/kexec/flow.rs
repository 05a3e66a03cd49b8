//! A kexec campaign's flow, for the commands that start, continue and hook it: what is
//! checked before anything changes ([`prepare`]: the right to kexec, lockdown, each side's
//! initrd and modules, the kernel to return to, a store file that survives a reboot), the
//! first reboot after the campaign is stored ([`start`]), a `resume` by hand ([`resume`]: it
//! reboots, so it is confirmed) and a boot's part ([`at_boot`], the boot hook's command).
//!
//! A kexec campaign keeps its state in a SQLite store file on a persistent disk: its boots
//! read it before any network is up, and its stop file lies beside it. A server store is
//! refused up front ([`store_file`]), with the way to get the runs there afterwards.

use super::boot::{read_cmdline, BootRun};
use super::cmdline::Markers;
use super::load::Authority;
use super::machine::ThisMachine;
use super::preflight;
use crate::campaign::executor::this_kernel;
use crate::error::{usage, Usage};
use crate::proc::signals::Signals;
use crate::progress::Progress;
use crate::record::campaign::spec::{CampaignSpec, KexecOptions, Schedule};
use crate::record::campaign::state::{Campaign, CampaignState};
use crate::store::db::Store;
use crate::store::{Access, Location};
use std::path::{Path, PathBuf};

/// The store file of a kexec campaign; a store on a server is refused.
pub fn store_file(location: &Location) -> anyhow::Result<PathBuf> {
    match location.file() {
        Some(p) => Ok(p.to_path_buf()),
        None => usage(format!(
            "a kexec campaign keeps its state in a local SQLite store on a persistent disk \
             (each boot reads it before the network is up, and its stop file lies beside it); \
             {location} is a server: give --store PATH, and `patchbench push --to {}` the runs \
             afterwards",
            location.as_arg()
        )),
    }
}

/// Checks everything a kexec campaign needs before anything changes (each fault one line,
/// a [`Usage`] error) and fills in where it returns at its end: `return_to` (default: the
/// running kernel's image) with `return_initrd`. The store at `location` must be a file on a
/// disk that survives a reboot, without a campaign of this name.
pub fn prepare(
    spec: &mut CampaignSpec,
    return_to: Option<&Path>,
    return_initrd: Option<&Path>,
    location: &Location,
) -> anyhow::Result<()> {
    let file = store_file(location)?;
    preflight::may_kexec().map_err(Usage)?;
    let lockdown = preflight::lockdown_mode();
    for side in spec.sides.iter_mut() {
        let built = side.build.is_some();
        let Some(k) = side.kernel.as_mut() else {
            return usage(format!("the {} side names no kernel to boot", side.name));
        };
        preflight::side_kernel_built(&side.name, k, built).map_err(Usage)?;
        preflight::signed_if_locked_down(&k.image, lockdown.as_deref()).map_err(Usage)?;
        if built && k.modules.is_some() {
            super::modules::target(Path::new(MODULES_ROOT), &k.release).map_err(Usage)?;
        }
    }
    let here = this_kernel();
    let return_to =
        preflight::return_target(return_to, return_initrd, &here.release, &here.cmdline)
            .map_err(Usage)?;
    preflight::signed_if_locked_down(&return_to.image, lockdown.as_deref()).map_err(Usage)?;
    spec.kexec = Some(KexecOptions { return_to });
    preflight::store_survives(&file).map_err(Usage)?;
    if file.exists() {
        let store = Store::open(location, Access::Read, None)?;
        if store.campaign(&spec.name)?.is_some() {
            return usage(format!(
                "a campaign named {:?} already exists in store {location}; choose another name",
                spec.name,
            ));
        }
    }
    Ok(())
}

/// The boots a campaign of `spec` takes, in words: `6`, or `6 to 60` for `--until`.
pub fn boots(spec: &CampaignSpec) -> String {
    let rounds = spec.schedule.initial_rounds();
    match &spec.schedule {
        Schedule::Rounds { rounds } => format!("{}", 2 * rounds),
        Schedule::Until { max_rounds, .. } => format!("{} to {}", 2 * rounds, 2 * max_rounds),
    }
}

/// The first reboot of a stored kexec campaign: after `delay_s` (a signal cancels it and
/// leaves the campaign stopped), round 1's first kernel is loaded and jumped to.
pub fn start(
    store: Store,
    name: &str,
    auth: Authority,
    delay_s: f64,
    signals: &Signals,
    progress: &mut Progress,
) -> anyhow::Result<i32> {
    let mut run = BootRun {
        signals,
        progress,
        markers: Markers::parse(&read_cmdline()),
        machine: &mut ThisMachine,
    };
    run.first_jump(store, name, auth, delay_s)
}

/// `campaign resume NAME` of a kexec campaign, by hand: runs this boot's step when the boot is
/// one, else reboots into the next step, each only once `confirm` said yes (or the boot's own
/// marker names the campaign). A failed campaign goes on.
pub fn resume(
    mut store: Store,
    c: Campaign,
    signals: &Signals,
    progress: &mut Progress,
    confirm: &mut dyn FnMut(&str) -> anyhow::Result<Authority>,
) -> anyhow::Result<i32> {
    preflight::may_kexec().map_err(Usage)?;
    let markers = Markers::parse(&read_cmdline());
    let auth = match Authority::from_boot(&c.name, &markers) {
        Some(auth) => auth,
        None => confirm(&format!(
            "continuing campaign {} reboots this machine (kexec) into its next step's kernel",
            c.name
        ))?,
    };
    if c.state == CampaignState::Failed {
        progress.line(&format!(
            "patchbench: campaign {} had failed ({}); it goes on",
            c.name,
            c.state_reason.as_deref().unwrap_or("no reason recorded")
        ));
        store.set_campaign_state(c.id, CampaignState::Running, None)?;
    }
    let mut run = BootRun {
        signals,
        progress,
        markers,
        machine: &mut ThisMachine,
    };
    run.by_hand(store, &c.name, auth)
}

/// `campaign resume --boot` (the boot hook): this boot's part of whichever kexec campaign of
/// the store at `location` it belongs to; quiet (exit 0) when there is no store there.
pub fn at_boot(
    location: &Location,
    signals: &Signals,
    progress: &mut Progress,
) -> anyhow::Result<i32> {
    let file = store_file(location)?;
    if !file.exists() {
        return Ok(0);
    }
    let store = Store::open(location, Access::Read, None)?;
    let mut run = BootRun {
        signals,
        progress,
        markers: Markers::parse(&read_cmdline()),
        machine: &mut ThisMachine,
    };
    run.at_boot(store)
}

/// The store the boot hook runs with: the absolute path of a store file that survives a
/// reboot.
pub fn hook_store(location: &Location) -> anyhow::Result<PathBuf> {
    let path = store_file(location)?;
    let path = std::path::absolute(&path)
        .map_err(|e| anyhow::anyhow!("cannot make {} absolute: {e}", path.display()))?;
    preflight::store_survives(&path).map_err(Usage)?;
    Ok(path)
}

/// Where the boots of a kexec campaign look for a kernel's modules.
const MODULES_ROOT: &str = "/lib/modules";

/// A built kernel's modules installed where its boots look for them (`/lib/modules/RELEASE`,
/// never over a release patchbench did not install), and the side's spec pointed there.
pub fn install_built_modules(spec: &mut CampaignSpec) -> anyhow::Result<()> {
    for side in spec.sides.iter_mut() {
        let Some(b) = side.build.as_ref() else {
            continue;
        };
        let id = b.build.id.clone();
        let Some(k) = side.kernel.as_mut() else {
            continue;
        };
        if let Some(from) = k.modules.clone() {
            let at = super::modules::install(Path::new(MODULES_ROOT), &k.release, &from, &id)
                .map_err(Usage)?;
            crate::safe_text::eprint_line(&format!(
                "patchbench: the {} kernel's modules are installed in {}",
                side.name,
                at.display()
            ));
            k.modules = Some(at);
        }
    }
    Ok(())
}
