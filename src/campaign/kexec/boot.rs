//! What one boot of a kexec campaign does (`campaign resume --boot`, run by the boot hook):
//!
//! 1. A boot whose command line names a campaign of the store (`patchbench.campaign=NAME`) is
//!    one of its steps: a step left `running` by an earlier boot (power loss, crash) is taken
//!    back, with its attempt counted; the boot must be for the next planned step
//!    (`patchbench.step=ID`) and run the kernel and command-line words that step's side asks
//!    for, else the campaign fails with both named and the machine stays on this kernel.
//! 2. The step runs as the local executor runs one (settle time, setup, workload with
//!    `--json`, supervised) and its run is stored with its `done`, recording this boot's id,
//!    the time since boot and how the boot came (`kexec` or `firmware`).
//! 3. Then the next step's kernel, initrd and command line are loaded and the machine jumps to
//!    it. A step that failed twice in a row, a next image that is missing or changed, or a load
//!    or jump that fails ends the campaign (`failed`, with the reason) and the machine stays.
//! 4. At the end (every step done, `campaign stop`, the `patchbench.stop` word, or the stop
//!    file `NAME.stop` beside the store, [`stop_file`]) the last jump returns to the kernel the
//!    campaign started from (or `--return-to`), with its command line without our words.
//!
//! A boot that names no campaign does nothing (a running campaign's step left `running` is
//! taken back, and one line says how to continue): loading and jumping need the campaign's
//! marker on this boot's command line or the user's confirmation ([`Authority`]).
//!
//! A [`BootRun`] takes this boot's markers as data and reaches the machine (which kernel runs,
//! what runs the step, loading, jumping) only through its [`Machine`], so a test can play a
//! chain of boots with a recording fake (`tests/campaign_kexec.rs`) through this very code.

use super::cmdline::{self, Markers};
use super::load::Authority;
use super::machine::Machine;
use super::Kexec;
use crate::campaign::driver::{Driver, End};
use crate::campaign::executor::check_kernel;
use crate::campaign::kernel_image;
use crate::proc::signals::Signals;
use crate::progress::Progress;
use crate::record::campaign::spec::{BootTarget, ExecutorKind};
use crate::record::campaign::state::{
    Campaign, CampaignState, Owner, Step, StepState, MAX_ATTEMPTS,
};
use crate::record::campaign::KernelInfo;
use crate::store::db::Store;
use crate::store::Location;
use std::path::{Path, PathBuf};

/// Seconds a step's claim holds beyond its settle time and step timeout.
const CLAIM_MARGIN_S: f64 = 3600.0;

/// This boot's command line.
pub fn read_cmdline() -> String {
    std::fs::read_to_string("/proc/cmdline")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The file that, once it exists, ends campaign `name` at its next boot: `NAME.stop` beside
/// the store file.
pub fn stop_file(location: &Location, name: &str) -> Option<PathBuf> {
    let store = location.file()?;
    let dir = store.parent().unwrap_or(Path::new("."));
    Some(dir.join(format!("{name}.stop")))
}

/// Where a boot goes next.
enum Next {
    /// Into a step's kernel.
    Step(Box<BootTarget>, String),
    /// Back to the kernel the campaign started from; the campaign's state is final.
    Home,
    /// Nowhere: stay on this kernel, with this exit status.
    Stay(i32),
}

/// What carries out one boot's work.
pub struct BootRun<'a> {
    pub signals: &'a Signals,
    pub progress: &'a mut Progress,
    /// What this boot's command line says (`Markers::parse` of the machine's).
    pub markers: Markers,
    /// The machine: this boot's kernel, what runs its step, loading and jumping.
    pub machine: &'a mut dyn Machine,
}

