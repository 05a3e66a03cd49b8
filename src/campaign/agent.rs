//! A lab box's worker loop (`patchbench agent`): it registers its box in the shared store
//! (fingerprint, tags, the executors it offers), then repeatedly: uploads what waits in its
//! spool, hands back the steps whose lease ran out (their agent was killed or lost its box),
//! takes a place in an open lab campaign its box qualifies for (`campaign start --boxes N
//! --tag T`), claims that place's next planned step (`FOR UPDATE SKIP LOCKED`, with a lease
//! renewed while the step runs), runs it with the campaign's executor through the
//! [`Driver`], and stores its run with the step's `done`. When there is no work it waits
//! `poll` seconds and looks again (`once`: it returns).
//!
//! When the store goes away mid-step the step is finished, its run kept in the spool and
//! uploaded, exactly once, when the store is back; meanwhile the agent retries the connection
//! every `poll` seconds. A signal stops the step at once and hands it back to the queue
//! (planned again, the attempt not counted); [`Agent::serve`] then returns the
//! [`crate::error::Interrupted`] error.

use super::driver::{Driver, End};
use super::executor::Executor;
use super::flow::{runner_for, By, Runner};
use crate::error::{is_unreachable, usage};
use crate::proc::signals::Signals;
use crate::progress::Progress;
use crate::record::campaign::spec::ExecutorKind;
use crate::record::campaign::state::Owner;
use crate::store::db::Store;
use crate::store::lab::Spooled;
use crate::store::spool::Spool;
use std::collections::HashMap;
use std::time::Duration;

/// How an agent works.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// This box's name in the lab; agents with one name are one box.
    pub box_name: String,
    pub tags: Vec<String>,
    /// The executors this box offers.
    pub executors: Vec<ExecutorKind>,
    /// Run one step (or find none), then return.
    pub once: bool,
    /// Only this campaign.
    pub campaign: Option<String>,
    /// Seconds a claim holds without renewal.
    pub lease_s: f64,
    /// Seconds between looks for work when there is none, and between reconnection tries.
    pub poll_s: f64,
    /// The connect timeout of each reconnection.
    pub connect_timeout: Option<Duration>,
    /// Where this box builds the kernels of a campaign started from a tree.
    pub build: super::built::BoxBuild,
}

/// An agent at work.
pub struct Agent<'a> {
    config: AgentConfig,
    store: Store,
    spool: Spool,
    signals: &'a Signals,
    progress: &'a mut Progress,
    owner: String,
    /// Steps this agent ran.
    ran: usize,
    /// The executor of each campaign it has run a step of, by campaign id.
    executors: HashMap<i64, Box<dyn Executor>>,
    /// The other owner of this box it last said it waits for.
    waiting_for: Option<String>,
    /// Campaigns this box cannot run (its build key differs), with why: said once.
    refused: HashMap<i64, String>,
}

/// What one look for work found.
enum Look {
    Ran,
    Nothing,
}

impl AgentConfig {
    /// Refuses what an agent cannot do (one line each).
    pub fn check(&self) -> anyhow::Result<()> {
        if let Some(k) = self
            .executors
            .iter()
            .find(|k| !super::flow::agent_may_offer(**k))
        {
            return usage(format!(
                "an agent offers local or vm steps, not {}; a kexec campaign runs on the machine \
                 that starts it (`campaign start --executor kexec`)",
                k.as_str()
            ));
        }
        if self.lease_s < 3.0 {
            return usage("--lease must be at least 3 seconds (it is renewed every third of it)");
        }
        Ok(())
    }
}

