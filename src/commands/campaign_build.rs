//! `campaign start --tree`: both sides' kernels built (`crate::build`) before anything is
//! stored, the config resolved once on the base side and the patched side built with the base
//! side's resolved `.config` (a difference that the patched tree's Kconfig makes is shown and
//! recorded); and for a lab agent, the same two kernels built on its box from what the
//! campaign recorded (the commits, the patch bytes, the resolved config), refused when the
//! box's build key differs (another compiler, another kbuild).

use super::campaign::StartArgs;
use crate::build::config::ConfigChoice;
use crate::build::patches::PatchFile;
use crate::build::{Build, BuildRequest};
use crate::error::Usage;
use crate::proc::signals::Signals;
use crate::progress::Progress;
use crate::record::campaign::spec::{
    CampaignBuild, CampaignSpec, KernelSpec, PatchSource, SideBuild,
};
use base64::Engine as _;
use std::path::{Path, PathBuf};

/// `REF[:WORDS]`: the ref and the command-line words (a git ref has no `:`).
pub fn split_ref(s: &str) -> (String, Vec<String>) {
    let (r, words) = s.split_once(':').unwrap_or((s, ""));
    let r = if r.is_empty() { "HEAD" } else { r };
    (
        r.to_string(),
        words.split_whitespace().map(str::to_string).collect(),
    )
}

/// The kernel spec of a build, for a side to boot.
fn kernel_of(b: &Build, initrd: Option<&Path>) -> anyhow::Result<KernelSpec> {
    let info = crate::campaign::kernel_image::inspect(&b.image).map_err(Usage)?;
    Ok(KernelSpec {
        image: b.image.clone(),
        sha256: info.sha256,
        release: b.release.clone(),
        initrd: initrd.map(Path::to_path_buf),
        modules: b.modules.clone(),
    })
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
            })
        })
        .collect()
}

fn say_built(progress: &Progress, side: &str, b: &Build) {
    let how = if b.cached {
        "found in the cache".to_string()
    } else {
        format!(
            "built in {}{}",
            crate::campaign::driver::human_secs(b.build_secs),
            if b.incremental {
                ", incrementally"
            } else {
                ", from scratch"
            }
        )
    };
    progress.line(&format!(
        "patchbench: {side}: kernel {} ({how}): {}",
        b.release,
        b.to_ref().line()
    ));
}

/// Builds both sides of a `--tree` campaign into `spec` (kernels, builds, the config).
pub fn build_sides(a: &StartArgs, spec: &mut CampaignSpec) -> anyhow::Result<()> {
    let Some(tree) = &a.tree else {
        return Ok(());
    };
    let s = &a.sides;
    let (base_ref, _) = split_ref(s.base.as_deref().unwrap_or("HEAD"));
    let (patched_ref, _) = split_ref(s.patched.as_deref().or(s.base.as_deref()).unwrap_or("HEAD"));
    let request = |git_ref: &str, patches: &[PathBuf], config: ConfigChoice| BuildRequest {
        tree: tree.clone(),
        git_ref: git_ref.to_string(),
        patches: patches.to_vec(),
        fragments: if matches!(config, ConfigChoice::Resolved(_)) {
            Vec::new()
        } else {
            a.build.fragments.clone()
        },
        config,
        jobs: a.build.jobs.map(|j| j as usize),
        cache_dir: a.build.cache.clone(),
    };
    // Both patch lists read now: a bad one is refused before any build.
    let base_sources = sources(&s.base_patches)?;
    let patched_sources = sources(&s.patched_patches)?;
    let signals = Signals::install()?;
    let mut progress = Progress::new();
    let built = (|| {
        let base = crate::build::build(
            &request(&base_ref, &s.base_patches, a.build.choice()),
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
        let kernel = kernel_of(b, initrd)?;
        if let Some(spec_side) = spec.sides.iter_mut().find(|x| x.name == side) {
            spec_side.kernel = Some(kernel);
            spec_side.build = Some(SideBuild {
                git_ref,
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

/// Where a lab agent builds: its tree (default: the campaign's), cache and jobs.
#[derive(Debug, Clone, Default)]
pub struct BoxBuild {
    pub tree: Option<PathBuf>,
    pub cache: Option<PathBuf>,
    pub jobs: Option<usize>,
}

/// A lab box's copy of a built campaign's spec: each side's kernel built here from what the
/// campaign recorded (its base commit, its patches' bytes, the base side's resolved config),
/// with the key checked against the campaign's. A box whose key differs (another compiler, a
/// tree without the commit) is refused in one line naming what differs.
pub fn on_this_box(
    spec: &CampaignSpec,
    here: &BoxBuild,
    progress: &Progress,
    signals: &Signals,
) -> anyhow::Result<CampaignSpec> {
    let Some(cb) = &spec.build else {
        return Ok(spec.clone());
    };
    let tree = here.tree.clone().unwrap_or_else(|| cb.tree.clone());
    let private = crate::private_dir::PrivateDir::create(&std::env::temp_dir(), "patchbench-box-")
        .map_err(|e| anyhow::anyhow!("cannot make a private directory: {e}"))?;
    let config = private.path().join("config");
    std::fs::write(&config, &cb.config_text)?;
    let mut local = spec.clone();
    for side in local.sides.iter_mut() {
        let Some(sb) = side.build.clone() else {
            continue;
        };
        let dir = private.path().join(&side.name);
        std::fs::create_dir_all(&dir)?;
        let mut patches = Vec::new();
        for (i, p) in sb.patches.iter().enumerate() {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(&p.base64)
                .map_err(|e| {
                    anyhow::anyhow!("the campaign's patch {} is unreadable: {e}", p.name)
                })?;
            let file = dir.join(format!("{i:02}-{}", p.name.replace('/', "_")));
            std::fs::write(&file, bytes)?;
            patches.push(file);
        }
        let b = crate::build::build(
            &BuildRequest {
                tree: tree.clone(),
                git_ref: sb.build.base_commit.clone(),
                patches,
                config: ConfigChoice::Resolved(config.clone()),
                fragments: Vec::new(),
                jobs: here.jobs,
                cache_dir: here.cache.clone(),
            },
            progress,
            signals,
        )
        .map_err(|e| {
            if e.downcast_ref::<Usage>().is_some() {
                Usage(format!(
                    "campaign {}: this box cannot build its {} kernel: {e}",
                    spec.name, side.name
                ))
                .into()
            } else {
                e
            }
        })?;
        let want = &sb.build;
        let differs = [
            ("commit", &want.commit, &b.commit),
            ("config", &want.config_sha256, &b.config.sha256),
            ("compiler", &want.compiler, &b.compiler),
        ]
        .into_iter()
        .find(|(_, w, g)| w != g);
        if let Some((what, w, g)) = differs {
            return Err(Usage(format!(
                "campaign {}: this box builds another {} kernel than the campaign's (its {what} \
                 is {g:?}, the campaign's {w:?}): every box must build the same key; it runs \
                 no step of this campaign",
                spec.name, side.name
            ))
            .into());
        }
        say_built(progress, &side.name, &b);
        side.kernel = Some(kernel_of(
            &b,
            side.kernel.as_ref().and_then(|k| k.initrd.as_deref()),
        )?);
    }
    private.close()?;
    Ok(local)
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