impl BootRun<'_> {
    /// `campaign resume --boot`: does this boot's part of whichever kexec campaign of the store
    /// it belongs to; quiet (exit 0) when it belongs to none and none is running.
    pub fn at_boot(&mut self, mut store: Store) -> anyhow::Result<i32> {
        let campaigns: Vec<Campaign> = store
            .campaigns()?
            .into_iter()
            .filter(|c| c.spec.executor == ExecutorKind::Kexec)
            .collect();
        let named = self.markers.campaign.clone();
        if let Some(c) = named
            .as_deref()
            .and_then(|n| campaigns.iter().find(|c| c.name == n))
        {
            let auth = Authority::from_boot(&c.name, &self.markers)
                .ok_or_else(|| anyhow::anyhow!("the boot's marker names {}", c.name))?;
            let name = c.name.clone();
            return self.step_boot(store, &name, auth, false);
        }
        if let Some(n) = named {
            self.progress.line(&format!(
                "patchbench: this boot names campaign {n:?}, which store {} does not hold; \
                 nothing to do",
                store.location()
            ));
        }
        for c in campaigns
            .iter()
            .filter(|c| matches!(c.state, CampaignState::Running | CampaignState::Stopping))
        {
            self.not_a_step(&mut store, c)?;
        }
        Ok(0)
    }

    /// `campaign resume NAME` of a kexec campaign by hand, confirmed by the user: runs this
    /// boot's step when the boot is one, else reboots into the next step.
    pub fn by_hand(&mut self, store: Store, name: &str, auth: Authority) -> anyhow::Result<i32> {
        self.step_boot(store, name, auth, true)
    }

    /// `campaign start` of a kexec campaign, confirmed: after `delay_s` (Ctrl-C cancels and
    /// leaves the campaign stopped), loads round 1's first kernel and jumps to it.
    pub fn first_jump(
        &mut self,
        mut store: Store,
        name: &str,
        auth: Authority,
        delay_s: f64,
    ) -> anyhow::Result<i32> {
        let Some(c) = store.campaign(name)? else {
            anyhow::bail!("campaign {name} vanished from the store");
        };
        let steps = store.steps(c.id)?;
        let Some(first) = steps.iter().find(|s| s.state == StepState::Planned) else {
            return Ok(0);
        };
        let next = step_target(&mut store, &c, first, &self.machine.kernel().release)?;
        if let Next::Step(_, what) = &next {
            self.progress.line(&format!(
                "patchbench: campaign {name}: this machine reboots (kexec) into {what} in \
                 {delay_s:.0} s; Ctrl-C cancels"
            ));
            if let Err(i) = self
                .signals
                .sleep(std::time::Duration::from_secs_f64(delay_s))
            {
                store.set_campaign_state(
                    c.id,
                    CampaignState::Stopped,
                    Some("cancelled before the first reboot"),
                )?;
                self.progress.line(&format!(
                    "patchbench: campaign {name}: cancelled before the first reboot; nothing \
                     was loaded"
                ));
                return Err(i.into());
            }
        }
        self.go(store, name, next, &auth)
    }

    /// A running campaign at a boot that is not one of its steps.
    fn not_a_step(&mut self, store: &mut Store, c: &Campaign) -> anyhow::Result<()> {
        for s in reclaim(store, c, true)? {
            self.progress.line(&format!(
                "patchbench: campaign {}: round {} {} was cut short by the end of its boot \
                 (power loss, crash or reset); it runs again when the campaign continues",
                c.name, s.round, s.side
            ));
        }
        if let Some(why) = self.stop_asked(store, c) {
            store.set_campaign_state(c.id, CampaignState::Stopped, Some(&why))?;
            self.progress
                .line(&format!("patchbench: campaign {} stopped: {why}", c.name));
            return Ok(());
        }
        self.progress.line(&format!(
            "patchbench: campaign {name} is running, but this boot ({release}) is not one of its \
             steps (no patchbench.campaign={name} on the kernel command line): \
             `patchbench campaign resume {name}` continues it (it reboots), \
             `patchbench campaign stop {name}` ends it",
            name = c.name,
            release = self.machine.kernel().release
        ));
        Ok(())
    }

    /// Why the campaign is to stop at this boot, if it is.
    fn stop_asked(&self, store: &Store, c: &Campaign) -> Option<String> {
        let file = stop_file(store.location(), &c.name);
        if self.markers.stop {
            Some(format!(
                "stopped by {} on the kernel command line",
                cmdline::STOP_WORD
            ))
        } else if let Some(file) = file.filter(|f| f.exists()) {
            Some(format!("stopped by the stop file {}", file.display()))
        } else if c.state == CampaignState::Stopping {
            Some("stopped by `campaign stop`".to_string())
        } else {
            None
        }
    }

    /// The work of a boot that belongs to campaign `name` (or, `by_hand`, of the user's
    /// `resume`): run its step, then go where the campaign goes next.
    fn step_boot(
        &mut self,
        mut store: Store,
        name: &str,
        auth: Authority,
        by_hand: bool,
    ) -> anyhow::Result<i32> {
        let next = self.decide(&mut store, name, by_hand)?;
        self.go(store, name, next, &auth)
    }

    fn decide(&mut self, store: &mut Store, name: &str, by_hand: bool) -> anyhow::Result<Next> {
        let Some(c) = store.campaign(name)? else {
            anyhow::bail!("campaign {name} vanished from the store");
        };
        let on_step = self.markers.campaign.as_deref() == Some(name);
        reclaim(store, &c, true)?;
        if let Some(s) = store
            .steps(c.id)?
            .into_iter()
            .find(|s| s.state == StepState::Running)
        {
            self.progress.line(&format!(
                "patchbench: campaign {name}: round {} {} is running now ({}); nothing to do",
                s.round,
                s.side,
                s.owner.as_deref().unwrap_or("owner unknown")
            ));
            return Ok(Next::Stay(0));
        }
        if let Some(why) = self.stop_asked(store, &c) {
            if c.state.is_open() || c.state == CampaignState::Stopping {
                store.set_campaign_state(c.id, CampaignState::Stopped, Some(&why))?;
            }
            self.progress
                .line(&format!("patchbench: campaign {name}: {why}"));
            return Ok(if on_step { Next::Home } else { Next::Stay(0) });
        }
        match c.state {
            CampaignState::Running => {}
            CampaignState::Failed => {
                self.progress.line(&format!(
                    "patchbench: campaign {name} failed earlier ({}); this machine stays on \
                     this kernel",
                    c.state_reason.as_deref().unwrap_or("no reason recorded")
                ));
                return Ok(Next::Stay(0));
            }
            _ if on_step => return Ok(Next::Home),
            _ => return Ok(Next::Stay(0)),
        }
        let here = self.machine.kernel();
        let mut executor = Kexec::new(
            self.machine.step_executor()?,
            self.markers.boot_via(),
            here.clone(),
        );
        let mut driver = Driver {
            store,
            executor: &mut executor,
            signals: self.signals,
            progress: &mut *self.progress,
            owner: Owner::me().to_string(),
            // The claim holds for the whole step: only a dead owner (an earlier boot, a gone
            // process) loses it.
            lease_s: c.spec.settle_s + c.spec.step_timeout_s + CLAIM_MARGIN_S,
            r#box: None,
            spool: None,
        };
        let next = match step_for_this_boot(&mut driver, name, &self.markers, &here, by_hand)? {
            Ok(next) => next,
            Err(stop) => {
                executor.close();
                return Ok(stop);
            }
        };
        executor.close();
        Ok(next)
    }

    /// Loads where the campaign goes and jumps there; a failure ends the campaign with the
    /// machine on this kernel.
    fn go(
        &mut self,
        store: Store,
        name: &str,
        next: Next,
        auth: &Authority,
    ) -> anyhow::Result<i32> {
        let Some(c) = store.campaign(name)? else {
            anyhow::bail!("campaign {name} vanished from the store");
        };
        let (target, what, home) = match next {
            Next::Stay(code) => return Ok(code),
            Next::Step(t, what) => (*t, what, false),
            Next::Home => match &c.spec.kexec {
                Some(k) => (
                    k.return_to.clone(),
                    "the kernel the campaign started from".to_string(),
                    true,
                ),
                None => return Ok(0),
            },
        };
        let mut store = store;
        let here = self.machine.kernel().release;
        self.progress.line(&format!(
            "patchbench: campaign {name}: loading {what}: {} (initrd {}) with {:?} [{}]",
            target.image.display(),
            target
                .initrd
                .as_ref()
                .map_or("none".to_string(), |p| p.display().to_string()),
            target.cmdline,
            auth.reason()
        ));
        let fault = |store: &mut Store, why: String| -> anyhow::Result<()> {
            let (state, reason) = if home {
                (
                    c.state,
                    format!(
                        "{}; but the return to {} failed: {why}; the machine stays on {here}",
                        c.state_reason.as_deref().unwrap_or(c.state.as_str()),
                        target.image.display()
                    ),
                )
            } else {
                (
                    CampaignState::Failed,
                    format!("{why}; the machine stays on {here}"),
                )
            };
            store.set_campaign_state(c.id, state, Some(&reason))
        };
        if let Err(e) = self.machine.load(&target, auth) {
            fault(&mut store, format!("loading {what} failed: {e}"))?;
            self.progress
                .line(&format!("patchbench: campaign {name}: loading failed: {e}"));
            return Ok(1);
        }
        let location = store.location().clone();
        // Close the store (its WAL checkpointed) before the machine goes down.
        drop(store);
        self.progress
            .line(&format!("patchbench: campaign {name}: kexec into {what}"));
        match self.machine.jump(auth) {
            Ok(()) => Ok(0),
            Err(e) => {
                let _ = self.machine.unload();
                let mut store = Store::open(&location, crate::store::Access::Write, None)?;
                fault(&mut store, format!("the kexec into {what} failed: {e}"))?;
                self.progress
                    .line(&format!("patchbench: campaign {name}: kexec failed: {e}"));
                Ok(1)
            }
        }
    }
}

