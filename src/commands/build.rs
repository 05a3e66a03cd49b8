//! `patchbench build` (a kernel from a git tree, a ref and patches, built or found in the
//! cache: its id and files printed) and `patchbench builds` (the cache, listed). The work is
//! `crate::build`; the text is `crate::report::build`.

use super::store::TextOrJson;
use crate::build::config::ConfigChoice;
use crate::build::{Build, BuildRequest};
use crate::proc::signals::Signals;
use crate::progress::Progress;
use clap::Args;
use std::path::PathBuf;

/// What selects and configures a build (shared with `campaign start --tree`).
#[derive(Debug, Clone, Args)]
pub struct BuildOpts {
    /// The kernel's config: running (this machine's kernel's, from /boot/config-RELEASE or
    /// /proc/config.gz), tiny (the smallest that boots in the vm executor and runs every
    /// workload), or a config file; the fairness and reproducibility fragments follow, then
    /// --fragment files (docs/build.md).
    #[arg(
        long,
        value_name = "running|tiny|FILE",
        default_value = "running",
        requires = "tree"
    )]
    pub config: String,
    /// A config fragment (CONFIG_X=y lines) applied after ours; repeatable, in order.
    #[arg(long = "fragment", value_name = "FILE", requires = "tree")]
    pub fragments: Vec<PathBuf>,
    /// make's jobs (default: the CPUs).
    #[arg(short = 'j', long = "jobs", value_name = "N", requires = "tree",
          value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub jobs: Option<u32>,
    /// The build cache (default: $XDG_CACHE_HOME/patchbench/builds).
    #[arg(long, value_name = "DIR", requires = "tree")]
    pub cache: Option<PathBuf>,
    /// Build the tree's working state: its uncommitted changes (staged, modified, and
    /// untracked files that are not ignored) become one patch on the checked-out HEAD, before
    /// the --patch files, recorded in the build's key and patches (docs/build.md). Without
    /// it they are left out, with a warning naming them.
    #[arg(long, requires = "tree")]
    pub include_uncommitted: bool,
}

impl BuildOpts {
    pub fn choice(&self) -> ConfigChoice {
        ConfigChoice::parse(&self.config)
    }
}

#[derive(Debug, Clone, Args)]
pub struct BuildArgs {
    /// A git tree of Linux (never written: the build happens in a private worktree).
    #[arg(long, value_name = "DIR")]
    pub tree: PathBuf,
    /// What to build: a branch, tag or commit of the tree.
    #[arg(long = "ref", value_name = "REF", default_value = "HEAD")]
    pub git_ref: String,
    /// A patch applied on top, in order: an mbox (one patch, a series, a series with its
    /// cover letter) or a plain diff; repeatable.
    #[arg(long = "patch", value_name = "FILE")]
    pub patches: Vec<PathBuf>,
    #[command(flatten)]
    pub opts: BuildOpts,
    /// Resolve the config only (ours, then the fragments, `make olddefconfig`, every value
    /// checked) and print the `.config`, without building.
    #[arg(long)]
    pub config_only: bool,
    /// Output format: the text, or JSON (schema patchbench.build/1).
    #[arg(long, value_enum, default_value = "text")]
    pub format: TextOrJson,
}

#[derive(Debug, Clone, Args)]
pub struct BuildsArgs {
    /// The build cache (default: $XDG_CACHE_HOME/patchbench/builds).
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Output format: the table, or JSON (schema patchbench.builds/1).
    #[arg(long, value_enum, default_value = "text")]
    pub format: TextOrJson,
    /// Free the cache's work area first: the build slots no build is using (make's objects:
    /// the next build of that tree starts from scratch), failed builds' logs and records, and
    /// staging left by dead processes. Finished builds stay unless --older-than.
    #[arg(long)]
    pub prune: bool,
    /// With --prune: also remove the finished builds built more than DAYS days ago.
    #[arg(long, value_name = "DAYS", requires = "prune", value_parser = parse_days)]
    pub older_than: Option<f64>,
}

/// Builds (or finds) what a request asks for, with a progress line and Ctrl-C handled.
pub fn build_with_progress(req: &BuildRequest) -> anyhow::Result<Build> {
    let signals = Signals::install()?;
    let mut progress = Progress::new();
    let b = crate::build::build(req, &progress, &signals);
    progress.finish();
    b.map_err(|e| crate::error::interrupted_keeping(e, NOTHING_BUILT))
}

