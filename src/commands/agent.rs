//! `patchbench agent`: a lab box's worker. It registers its box in the shared store
//! (fingerprint, tags, the executors it offers), then repeatedly: hands back the steps whose
//! lease ran out (their agent was killed or lost its box), takes a place in an open lab
//! campaign its box qualifies for (`campaign start --boxes N --tag T`), claims that place's
//! next planned step (`FOR UPDATE SKIP LOCKED`, with a lease renewed while the step runs),
//! runs it with the campaign's executor and stores its run with the step's `done`. When
//! there is no work it waits `--poll` seconds and looks again (`--once`: it exits).
//!
//! When the store goes away mid-step the step is finished, its run kept in the spool (a small
//! SQLite file on the box) and uploaded, exactly once, when the store is back; meanwhile the
//! agent retries the connection every few seconds. SIGTERM or SIGINT stops the step at once
//! and hands it back to the queue (planned again, the attempt not counted), then the agent
//! exits 0: a service manager stopping it is the normal way out.

use super::shared::StoreArg;
use crate::campaign::driver::{Driver, End};
use crate::campaign::executor::Executor;
use crate::error::{is_unreachable, usage, Interrupted};
use crate::proc::signals::Signals;
use crate::progress::Progress;
use crate::record::campaign::spec::ExecutorKind;
use crate::record::campaign::state::Owner;
use crate::store::db::Store;
use crate::store::lab::Spooled;
use crate::store::spool::Spool;
use clap::Args;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Args)]
pub struct AgentArgs {
    /// This box's name in the lab (default: the host name). Agents with one name are one
    /// box: its rounds are theirs.
    #[arg(long = "box", value_name = "NAME", value_parser = crate::args::parse_tag)]
    pub box_name: Option<String>,
    /// A tag of this box (repeatable); a campaign started with --tag T runs only on boxes
    /// tagged T.
    #[arg(long = "tag", value_name = "TAG", value_parser = crate::args::parse_tag)]
    pub tags: Vec<String>,
    /// The executors this box offers (comma-separated): local, vm.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "local")]
    pub executor: Vec<ExecutorKind>,
    /// Run one step (or find none), then exit.
    #[arg(long)]
    pub once: bool,
    /// Only this campaign.
    #[arg(long, value_name = "NAME")]
    pub campaign: Option<String>,
    /// Seconds a claim holds without renewal; renewed every third of it while the step runs.
    /// A killed agent's step returns to the queue this long after its last renewal.
    #[arg(long, value_name = "SECS", default_value = "60",
          value_parser = crate::args::parse_duration)]
    pub lease: f64,
    /// Seconds between looks for work when there is none (and between reconnection tries
    /// while the store is away).
    #[arg(long, value_name = "SECS", default_value = "5",
          value_parser = crate::args::parse_duration)]
    pub poll: f64,
    /// Where this box builds the kernels of a campaign started with --tree: the git tree
    /// (default: the path the campaign was started with). Every box builds the same key
    /// (commit, config, compiler) and refuses a campaign whose key it cannot build.
    #[arg(long, value_name = "DIR")]
    pub tree: Option<PathBuf>,
    /// This box's build cache (default: $XDG_CACHE_HOME/patchbench/builds).
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// make's jobs for those builds (default: the CPUs).
    #[arg(short = 'j', long = "jobs", value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub jobs: Option<u32>,
    /// Where a finished step's run waits while the store cannot be reached (default:
    /// ~/.local/share/patchbench/spool.db).
    #[arg(long, value_name = "FILE")]
    pub spool: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArg,
}

pub fn execute(a: &AgentArgs) -> anyhow::Result<i32> {
    if a.executor.contains(&ExecutorKind::Kexec) {
        return usage(
            "an agent offers local or vm steps; a kexec campaign runs on the machine that starts \
             it (`campaign start --executor kexec`)",
        );
    }
    if a.lease < 3.0 {
        return usage("--lease must be at least 3 seconds (it is renewed every third of it)");
    }
    let spool_path = match &a.spool {
        Some(p) => p.clone(),
        None => crate::store::spool::default_path()?,
    };
    let signals = Signals::install()?;
    // An agent started without its store says so and stops (exit 2); once it runs, a store
    // that goes away is waited for.
    let mut store = a.store.open(true)?;
    let spool = Spool::open(&spool_path)?;
    let me = Owner::me().to_string();
    let box_name = a.box_name.clone().unwrap_or_else(crate::sysinfo::hostname);
    if crate::args::parse_tag(&box_name).is_err() {
        return usage(format!(
            "this host's name {} cannot name a box; give --box NAME",
            crate::safe_text::field(&box_name)
        ));
    }
    let offered: Vec<String> = a.executor.iter().map(|e| e.as_str().to_string()).collect();
    let fingerprint = serde_json::to_string(&crate::sysinfo::SystemInfo::collect())?;
    store.register_box(&box_name, &fingerprint, &a.tags, &offered, &me)?;
    crate::safe_text::eprint_line(&format!(
        "patchbench agent: box {box_name}{} offering {} serves store {} (lease {:.0} s, spool \
         {})",
        if a.tags.is_empty() {
            String::new()
        } else {
            format!(" tagged {}", a.tags.join(", "))
        },
        offered.join(", "),
        store.location().shown(),
        a.lease,
        spool_path.display()
    ));
    let mut agent = Agent {
        args: a,
        store,
        spool,
        signals: &signals,
        progress: Progress::new(),
        owner: me,
        box_name,
        ran: 0,
        executors: HashMap::new(),
        refused: HashMap::new(),
    };
    let end = agent.serve();
    agent.progress.finish();
    if let Err(e) = end {
        let Some(i) = e.downcast_ref::<Interrupted>() else {
            return Err(e);
        };
        crate::safe_text::eprint_line(&format!(
            "patchbench agent: stopped by {} after {} step(s) (a step it was running, if any, \
             is planned again)",
            i.name, agent.ran
        ));
    }
    let left = agent
        .spool
        .count(&agent.store.location().shown())
        .unwrap_or(0);
    if left > 0 {
        crate::safe_text::eprint_line(&format!(
            "patchbench agent: {left} run(s) still wait in spool {}; the next agent on this box \
             uploads them",
            agent.spool.path().display()
        ));
    }
    Ok(0)
}