/// Runs the step this boot (`markers`, running `here`) is for (unless `by_hand` and the boot
/// is no step) and says where to go next; Err(Next) when the campaign ends here.
fn step_for_this_boot(
    driver: &mut Driver,
    name: &str,
    markers: &Markers,
    here: &KernelInfo,
    by_hand: bool,
) -> anyhow::Result<Result<Next, Next>> {
    let c = match driver.prepare(name)? {
        Ok(c) => c,
        Err(_) => return Ok(Err(Next::Home)),
    };
    let next = match driver.peek_next(&c)? {
        Ok(s) => s,
        Err(_) => return Ok(Err(Next::Home)),
    };
    let on_step = markers.campaign.as_deref() == Some(name);
    if !on_step && by_hand {
        return Ok(Ok(step_target(driver.store, &c, &next, &here.release)?));
    }
    if markers.step != Some(next.id) {
        let why = format!(
            "this boot is for step {} but the next step is {} (round {} {}): the machine was \
             rebooted by something else",
            markers.step.map_or("(none)".to_string(), |s| s.to_string()),
            next.id,
            next.round,
            next.side
        );
        return fail_campaign(driver, &c, &why, &here.release);
    }
    let side = c
        .spec
        .side(&next.side)
        .ok_or_else(|| anyhow::anyhow!("campaign {name}: unknown side {}", next.side))?;
    if let Err(e) = check_kernel(side, here) {
        return fail_campaign(
            driver,
            &c,
            &format!("this boot is not the expected one: {e}"),
            &here.release,
        );
    }
    let step = match driver.claim(&c)? {
        crate::store::campaign::Claim::Step(s) => s,
        crate::store::campaign::Claim::Nothing => return Ok(Err(Next::Home)),
        crate::store::campaign::Claim::Held(h) => {
            anyhow::bail!("campaign {name}: {} runs {} now", h.owner, h.what)
        }
    };
    if step.id != next.id {
        driver.store.release_step(step.id, &driver.owner)?;
        anyhow::bail!("campaign {name}: another process claimed step {}", next.id);
    }
    if step.attempts > MAX_ATTEMPTS {
        driver.store.fail_step(
            step.id,
            &driver.owner,
            "the machine went down during every attempt of this step (power loss, crash or hang)",
            "",
        )?;
    } else {
        driver.run_one(&c, step)?;
    }
    let after = driver.store.step(next.id)?;
    if let Some(s) = after.filter(|s| s.state == StepState::Failed) {
        let why = format!(
            "round {} {} failed twice in a row: {}",
            s.round,
            s.side,
            s.error.as_deref().unwrap_or("no reason recorded")
        );
        return fail_campaign(driver, &c, &why, &here.release);
    }
    let c = match driver.prepare(name)? {
        Ok(c) => c,
        Err(End::Stopped) | Err(_) => return Ok(Err(Next::Home)),
    };
    match driver.peek_next(&c)? {
        Ok(s) => Ok(Ok(step_target(driver.store, &c, &s, &here.release)?)),
        Err(_) => Ok(Err(Next::Home)),
    }
}

