//! The kernels of a campaign started from a tree (`campaign start --tree`), on the box that
//! runs its steps: a lab agent builds the same two kernels on its box from what the campaign
//! recorded (the commits, the patch bytes, the resolved config), and is refused when the box's
//! build key differs (another compiler, another kbuild); and the pieces `campaign start`
//! shares with it (a build as a side's kernel, the line that says what was built).

use crate::build::config::ConfigChoice;
use crate::build::BuildRequest;
use crate::error::Usage;
use crate::proc::signals::Signals;
use crate::progress::Progress;
use crate::record::campaign::spec::CampaignSpec;
use base64::Engine as _;
use std::path::PathBuf;

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
        let decode = |p: &crate::record::campaign::spec::PatchSource| {
            base64::engine::general_purpose::STANDARD
                .decode(&p.base64)
                .map_err(|e| anyhow::anyhow!("the campaign's patch {} is unreadable: {e}", p.name))
        };
        let mut patches = Vec::new();
        for (i, p) in sb.patches.iter().enumerate() {
            // Under its own name (a plain diff's subject is `plain diff NAME`, part of the
            // commit), one directory per place in the series.
            let file = dir.join(format!("{i:02}")).join(p.name.replace('/', "_"));
            std::fs::create_dir_all(dir.join(format!("{i:02}")))?;
            std::fs::write(&file, decode(p)?)?;
            patches.push(file);
        }
        let uncommitted = match &sb.uncommitted {
            Some(p) => {
                let mut patch = crate::build::patches::PatchFile::from_bytes(
                    &dir.join(&p.name),
                    &p.name,
                    decode(p)?,
                )?;
                patch.subject = p.subject.clone();
                let files = crate::build::uncommitted::count_files(&patch.bytes);
                Some(crate::build::uncommitted::Uncommitted {
                    head: sb.build.base_commit.clone(),
                    patch,
                    files,
                })
            }
            None => None,
        };
        let want = crate::build::BuildKey {
            commit: sb.build.commit.clone(),
            config_sha256: sb.build.config_sha256.clone(),
            compiler: sb.build.compiler.clone(),
        };
        let b = crate::build::build_expecting(
            &BuildRequest {
                tree: tree.clone(),
                git_ref: sb.build.base_commit.clone(),
                patches,
                config: ConfigChoice::Resolved(config.clone()),
                fragments: Vec::new(),
                jobs: here.jobs,
                cache_dir: here.cache.clone(),
                uncommitted,
            },
            &want,
            progress,
            signals,
        )
        .map_err(|e| {
            if e.downcast_ref::<Usage>().is_some() {
                Usage(format!(
                    "campaign {}: this box does not build the campaign's {} kernel, so it runs \
                     none of its steps: {e}",
                    spec.name, side.name
                ))
                .into()
            } else {
                e
            }
        })?;
        super::side_kernel::say_built(progress, &side.name, &b);
        side.kernel = Some(
            super::side_kernel::of_build(
                &b,
                side.kernel.as_ref().and_then(|k| k.initrd.as_deref()),
            )
            .map_err(Usage)?,
        );
    }
    private.close()?;
    Ok(local)
}