/// An agent at work.
struct Agent<'a> {
    args: &'a AgentArgs,
    store: Store,
    spool: Spool,
    signals: &'a Signals,
    progress: Progress,
    owner: String,
    box_name: String,
    /// Steps this agent ran.
    ran: usize,
    /// The executor of each campaign it has run a step of, by campaign id.
    executors: HashMap<i64, Box<dyn Executor>>,
    /// Campaigns this box cannot run (its build key differs), with why: said once.
    refused: HashMap<i64, String>,
}

/// What one look for work found.
enum Look {
    Ran,
    Nothing,
}

impl Agent<'_> {
    /// Works until interrupted (or, with --once, after one step or none).
    fn serve(&mut self) -> anyhow::Result<()> {
        loop {
            self.signals.check()?;
            let look = self
                .upload_spool()
                .and_then(|()| self.store.touch_box(&self.box_name))
                .and_then(|()| self.look_for_work());
            match look {
                Ok(Look::Ran) if self.args.once => return Ok(()),
                Ok(Look::Ran) => {}
                Ok(Look::Nothing) if self.args.once => {
                    if self.ran == 0 {
                        self.progress
                            .line("patchbench agent: no planned step for this box");
                    }
                    return Ok(());
                }
                Ok(Look::Nothing) => self
                    .signals
                    .sleep(Duration::from_secs_f64(self.args.poll))?,
                Err(e) if is_unreachable(&e) => self.wait_for_store(&e)?,
                Err(e) => return Err(e),
            }
        }
    }

    /// Reconnects until the store is back (or a signal comes).
    fn wait_for_store(&mut self, why: &anyhow::Error) -> anyhow::Result<()> {
        self.progress.line(&format!(
            "patchbench agent: {why}; retrying every {:.0} s",
            self.args.poll
        ));
        loop {
            self.signals
                .sleep(Duration::from_secs_f64(self.args.poll))?;
            match self.store.reconnect(self.args.store.connect_timeout) {
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

    /// The campaign's spec with this box's own builds of its kernels.
    fn box_kernels(
        &mut self,
        spec: &crate::record::campaign::spec::CampaignSpec,
    ) -> anyhow::Result<crate::record::campaign::spec::CampaignSpec> {
        let here = super::campaign_build::BoxBuild {
            tree: self.args.tree.clone(),
            cache: self.args.cache.clone(),
            jobs: self.args.jobs.map(|j| j as usize),
        };
        super::campaign_build::on_this_box(spec, &here, &self.progress, self.signals)
    }

    /// A driver for this agent's box, running steps with `executor`.
    fn driver<'s>(&'s mut self, executor: &'s mut dyn Executor) -> Driver<'s> {
        Driver {
            store: &mut self.store,
            executor,
            signals: self.signals,
            progress: &mut self.progress,
            owner: self.owner.clone(),
            lease_s: self.args.lease,
            r#box: Some(self.box_name.clone()),
            spool: Some(&mut self.spool),
        }
    }

    /// One pass over the open lab campaigns this box may run: the first step it can claim is
    /// run.
    fn look_for_work(&mut self) -> anyhow::Result<Look> {
        let mut campaigns = self.store.campaigns()?;
        campaigns.retain(|c| {
            c.state.is_open()
                && self.args.campaign.as_ref().is_none_or(|n| *n == c.name)
                && c.spec.lab.as_ref().is_some_and(|l| {
                    l.admits(c.spec.executor, &self.args.tags, &self.args.executor)
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
                match self.box_kernels(&c.spec) {
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
            if !self.store.take_place(c.id, &self.box_name)? {
                continue;
            }
            // One executor per campaign for the agent's life (a vm one checks QEMU and the
            // kernels once and keeps its initramfs).
            let mut executor = match self.executors.remove(&c.id) {
                Some(e) => e,
                None => super::campaign::executor_for(local.as_ref().unwrap_or(&c.spec))?,
            };
            let next = self.driver(executor.as_mut()).next_step(&c.name);
            self.executors.insert(c.id, executor);
            match next? {
                None => {
                    self.ran += 1;
                    return Ok(Look::Ran);
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