/// Fails the campaign: the machine stays on this kernel.
fn fail_campaign(
    driver: &mut Driver,
    c: &Campaign,
    why: &str,
    release: &str,
) -> anyhow::Result<Result<Next, Next>> {
    let reason = format!("{why}; the machine stays on {release}");
    driver
        .store
        .set_campaign_state(c.id, CampaignState::Failed, Some(&reason))?;
    driver
        .progress
        .line(&format!("patchbench: campaign {} failed: {reason}", c.name));
    Ok(Err(Next::Stay(1)))
}

/// The kernel, initrd and command line of step `s`'s boot; the campaign fails (the machine
/// stays on `release`, the running kernel's) when its image is gone or changed since the
/// campaign started.
fn step_target(store: &mut Store, c: &Campaign, s: &Step, release: &str) -> anyhow::Result<Next> {
    let fail = |store: &mut Store, why: String| -> anyhow::Result<Next> {
        let reason = format!("{why}; the machine stays on {release}");
        store.set_campaign_state(c.id, CampaignState::Failed, Some(&reason))?;
        crate::safe_text::eprint_line(&format!("patchbench: campaign {} failed: {reason}", c.name));
        Ok(Next::Stay(1))
    };
    let (Some(side), Some(k)) = (c.spec.side(&s.side), c.spec.kexec.as_ref()) else {
        return fail(store, format!("the campaign has no kernel for {}", s.side));
    };
    let Some(kernel) = side.kernel.as_ref() else {
        return fail(store, format!("the {} side names no kernel", s.side));
    };
    match kernel_image::sha256_file(&kernel.image) {
        Err(e) => {
            return fail(
                store,
                format!(
                    "the kernel image of round {} {} is gone: {e}",
                    s.round, s.side
                ),
            )
        }
        Ok(sum) if sum != kernel.sha256 => {
            return fail(
                store,
                format!(
                    "the kernel image {} of the {} side changed since the campaign started \
                     (sha256 {} then, {} now)",
                    kernel.image.display(),
                    s.side,
                    kernel.sha256,
                    sum
                ),
            )
        }
        Ok(_) => {}
    }
    if let Some(i) = &kernel.initrd {
        if let Err(e) = std::fs::File::open(i) {
            return fail(
                store,
                format!(
                    "the initrd {} of the {} side is gone: {e}",
                    i.display(),
                    s.side
                ),
            );
        }
    }
    let target = BootTarget {
        image: kernel.image.clone(),
        initrd: kernel.initrd.clone(),
        cmdline: cmdline::for_step(&k.return_to.cmdline, &side.cmdline, &c.name, s.id),
    };
    Ok(Next::Step(
        Box::new(target),
        format!(
            "round {}/{} {} ({})",
            s.round, c.planned_rounds, s.side, kernel.release
        ),
    ))
}

/// Takes back the campaign's steps whose owner is gone (an earlier boot, a dead process).
fn reclaim(store: &mut Store, c: &Campaign, count_attempt: bool) -> anyhow::Result<Vec<Step>> {
    store.reclaim_steps(
        c.id,
        &|owner| Owner::parse(owner).is_none_or(|o| o.is_dead_here()),
        count_attempt,
    )
}
