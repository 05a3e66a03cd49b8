//! The kernels of a bisection, from the build cache (`crate::build`): the good endpoint with
//! the config the user chose (`--config`, `--fragment`), every other commit with the good
//! endpoint's resolved `.config` (`olddefconfig` only, so one config for all; what a commit's
//! Kconfig changes in it is recorded), all through the cache's one build slot of the tree, so
//! each commit after the first rebuilds only what changed since the one before. A commit that
//! does not build is a reason, not an error: the step is skipped with it.

use super::flow::{Built, Kernels};
use super::state::BisectSpec;
use crate::build::config::ConfigChoice;
use crate::build::{Build, BuildRequest};
use crate::error::Interrupted;
use crate::proc::signals::Signals;
use crate::progress::Progress;
use crate::record::campaign::spec::{CampaignBuild, SideBuild};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// How a bisection's kernels are built (stored in its spec).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BuildOptions {
    /// `running`, `tiny` or a config file (as `--config`).
    pub config: String,
    /// `--fragment` files, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fragments: Vec<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<PathBuf>,
}

/// Builds with `crate::build`.
pub struct CacheKernels<'s> {
    pub signals: &'s Signals,
    /// The good endpoint's build, once known (its `.config` is every other build's).
    good: Option<Build>,
}

impl<'s> CacheKernels<'s> {
    pub fn new(signals: &'s Signals) -> CacheKernels<'s> {
        CacheKernels {
            signals,
            good: None,
        }
    }

    fn request(
        spec: &BisectSpec,
        opts: &BuildOptions,
        commit: &str,
        patches: &[PathBuf],
        config: ConfigChoice,
    ) -> BuildRequest {
        BuildRequest {
            tree: spec.tree.clone(),
            git_ref: commit.to_string(),
            patches: patches.to_vec(),
            fragments: config.fragments(&opts.fragments),
            config,
            jobs: opts.jobs,
            cache_dir: opts.cache.clone(),
            uncommitted: None,
        }
    }

    /// The good endpoint's build (found in the cache after the first time).
    fn good(
        &mut self,
        spec: &BisectSpec,
        opts: &BuildOptions,
        progress: &Progress,
    ) -> anyhow::Result<Build> {
        if let Some(b) = &self.good {
            return Ok(b.clone());
        }
        let req = Self::request(
            spec,
            opts,
            &spec.good.sha,
            &[],
            ConfigChoice::parse(&opts.config),
        );
        let b = crate::build::build(&req, progress, self.signals)?;
        crate::campaign::side_kernel::say_built(progress, &format!("bisect {}", spec.name), &b);
        self.good = Some(b.clone());
        Ok(b)
    }
}

/// Checks the good endpoint's build without building (its commit is a Linux tree, the
/// config and fragments, the build tools: `crate::build::check_request`), so that `bisect
/// start` refuses in one line before anything is stored. The other commits are checked when
/// they are built: one that does not is skipped with its reason.
pub fn check_good(
    spec: &BisectSpec,
    opts: &BuildOptions,
    progress: &Progress,
    signals: &Signals,
) -> anyhow::Result<()> {
    let req = CacheKernels::request(
        spec,
        opts,
        &spec.good.sha,
        &[],
        ConfigChoice::parse(&opts.config),
    );
    crate::build::check_request(&req, progress, signals).map(|_| ())
}

/// An error that ends the bisection rather than skipping a commit: an interruption, a full
/// disk.
fn is_fatal(e: &anyhow::Error) -> bool {
    e.is::<Interrupted>() || e.to_string().contains("no space left on device")
}

fn built(spec: &BisectSpec, good: &Build, b: &Build, patches: &[PathBuf]) -> Result<Built, String> {
    let config_text = std::fs::read_to_string(&good.config_file)
        .map_err(|e| format!("cannot read {}: {e}", good.config_file.display()))?;
    Ok(Built {
        id: b.id.clone(),
        kernel: crate::campaign::side_kernel::of_build(b, None)?,
        side: Some(SideBuild {
            git_ref: b.base_commit.clone(),
            uncommitted: None,
            patches: patches
                .iter()
                .filter_map(|p| crate::build::patches::PatchFile::read(p).ok())
                .map(|f| crate::record::campaign::spec::PatchSource {
                    name: f.name,
                    sha256: f.sha256,
                    base64: base64_of(&f.bytes),
                    subject: None,
                })
                .collect(),
            build: b.to_ref(),
        }),
        campaign: Some(CampaignBuild {
            tree: spec.tree.clone(),
            config: good.config.choice.clone(),
            config_text,
            config_diff: b.config.diff.clone(),
        }),
    })
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

impl Kernels for CacheKernels<'_> {
    fn build(
        &mut self,
        spec: &BisectSpec,
        commit: &str,
        patches: &[PathBuf],
        progress: &Progress,
    ) -> anyhow::Result<Result<Built, String>> {
        let opts: BuildOptions = serde_json::from_value(spec.build.clone()).map_err(|e| {
            anyhow::anyhow!(
                "bisection {}: its build options are damaged: {e}",
                spec.name
            )
        })?;
        let good = match self.good(spec, &opts, progress) {
            Ok(g) => g,
            Err(e) if is_fatal(&e) || commit == spec.good.sha => return Err(e),
            Err(e) => return Ok(Err(first_line(&e))),
        };
        if commit == spec.good.sha && patches.is_empty() {
            return Ok(built(spec, &good, &good, patches));
        }
        let req = Self::request(
            spec,
            &opts,
            commit,
            patches,
            ConfigChoice::Resolved(good.config_file.clone()),
        );
        match crate::build::build(&req, progress, self.signals) {
            Ok(b) => {
                crate::campaign::side_kernel::say_built(
                    progress,
                    &format!("bisect {}", spec.name),
                    &b,
                );
                if !b.config.diff.is_empty() {
                    progress.line(&format!(
                        "patchbench: bisect {}: the config at {} differs from the good \
                         endpoint's (its Kconfig changed them): {}",
                        spec.name,
                        &commit[..commit.len().min(12)],
                        b.config.diff.join(", ")
                    ));
                }
                Ok(built(spec, &good, &b, patches))
            }
            Err(e) if is_fatal(&e) => Err(e),
            Err(e) => Ok(Err(first_line(&e))),
        }
    }
}

fn first_line(e: &anyhow::Error) -> String {
    crate::safe_text::field(&e.to_string())
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}