/// What an interrupted build keeps: no build (its staging directory is swept).
const NOTHING_BUILT: &str = "nothing was stored as a build";
/// What an interrupted `--config-only` keeps: no config.
const NOTHING_STORED: &str = "nothing was stored";

/// `--include-uncommitted`: the tree's uncommitted changes for a build of `refs` (one of
/// them the checked-out HEAD), read once; None without the flag, or for a clean tree (said
/// in one line).
pub fn uncommitted(
    opts: &BuildOpts,
    tree: &std::path::Path,
    refs: &[&str],
) -> anyhow::Result<Option<crate::build::uncommitted::Uncommitted>> {
    if !opts.include_uncommitted {
        return Ok(None);
    }
    let u = crate::build::uncommitted::read(tree, refs, opts.cache.as_deref())?;
    if u.is_none() {
        crate::safe_text::eprint_line(&format!(
            "patchbench: --include-uncommitted: nothing uncommitted in {}, so HEAD is built \
             as committed",
            tree.display()
        ));
    }
    Ok(u)
}

/// `patchbench build`.
pub fn build(a: &BuildArgs) -> anyhow::Result<i32> {
    let req = BuildRequest {
        tree: a.tree.clone(),
        git_ref: a.git_ref.clone(),
        patches: a.patches.clone(),
        config: a.opts.choice(),
        fragments: a.opts.fragments.clone(),
        jobs: a.opts.jobs.map(|j| j as usize),
        cache_dir: a.opts.cache.clone(),
        uncommitted: uncommitted(&a.opts, &a.tree, &[&a.git_ref])?,
    };
    if a.config_only {
        let signals = Signals::install()?;
        let mut progress = Progress::new();
        let r = crate::build::resolve_config(&req, &progress, &signals);
        progress.finish();
        let r = r.map_err(|e| crate::error::interrupted_keeping(e, NOTHING_STORED))?;
        let text = match a.format {
            TextOrJson::Text => r.text.clone(),
            TextOrJson::Json => {
                let mut v = serde_json::to_value(&r)?;
                if let Some(o) = v.as_object_mut() {
                    o.insert("schema".into(), "patchbench.build-config/1".into());
                }
                serde_json::to_string_pretty(&v)? + "\n"
            }
        };
        crate::report::print(&text)?;
        return Ok(0);
    }
    let b = build_with_progress(&req)?;
    let text = match a.format {
        TextOrJson::Text => crate::report::build::build_text(&b),
        TextOrJson::Json => crate::report::build::build_json(&b)?,
    };
    crate::report::print(&text)?;
    Ok(0)
}

/// A number of days, 0 or more (`30`, `0.5`).
fn parse_days(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(d) if d.is_finite() && d >= 0.0 => Ok(d),
        _ => Err(format!("{s:?} is not a number of days (e.g. 30 or 0.5)")),
    }
}

/// `patchbench builds`.
pub fn builds(a: &BuildsArgs) -> anyhow::Result<i32> {
    let dir = match &a.cache {
        Some(d) => d.clone(),
        None => crate::build::cache::default_dir()?,
    };
    let cache = crate::build::cache::Cache::existing(Some(&dir))?;
    let pruned = match (&cache, a.prune) {
        (Some(c), true) => Some(crate::build::prune::prune(c, a.older_than)?),
        _ => None,
    };
    let work = cache.as_ref().map(crate::build::prune::WorkArea::of);
    let list: Vec<(Build, u64)> = match &cache {
        Some(c) => c
            .list()
            .into_iter()
            .map(|b| {
                let bytes = crate::build::cache::size_of(&b.dir);
                (b, bytes)
            })
            .collect(),
        None => Vec::new(),
    };
    let text = match a.format {
        TextOrJson::Text => {
            crate::report::build::builds_text(&dir, &list, work.as_ref(), pruned.as_ref())
        }
        TextOrJson::Json => {
            crate::report::build::builds_json(&dir, &list, work.as_ref(), pruned.as_ref())?
        }
    };
    crate::report::print(&text)?;
    Ok(0)
}
