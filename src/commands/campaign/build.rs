//! `campaign start --tree`: both sides' kernels built (`crate::build`) before anything is
//! stored, the config resolved once on the base side and the patched side built with the base
//! side's resolved `.config` (a difference that the patched tree's Kconfig makes is shown and
//! recorded). A lab agent builds the same two kernels on its box: `crate::campaign::built`.

use super::args::StartArgs;
use crate::build::config::ConfigChoice;
use crate::build::patches::PatchFile;
use crate::build::BuildRequest;
use crate::campaign::side_kernel::{of_build, say_built};
use crate::proc::signals::Signals;
use crate::progress::Progress;
use crate::record::campaign::spec::{CampaignBuild, CampaignSpec, PatchSource, SideBuild};
use base64::Engine as _;
use std::path::PathBuf;

/// `REF[:WORDS]`: the ref and the command-line words (a git ref has no `:`).
pub fn split_ref(s: &str) -> (String, Vec<String>) {
    let (r, words) = s.split_once(':').unwrap_or((s, ""));
    let r = if r.is_empty() { "HEAD" } else { r };
    (
        r.to_string(),
        words.split_whitespace().map(str::to_string).collect(),
    )
}

fn sources(files: &[PathBuf]) -> anyhow::Result<Vec<PatchSource>> {
    files
        .iter()
        .map(|p| {
            let f = PatchFile::read(p)?;
            Ok(PatchSource {
                name: f.name,
                sha256: f.sha256,
                base64: base64::engine::general_purpose::STANDARD.encode(&f.bytes),
                subject: None,
            })
        })
        .collect()
}

/// Builds both sides of a `--tree` campaign into `spec` (kernels, builds, the config).
pub fn build_sides(a: &StartArgs, spec: &mut CampaignSpec) -> anyhow::Result<()> {
    let Some(tree) = &a.steps.tree else {
        return Ok(());
    };
    let s = &a.sides;
    let (base_ref, _) = split_ref(s.base.as_deref().unwrap_or("HEAD"));
    let (patched_ref, _) = split_ref(s.patched.as_deref().or(s.base.as_deref()).unwrap_or("HEAD"));
    // Read once for both sides (the same bytes on each): a side at another commit than the
    // checked-out HEAD is built as committed.
    let uncommitted =
        crate::commands::build::uncommitted(&a.steps.build, tree, &[&base_ref, &patched_ref])?;
    let mut at_head = Vec::new();
    if let Some(u) = &uncommitted {
        let t = crate::build::tree::Tree::open(tree)?;
        for r in [&base_ref, &patched_ref] {
            if t.resolve(r)? == u.head {
                at_head.push(r.clone());
            }
        }
    }
    let side_uncommitted = |git_ref: &str| {
        uncommitted
            .clone()
            .filter(|_| at_head.iter().any(|r| r == git_ref))
    };
    let request = |git_ref: &str, patches: &[PathBuf], config: ConfigChoice| BuildRequest {
        uncommitted: side_uncommitted(git_ref),
        tree: tree.clone(),
        git_ref: git_ref.to_string(),
        patches: patches.to_vec(),
        fragments: config.fragments(&a.steps.build.fragments),
        config,
        jobs: a.steps.build.jobs.map(|j| j as usize),
        cache_dir: a.steps.build.cache.clone(),
    };
    // Both patch lists read now: a bad one is refused before any build.
    let base_sources = sources(&s.base_patches)?;
    let patched_sources = sources(&s.patched_patches)?;
    let signals = Signals::install()?;
    let mut progress = Progress::new();
    let built = (|| {
        // Both sides checked (refs, patches applied, tools) before either is built.
        crate::build::check_request(
            &request(&base_ref, &s.base_patches, a.steps.build.choice()),
            &progress,
            &signals,
        )?;
        crate::build::check_request(
            &request(&patched_ref, &s.patched_patches, a.steps.build.choice()),
            &progress,
            &signals,
        )?;
        let base = crate::build::build(
            &request(&base_ref, &s.base_patches, a.steps.build.choice()),
            &progress,
            &signals,
        )?;
        say_built(&progress, "base", &base);
        let patched = crate::build::build(
            &request(
                &patched_ref,
                &s.patched_patches,
                ConfigChoice::Resolved(base.config_file.clone()),
            ),
            &progress,
            &signals,
        )?;
        say_built(&progress, "patched", &patched);
        anyhow::Ok((base, patched))
    })();
    progress.finish();
    let (base, patched) = built?;
    let diff = patched.config.diff.clone();
    if !diff.is_empty() {
        crate::safe_text::eprint_line(&format!(
            "patchbench: the patched side's config differs from the base side's (its Kconfig \
             changed them): {}",
            diff.join(", ")
        ));
    }
    let config_text = std::fs::read_to_string(&base.config_file)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", base.config_file.display()))?;
    for (side, b, git_ref, src, initrd) in [
        (
            "base",
            &base,
            base_ref,
            base_sources,
            s.base_initrd.as_deref(),
        ),
        (
            "patched",
            &patched,
            patched_ref,
            patched_sources,
            s.patched_initrd.as_deref(),
        ),
    ] {
        let kernel = of_build(b, initrd).map_err(crate::error::Usage)?;
        if let Some(spec_side) = spec.sides.iter_mut().find(|x| x.name == side) {
            spec_side.kernel = Some(kernel);
            let carried = side_uncommitted(&git_ref).map(|u| PatchSource {
                name: u.patch.name.clone(),
                sha256: u.patch.sha256.clone(),
                base64: base64::engine::general_purpose::STANDARD.encode(&u.patch.bytes),
                subject: u.patch.subject.clone(),
            });
            spec_side.build = Some(SideBuild {
                git_ref,
                uncommitted: carried,
                patches: src,
                build: b.to_ref(),
            });
        }
    }
    spec.build = Some(CampaignBuild {
        tree: tree.canonicalize().unwrap_or_else(|_| tree.clone()),
        config: base.config.choice.clone(),
        config_text,
        config_diff: diff,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_is_a_ref_with_words() {
        assert_eq!(split_ref("v6.1"), ("v6.1".to_string(), vec![]));
        assert_eq!(
            split_ref("HEAD~2:pti=off quiet"),
            ("HEAD~2".to_string(), vec!["pti=off".into(), "quiet".into()])
        );
        assert_eq!(
            split_ref(":pti=on"),
            ("HEAD".to_string(), vec!["pti=on".into()])
        );
    }
}
