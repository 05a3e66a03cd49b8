//! The kexec half of `patchbench campaign`'s arguments and output: `start --executor kexec`
//! (the checks of `crate::campaign::kexec::flow`, then the user's confirmation, then the first
//! reboot), the confirmation a `resume NAME` of a kexec campaign asks for (it reboots),
//! `resume --boot` (the boot hook's command, quiet when this boot is no campaign's), and
//! `install-hook` / `remove-hook`.

use super::args::StartArgs;
use crate::campaign::kexec::flow;
use crate::campaign::kexec::hook;
use crate::campaign::kexec::load::Authority;
use crate::commands::shared::StoreArg;
use crate::error::{usage, Usage};
use crate::progress::Progress;
use crate::record::campaign::spec::CampaignSpec;
use crate::store::Access;
use std::io::{BufRead, IsTerminal, Write};

/// `campaign start --executor kexec`: checks, confirmation, the campaign stored, the first
/// reboot.
pub fn start(a: &StartArgs, mut spec: CampaignSpec) -> anyhow::Result<i32> {
    let location = a.steps.store.location()?;
    flow::prepare(
        &mut spec,
        a.kexec.return_to.as_deref(),
        a.kexec.return_initrd.as_deref(),
        &location,
    )?;
    let what = format!(
        "campaign {} reboots this machine (kexec) about {:.0} s after it starts, into round 1's \
         first kernel, then once per step ({} boots), and at the end into {}",
        spec.name,
        a.kexec.reboot_in,
        flow::boots(&spec),
        spec.kexec
            .as_ref()
            .map_or(String::new(), |k| k.return_to.image.display().to_string())
    );
    let auth = confirm(a.kexec.yes, &what)?;
    // A built kernel's modules go where its boots look for them.
    flow::install_built_modules(&mut spec)?;
    let mut store = a.steps.store.open_for(Access::Create)?;
    let c = crate::campaign::create(&mut store, &spec)?;
    crate::safe_text::eprint_line(&format!(
        "patchbench: campaign {} planned: {} rounds of 2 steps (kexec executor, seed {}) in \
         store {}; each boot runs its step through the boot hook (`patchbench campaign \
         install-hook` under systemd); `patchbench campaign stop {}`, `touch {}` or \
         patchbench.stop on the kernel command line ends it at its next boot",
        c.name,
        c.planned_rounds,
        spec.seed,
        store.location(),
        c.name,
        crate::campaign::kexec::boot::stop_file(store.location(), &c.name)
            .map(|f| f.display().to_string())
            .unwrap_or_default()
    ));
    let signals = crate::proc::signals::Signals::install()?;
    let mut progress = Progress::new();
    let code = flow::start(
        store,
        &c.name,
        auth,
        a.kexec.reboot_in,
        &signals,
        &mut progress,
    );
    progress.finish();
    code
}

/// `campaign resume --boot`.
pub fn at_boot(store: &StoreArg) -> anyhow::Result<i32> {
    let location = store.location()?;
    let signals = crate::proc::signals::Signals::install()?;
    let mut progress = Progress::new();
    let code = flow::at_boot(&location, &signals, &mut progress);
    progress.finish();
    code
}

/// Asks on the terminal, or takes `--yes`; refuses without either.
pub(super) fn confirm(yes: bool, what: &str) -> anyhow::Result<Authority> {
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
    let path = flow::hook_store(&store.location()?)?;
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
