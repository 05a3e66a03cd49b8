//! `patchbench agent`: a lab box's worker, its arguments and what it says; the loop itself is
//! `crate::campaign::agent`. It registers its box in the shared store (fingerprint, tags, the
//! executors it offers), then repeatedly takes a place in an open lab campaign its box
//! qualifies for (`campaign start --boxes N --tag T`), claims and runs that place's next
//! step and stores its run. When there is no work it waits `--poll` seconds and looks again
//! (`--once`: it exits).
//!
//! When the store goes away mid-step the step is finished, its run kept in the spool (a small
//! SQLite file on the box) and uploaded, exactly once, when the store is back; meanwhile the
//! agent retries the connection every few seconds. SIGTERM or SIGINT stops the step at once
//! and hands it back to the queue (planned again, the attempt not counted), then the agent
//! exits 0: a service manager stopping it is the normal way out.

use super::shared::StoreArg;
use crate::campaign::agent::{Agent, AgentConfig};
use crate::error::{usage, Interrupted};
use crate::proc::signals::Signals;
use crate::progress::Progress;
use crate::record::campaign::spec::ExecutorKind;
use crate::store::spool::Spool;
use clap::Args;
use std::path::PathBuf;

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
    let spool_path = match &a.spool {
        Some(p) => p.clone(),
        None => crate::store::spool::default_path()?,
    };
    let box_name = a.box_name.clone().unwrap_or_else(crate::sysinfo::hostname);
    if crate::args::parse_tag(&box_name).is_err() {
        return usage(format!(
            "this host's name {} cannot name a box; give --box NAME",
            crate::safe_text::field(&box_name)
        ));
    }
    let config = AgentConfig {
        box_name,
        tags: a.tags.clone(),
        executors: a.executor.clone(),
        once: a.once,
        campaign: a.campaign.clone(),
        lease_s: a.lease,
        poll_s: a.poll,
        connect_timeout: a.store.connect_timeout,
        build: crate::campaign::built::BoxBuild {
            tree: a.tree.clone(),
            cache: a.cache.clone(),
            jobs: a.jobs.map(|j| j as usize),
        },
    };
    config.check()?;
    let signals = Signals::install()?;
    // An agent started without its store says so and stops (exit 2); once it runs, a store
    // that goes away is waited for.
    let store = a.store.open(true)?;
    let spool = Spool::open(&spool_path)?;
    let mut progress = Progress::new();
    let mut agent = Agent::new(config.clone(), store, spool, &signals, &mut progress)?;
    crate::safe_text::eprint_line(&format!(
        "patchbench agent: box {}{} offering {} serves store {} (lease {:.0} s, spool {})",
        config.box_name,
        if config.tags.is_empty() {
            String::new()
        } else {
            format!(" tagged {}", config.tags.join(", "))
        },
        config
            .executors
            .iter()
            .map(|e| e.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        agent.store().location(),
        config.lease_s,
        spool_path.display()
    ));
    let end = agent.serve();
    let ran = agent.ran();
    let left = agent.waiting_in_spool();
    drop(agent);
    progress.finish();
    if let Err(e) = end {
        let Some(i) = e.downcast_ref::<Interrupted>() else {
            return Err(e);
        };
        crate::safe_text::eprint_line(&format!(
            "patchbench agent: stopped by {} after {ran} step(s) (a step it was running, if \
             any, is planned again)",
            i.name
        ));
    }
    if left > 0 {
        crate::safe_text::eprint_line(&format!(
            "patchbench agent: {left} run(s) still wait in spool {}; the next agent on this box \
             uploads them",
            spool_path.display()
        ));
    }
    Ok(0)
}