impl<'a> Agent<'a> {
    /// Checks the config and registers the box in `store`: its fingerprint, tags and the
    /// executors it offers.
    pub fn new(
        config: AgentConfig,
        mut store: Store,
        spool: Spool,
        signals: &'a Signals,
        progress: &'a mut Progress,
    ) -> anyhow::Result<Agent<'a>> {
        config.check()?;
        crate::store::interrupt_when(signals.flag());
        let me = Owner::me().to_string();
        let offered: Vec<String> = config
            .executors
            .iter()
            .map(|e| e.as_str().to_string())
            .collect();
        let fingerprint = serde_json::to_string(&crate::sysinfo::SystemInfo::collect())?;
        store.register_box(&config.box_name, &fingerprint, &config.tags, &offered, &me)?;
        Ok(Agent {
            config,
            store,
            spool,
            signals,
            progress,
            owner: me,
            ran: 0,
            executors: HashMap::new(),
            waiting_for: None,
            refused: HashMap::new(),
        })
    }

    /// The store it serves.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Steps it ran so far.
    pub fn ran(&self) -> usize {
        self.ran
    }

    /// The spool it keeps runs in while the store is away.
    pub fn spool_path(&self) -> &std::path::Path {
        self.spool.path()
    }

    /// Runs still waiting in the spool for this store.
    pub fn waiting_in_spool(&mut self) -> usize {
        let shown = self.store.location().shown();
        self.spool.count(&shown).unwrap_or(0)
    }

    /// Works until interrupted (or, with `once`, after one step or none); then the box is
    /// free for another agent.
    pub fn serve(&mut self) -> anyhow::Result<()> {
        let end = self.work();
        let _ = self.store.release_holds(&self.owner);
        end
    }

    fn work(&mut self) -> anyhow::Result<()> {
        loop {
            self.signals.check()?;
            let look = self
                .upload_spool()
                .and_then(|()| self.store.touch_box(&self.config.box_name))
                .and_then(|()| self.look_for_work());
            match look {
                Ok(Look::Ran) if self.config.once => return Ok(()),
                Ok(Look::Ran) => {}
                Ok(Look::Nothing) if self.config.once => {
                    if self.ran == 0 {
                        self.progress
                            .line("patchbench agent: no planned step for this box");
                    }
                    return Ok(());
                }
                Ok(Look::Nothing) => {
                    // Idle: another agent of this box may take the next step. A store gone
                    // away meanwhile is waited for like any other call's.
                    match self.store.release_holds(&self.owner) {
                        Err(e) if is_unreachable(&e) => self.wait_for_store(&e)?,
                        other => other?,
                    }
                    self.signals
                        .sleep(Duration::from_secs_f64(self.config.poll_s))?
                }
                Err(e) if is_unreachable(&e) => self.wait_for_store(&e)?,
                Err(e) => return Err(e),
            }
        }
    }

    /// Reconnects until the store is back (or a signal comes).
    fn wait_for_store(&mut self, why: &anyhow::Error) -> anyhow::Result<()> {
        self.progress.line(&format!(
            "patchbench agent: {why}; retrying every {:.0} s",
            self.config.poll_s
        ));
        loop {
            self.signals
                .sleep(Duration::from_secs_f64(self.config.poll_s))?;
            match self.store.reconnect(self.config.connect_timeout) {
                Ok(()) => {
                    self.progress
                        .line("patchbench agent: the store is back; continuing");
                    return Ok(());
                }
                Err(e) if is_unreachable(&e) => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Uploads what waits in the spool for this store; a line per run.
    fn upload_spool(&mut self) -> anyhow::Result<()> {
        for (run, what) in self.spool.upload(&mut self.store)? {
            let what = match what {
                Spooled::Stored(id) => format!("stored as run {id}"),
                Spooled::AlreadyStored => "was already stored".to_string(),
                Spooled::DoneByAnother => {
                    "not stored: the step was run again and stored meanwhile".to_string()
                }
                Spooled::Gone => "not stored: its campaign is gone".to_string(),
            };
            self.progress.line(&format!(
                "campaign {}: the spooled run of step {} {what}",
                run.campaign, run.step_id
            ));
        }
        Ok(())
    }

    /// A driver for this agent's box, running steps with `executor`.
    fn driver<'s>(&'s mut self, executor: &'s mut dyn Executor) -> Driver<'s> {
        Driver {
            store: &mut self.store,
            executor,
            signals: self.signals,
            progress: &mut *self.progress,
            owner: self.owner.clone(),
            lease_s: self.config.lease_s,
            r#box: Some(self.config.box_name.clone()),
            spool: Some(&mut self.spool),
        }
    }

    /// One pass over the open lab campaigns this box may run: the first step it can claim is
    /// run.
    fn look_for_work(&mut self) -> anyhow::Result<Look> {
        let mut campaigns = self.store.campaigns()?;
        campaigns.retain(|c| {
            c.state.is_open()
                && self.config.campaign.as_ref().is_none_or(|n| *n == c.name)
                && c.spec.lab.as_ref().is_some_and(|l| {
                    l.admits(c.spec.executor, &self.config.tags, &self.config.executors)
                })
        });
        // An executor (its private directory) lives as long as its campaign is open.
        self.executors
            .retain(|id, _| campaigns.iter().any(|c| c.id == *id));
        self.refused
            .retain(|id, _| campaigns.iter().any(|c| c.id == *id));
        for c in campaigns {
            if self.refused.contains_key(&c.id) {
                continue;
            }
            for s in self.store.expire_leases(c.id)? {
                self.progress.line(&format!(
                    "campaign {} round {} box {} {}: its agent stopped renewing the lease; the \
                     step goes back to the queue",
                    c.name, s.round, s.r#box, s.side
                ));
            }
            // A campaign built from a tree: this box builds the same two kernels first (or
            // finds them in its cache), before it takes a place it might not be able to
            // serve.
            let local = if c.spec.build.is_some() && !self.executors.contains_key(&c.id) {
                match super::built::on_this_box(
                    &c.spec,
                    &self.config.build,
                    self.progress,
                    self.signals,
                ) {
                    Ok(spec) => Some(spec),
                    Err(e) if e.downcast_ref::<crate::error::Usage>().is_some() => {
                        self.progress.line(&format!("patchbench agent: {e}"));
                        self.refused.insert(c.id, e.to_string());
                        continue;
                    }
                    Err(e) => return Err(e),
                }
            } else {
                None
            };
            if !self.store.take_place(c.id, &self.config.box_name)? {
                continue;
            }
            // One executor per campaign for the agent's life (a vm one checks QEMU and the
            // kernels once and keeps its initramfs).
            let mut executor = match self.executors.remove(&c.id) {
                Some(e) => e,
                None => match runner_for(local.as_ref().unwrap_or(&c.spec), By::Agent)? {
                    Runner::Here(e) => e,
                    _ => continue,
                },
            };
            let next = self.driver(executor.as_mut()).next_step(&c.name);
            self.executors.insert(c.id, executor);
            match next? {
                None => {
                    self.ran += 1;
                    self.waiting_for = None;
                    return Ok(Look::Ran);
                }
                Some(End::Held(h)) => {
                    if self.waiting_for.as_deref() != Some(h.owner.as_str()) {
                        self.progress.line(&format!(
                            "patchbench agent: box {} is busy: {} runs {} (a box runs one step \
                             at a time); this agent waits",
                            self.config.box_name,
                            crate::record::campaign::state::Owner::describe(&h.owner),
                            h.what
                        ));
                    }
                    self.waiting_for = Some(h.owner);
                    return Ok(Look::Nothing);
                }
                Some(End::Finished) => self.progress.line(&format!(
                    "campaign {}: finished; `patchbench campaign report {}{}` compares the sides",
                    c.name,
                    c.name,
                    self.store.location().hint()
                )),
                Some(End::Stopped | End::Idle) => {}
            }
        }
        Ok(Look::Nothing)
    }
}
