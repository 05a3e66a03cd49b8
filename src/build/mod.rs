//! Kernel builds: from a git tree, a ref and patches to a bootable, cached, recorded kernel.
//!
//! # The API (stable: `campaign start`, the lab agent and bisect call it)
//!
//! ```ignore
//! let b: Build = build::build(
//!     &BuildRequest {
//!         tree: "/src/linux".into(),          // a git tree; never written
//!         git_ref: "HEAD".into(),             // a branch, tag or commit
//!         patches: vec!["slower.mbox".into()],// mbox (series, cover letter) or plain diffs
//!         config: ConfigChoice::Tiny,         // Running | Tiny | File(p) | Resolved(p)
//!         fragments: vec![],                  // user fragments, after ours
//!         jobs: None,                         // default: the CPUs
//!         cache_dir: None,                    // default: $XDG_CACHE_HOME/patchbench/builds
//!         uncommitted: None,                  // or uncommitted::read(tree, &["HEAD"], None)?
//!     },
//!     &progress,
//!     &signals,
//! )?;
//! b.id; b.commit; b.base_commit; b.patches; b.config.sha256; b.compiler; b.release;
//! b.image; b.system_map; b.vmlinux; b.config_file; b.modules; b.log; b.config.diff;
//! b.cached   // true when this call found it in the cache
//! let c: config::Resolved = build::resolve_config(&request, &progress, &signals)?; // no build
//! let same = build::build_expecting(&request, &b.key, &progress, &signals)?; // or refused
//! let commit: String = build::check_request(&request, &progress, &signals)?; // no checkout
//! ```
//!
//! - **The key** is (the commit after the patches, the SHA-256 of the resolved `.config`, the
//!   compiler's version); the id is 16 hex digits of its hash. A key is never built twice.
//! - **Another commit, the same config** (bisect; the patched side of a campaign): pass the
//!   first build's `config_file` as `ConfigChoice::Resolved`. Only `make olddefconfig` runs at
//!   the new commit; `config.diff` lists what it changed (a patch that adds a Kconfig symbol),
//!   so two sides can say whether their configs differ.
//! - **Incremental**: every build of one tree with one compiler goes through one build slot
//!   (a private worktree and its object directory, locked while in use). The worktree is moved
//!   to the next commit with git (only changed files get new mtimes), the `.config` is written
//!   only when it differs, and make rebuilds what changed: a one-file patch on a built base
//!   costs the time of that file and the link.
//! - **Nothing of the user's is touched**: see [`tree`]. Patches are applied in the cache's
//!   own repository ([`patches`]), so the resulting commit (and with a remembered config, the
//!   key) is known before any checkout: a cache hit touches no source tree.
//! - **Reproducible**: fixed committer and dates for applied patches; `KBUILD_BUILD_TIMESTAMP`
//!   (the commit's date), `KBUILD_BUILD_USER`/`HOST` (`patchbench`), `KBUILD_BUILD_VERSION=1`,
//!   `LOCALVERSION=-pb<commit>` (the release names the commit; `LOCALVERSION_AUTO` off), the
//!   object directory a direct subdirectory of the source (kbuild then records relative
//!   paths), module signing off.
//! - **Uncommitted changes** of the tree are left out (a build is of a commit, as committed)
//!   and named in one warning, unless the request carries them ([`uncommitted`],
//!   `--include-uncommitted`): then they are the first patch, before the `--patch` files, so
//!   they are part of the commit, the key, and the build's list of patches.
//! - **Failures** are one line (bad input: exit status 2) and leave no finished build: a
//!   build is staged privately and published by one rename ([`cache`]); the log of a failed
//!   build stays in `CACHE/.work/logs/<id>.log`. A key whose code does not build is
//!   remembered (`CACHE/.work/failed/<id>.txt`) and refused at once the next time it is asked
//!   for, with the first failure's message: a bisection asks for a broken commit again on
//!   every resume.
//!
//! Modules: [`tree`] (git), [`input`] (the user's files, bounded), [`patches`] (mail and
//! diffs), [`uncommitted`] (the working tree's changes as a patch), [`config`] (configs, fragments,
//! checks), [`tools`] (what a build needs), [`make`] (kbuild under supervision), [`cache`]
//! (layout, locks, publishing, listing).

pub mod cache;
pub mod config;
pub mod disk_full;
pub mod input;
pub mod make;
pub mod patches;
pub mod prune;
pub mod tools;
pub mod tree;
pub mod uncommitted;

use crate::error::Usage;
use crate::proc::signals::Signals;
use crate::progress::Progress;
use crate::record::campaign::spec::KernelSpec;
use cache::Cache;
use config::{ConfigChoice, Dropped, Fragment, Start};
use patches::{AppliedPatch, PatchFile};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;
use tree::{Repo, Tree};

/// The object directory's name inside a slot's worktree (a direct subdirectory, so kbuild
/// records the source tree as `..`).
pub const OBJ_DIR: &str = ".patchbench-obj";
/// The version of how builds are made; part of every key's memo of configs.
const RECIPE: &str = "patchbench-build/1";

/// What to build.
#[derive(Debug, Clone)]
pub struct BuildRequest {
    /// A git tree of Linux (work tree or bare); read, never written.
    pub tree: PathBuf,
    /// What to build: a branch, tag or commit of `tree`.
    pub git_ref: String,
    /// Patch files applied in order: mbox (one patch, a series, a cover letter) or plain diffs.
    pub patches: Vec<PathBuf>,
    pub config: ConfigChoice,
    /// The user's fragments, applied after the shipped ones (not to a resolved config).
    pub fragments: Vec<PathBuf>,
    /// make's jobs (default: the CPUs this process may use).
    pub jobs: Option<usize>,
    /// The cache (default: [`cache::default_dir`]).
    pub cache_dir: Option<PathBuf>,
    /// The working tree's uncommitted changes ([`uncommitted::read`]), applied before
    /// `patches`; `git_ref` must name the commit they were read at. None: they are left out
    /// (and named in a warning).
    pub uncommitted: Option<uncommitted::Uncommitted>,
}

/// What identifies a build.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct BuildKey {
    /// The commit after the patches.
    pub commit: String,
    /// SHA-256 of the resolved `.config`, hex.
    pub config_sha256: String,
    /// The compiler's version (`gcc --version`, first line).
    pub compiler: String,
}

impl BuildKey {
    /// The build's id: 16 hex digits of the key's hash.
    pub fn id(&self) -> String {
        tree::short_hash(
            format!(
                "{RECIPE}\0{}\0{}\0{}\0x86_64",
                self.commit, self.config_sha256, self.compiler
            )
            .as_bytes(),
        )
    }
}

/// A fragment as recorded.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FragmentInfo {
    pub file: String,
    pub sha256: String,
}

/// The config of a build, as recorded.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ConfigInfo {
    /// `tiny`, `running`, `file NAME`, `resolved`.
    pub choice: String,
    /// Where its text came from (`/proc/config.gz`, a file's path, `make tinyconfig`).
    pub origin: String,
    /// SHA-256 of the resolved `.config`, hex.
    pub sha256: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fragments: Vec<FragmentInfo>,
    /// Requested values kconfig did not keep.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<Dropped>,
    /// With a resolved config: what changed in it at this build's commit (`CONFIG_X: y -> n`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diff: Vec<String>,
}

/// A finished build.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Build {
    pub id: String,
    pub key: BuildKey,
    /// The tree as given, and the ref.
    pub tree: PathBuf,
    pub git_ref: String,
    /// The commit the ref named.
    pub base_commit: String,
    /// The commit built (after the patches).
    pub commit: String,
    pub patches: Vec<AppliedPatch>,
    pub config: ConfigInfo,
    pub compiler: String,
    /// `uname -r` of the built kernel.
    pub release: String,
    /// Whether CONFIG_MODULES is set (then `modules` is there).
    pub has_modules: bool,
    /// When it was published (RFC 3339).
    pub built_at: String,
    /// Seconds make took.
    pub build_secs: f64,
    /// Whether make found objects of an earlier build in its slot.
    pub incremental: bool,
    /// Where it lives (`CACHE/<id>`), and its files.
    #[serde(skip)]
    pub dir: PathBuf,
    #[serde(skip)]
    pub image: PathBuf,
    #[serde(skip)]
    pub system_map: PathBuf,
    #[serde(skip)]
    pub vmlinux: PathBuf,
    #[serde(skip)]
    pub config_file: PathBuf,
    #[serde(skip)]
    pub modules: Option<PathBuf>,
    #[serde(skip)]
    pub log: PathBuf,
    /// True when this call found it in the cache.
    #[serde(skip)]
    pub cached: bool,
}

impl Build {
    /// Reads the build in `dir` (`CACHE/<id>`).
    pub fn read(dir: &Path) -> anyhow::Result<Build> {
        let file = dir.join(cache::BUILD_FILE);
        let text = std::fs::read_to_string(&file)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
        let mut b: Build = serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{} is unreadable: {e}", file.display()))?;
        b.fill_paths(dir);
        Ok(b)
    }

    fn fill_paths(&mut self, dir: &Path) {
        let r = &self.release;
        self.dir = dir.to_path_buf();
        self.image = dir.join("boot").join(KernelSpec::image_file_name(r));
        self.system_map = dir.join(format!("boot/System.map-{r}"));
        self.config_file = dir.join(format!("boot/config-{r}"));
        self.vmlinux = dir.join("vmlinux");
        self.modules = self
            .has_modules
            .then(|| dir.join(format!("lib/modules/{r}")));
        self.log = dir.join("build.log");
    }

    /// The subjects of the patches applied (skipped ones left out).
    pub fn subjects(&self) -> Vec<String> {
        self.patches
            .iter()
            .filter(|p| p.skipped.is_none())
            .map(|p| p.subject.clone())
            .collect()
    }

    /// How it was had: "found in the cache", or "built in 31 s, incrementally" / "..., from
    /// scratch".
    pub fn how(&self) -> String {
        if self.cached {
            return "found in the cache".to_string();
        }
        format!(
            "built in {}{}",
            crate::clock::human_secs(self.build_secs),
            if self.incremental {
                ", incrementally"
            } else {
                ", from scratch"
            }
        )
    }

    /// What a campaign run records of it.
    pub fn to_ref(&self) -> crate::record::campaign::BuildRef {
        crate::record::campaign::BuildRef {
            id: self.id.clone(),
            commit: self.commit.clone(),
            base_commit: self.base_commit.clone(),
            git_ref: self.git_ref.clone(),
            patches: self.subjects(),
            config: self.config.choice.clone(),
            config_sha256: self.config.sha256.clone(),
            compiler: self.compiler.clone(),
            release: self.release.clone(),
        }
    }
}

/// Builds what `req` asks for, or finds it in the cache. See the module's documentation.
pub fn build(req: &BuildRequest, progress: &Progress, signals: &Signals) -> anyhow::Result<Build> {
    match run(req, progress, signals, Mode::Build)? {
        Done::Built(b) => Ok(*b),
        _ => anyhow::bail!("the build stopped before it built"),
    }
}

/// Only the config `req` would be built with: resolved (in the build slot's checkout at the
/// resulting commit, or remembered), checked, not built.
pub fn resolve_config(
    req: &BuildRequest,
    progress: &Progress,
    signals: &Signals,
) -> anyhow::Result<config::Resolved> {
    match run(req, progress, signals, Mode::ConfigOnly)? {
        Done::Config(r) => Ok(r),
        _ => anyhow::bail!("the config was not resolved"),
    }
}

/// Builds what `req` asks for only if it is the build `key` names: stops (bad input, naming
/// what differs) as soon as the compiler, the commit after the patches or the resolved config
/// is known to differ from `key`'s, before any make. A lab box builds a campaign's kernels so.
pub fn build_expecting(
    req: &BuildRequest,
    key: &BuildKey,
    progress: &Progress,
    signals: &Signals,
) -> anyhow::Result<Build> {
    match run(req, progress, signals, Mode::Expect(key))? {
        Done::Built(b) => Ok(*b),
        _ => anyhow::bail!("the build stopped before it built"),
    }
}

/// Checks everything of `req` that needs no build and no checkout (the tree, the ref, the
/// patches, which are applied in the cache's repository, the config's start, the fragments,
/// the tools) and returns the commit it would build. `campaign start` checks both sides so
/// before it builds either.
pub fn check_request(
    req: &BuildRequest,
    progress: &Progress,
    signals: &Signals,
) -> anyhow::Result<String> {
    match run(req, progress, signals, Mode::CommitOnly)? {
        Done::Commit(c) => Ok(c),
        _ => anyhow::bail!("the check went further than asked"),
    }
}

/// What [`run`] is asked for.
#[derive(Clone, Copy)]
enum Mode<'a> {
    Build,
    ConfigOnly,
    CommitOnly,
    Expect(&'a BuildKey),
}

impl Mode<'_> {
    /// Refuses `got` for `what` when the expected key has something else.
    fn check(&self, what: &str, got: &str, want: impl Fn(&BuildKey) -> &str) -> anyhow::Result<()> {
        match self {
            Mode::Expect(k) if want(k) != got => Err(Usage(format!(
                "its {what} is {got:?} here but {:?} in the build asked for (every box must \
                 build the same key)",
                want(k)
            ))
            .into()),
            _ => Ok(()),
        }
    }
}

/// How [`run`] ended.
enum Done {
    Built(Box<Build>),
    Config(config::Resolved),
    Commit(String),
}

fn run(
    req: &BuildRequest,
    progress: &Progress,
    signals: &Signals,
    mode: Mode,
) -> anyhow::Result<Done> {
    let only_config = matches!(mode, Mode::ConfigOnly);
    // Everything the user gave, checked before anything is made.
    let tree = Tree::open(&req.tree)?;
    let base = tree.resolve(&req.git_ref)?;
    let mut files = Vec::new();
    if let Some(u) = &req.uncommitted {
        if u.head != base {
            return Err(Usage(format!(
                "--include-uncommitted: the uncommitted changes of {} are relative to {}, but \
                 {} is {}: leave the flag out, or build HEAD",
                req.tree.display(),
                &u.head[..12.min(u.head.len())],
                crate::safe_text::field(&req.git_ref),
                &base[..12]
            ))
            .into());
        }
        files.push(u.patch.clone());
    } else if matches!(mode, Mode::Build | Mode::Expect(_)) {
        if let Some(what) = tree.left_out(&base) {
            progress.line(&format!(
                "patchbench: warning: {} has uncommitted changes, which this build of {} \
                 ({}) leaves out (a build is of what is committed): {what}; give \
                 --include-uncommitted to build them",
                req.tree.display(),
                crate::safe_text::field(&req.git_ref),
                &base[..12]
            ));
        }
    }
    for p in &req.patches {
        files.push(PatchFile::read(p)?);
    }
    let start = Start::read(&req.config)?;
    let mut user = Vec::new();
    let mut fragment_info = Vec::new();
    for f in &req.fragments {
        let text = config::read_user_file("fragment", f)?;
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let frag = Fragment::parse(&f.display().to_string(), &text).map_err(Usage)?;
        fragment_info.push(FragmentInfo {
            file: name.clone(),
            sha256: tree::hex(&<sha2::Sha256 as sha2::Digest>::digest(text.as_bytes())),
        });
        user.push((name, frag));
    }
    if matches!(req.config, ConfigChoice::Resolved(_)) && !user.is_empty() {
        return Err(Usage(
            "a resolved config gets no fragment (it has its fragments already)".to_string(),
        )
        .into());
    }
    tools::check(None)?;
    let compiler = tools::compiler_version()?;
    mode.check("compiler", &compiler, |k| &k.compiler)?;
    let jobs = req.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let cache = Cache::open(req.cache_dir.as_deref())?;

    // The commit to build, in our own repository.
    let repo = {
        let _lock = cache.lock(
            &format!("repo-{}", tree.key()),
            "another patchbench uses the cache's repository of this tree",
            progress,
            signals,
        )?;
        Repo::open_or_init(&cache.repo_dir(&tree.key()), &tree)?
    };
    let scratch = cache.staging("apply")?;
    let applied = patches::apply(&repo, &base, &req.git_ref, &files, scratch.path())?;
    for p in applied.patches.iter().filter(|p| p.skipped.is_some()) {
        progress.line(&format!(
            "patchbench: {}: skipped \"{}\" ({})",
            p.file,
            p.subject,
            p.skipped.as_deref().unwrap_or("")
        ));
    }
    let commit = applied.commit.clone();
    mode.check("commit after the patches", &commit, |k| &k.commit)?;
    // The object directory's name is ours: a tree (or a patch) that has it could send the
    // build's writes through a link out of the cache.
    if repo.has_path(&commit, OBJ_DIR)? {
        return Err(Usage(format!(
            "the tree at {} has {OBJ_DIR}, the name a build keeps for its object directory \
             (added by a patch?): rename it there",
            &commit[..12]
        ))
        .into());
    }
    if matches!(mode, Mode::CommitOnly) {
        return Ok(Done::Commit(commit));
    }

    // A config resolved before from the same start at this commit gives the key now.
    let memo_key = tree::short_hash(
        format!(
            "{RECIPE}\0{}\0{}\0{}\0{}\0{}\0{}",
            start.identity(),
            fragment_info
                .iter()
                .map(|f| f.sha256.as_str())
                .collect::<Vec<_>>()
                .join(","),
            tree::short_hash(config::FAIRNESS.as_bytes()),
            tree::short_hash(config::REPRODUCIBLE.as_bytes()),
            commit,
            compiler
        )
        .as_bytes(),
    );
    let memo = read_memo(&cache, &memo_key);
    if let Some(m) = &memo {
        mode.check("config's SHA-256", &m.sha256, |k| &k.config_sha256)?;
        if only_config {
            return Ok(Done::Config(m.clone()));
        }
        let key = key_of(&commit, m, &compiler);
        if let Some(b) = found(&cache, &key) {
            return Ok(Done::Built(Box::new(b)));
        }
        failed_before(&cache, &key.id())?;
    }

    // The slot: its worktree moved to the commit.
    let slot_key = tree::short_hash(format!("{}\0{compiler}\0x86_64", tree.key()).as_bytes());
    let _slot = cache.lock(
        &format!("slot-{slot_key}"),
        "another build of this tree is using its build slot",
        progress,
        signals,
    )?;
    // Held by make and its compilers too: the slot is free only when all of them are gone.
    _slot.held_by_children_too()?;
    let slot = cache.slot_dir(&slot_key);
    let src = slot.join("src");
    std::fs::create_dir_all(&slot)
        .map_err(|e| disk_full::full_or(&cache.root, e, "cannot make the build slot"))?;
    progress.show(&format!("checking out {}", &commit[..12]));
    repo.checkout(&src, &commit)?;
    let resolved = match memo {
        Some(m) => m,
        None => {
            let log = cache.work().join(format!("logs/config-{memo_key}.log"));
            let _ = std::fs::remove_file(&log);
            let r = config::resolve(
                &start,
                &user,
                config::Places {
                    src: &src,
                    scratch: &scratch.path().join("obj"),
                    log: &log,
                    cache_root: &cache.root,
                },
                progress,
                signals,
            )?;
            write_memo(&cache, &memo_key, &r);
            let _ = std::fs::remove_file(&log);
            r
        }
    };
    for d in &resolved.dropped {
        progress.line(&format!("patchbench: the config did not keep {d}"));
    }
    if only_config {
        return Ok(Done::Config(resolved));
    }
    mode.check("config's SHA-256", &resolved.sha256, |k| &k.config_sha256)?;
    let key = key_of(&commit, &resolved, &compiler);
    let id = key.id();
    if let Some(b) = found(&cache, &key) {
        return Ok(Done::Built(Box::new(b)));
    }
    failed_before(&cache, &id)?;
    let values = config::values(&resolved.text);
    tools::check(Some(&values))?;
    let has_modules = values.get("CONFIG_MODULES").is_some_and(|v| v == "y");

    // The object tree gets the config only when it differs (a rewrite would relink all).
    let obj = src.join(OBJ_DIR);
    // A real directory, never a link (checked on every build of the slot, before anything
    // is made through it).
    if std::fs::symlink_metadata(&obj).is_ok_and(|m| !m.file_type().is_dir()) {
        anyhow::bail!(
            "{} is not a directory of the build slot's own (a link?); remove the slot {} and \
             build again",
            obj.display(),
            slot.display()
        );
    }
    std::fs::create_dir_all(&obj)
        .map_err(|e| disk_full::full_or(&cache.root, e, "cannot make the object directory"))?;
    let dot_config = obj.join(".config");
    if std::fs::read_to_string(&dot_config).ok().as_deref() != Some(resolved.text.as_str()) {
        cache::write_atomic(&dot_config, resolved.text.as_bytes())
            .map_err(|e| disk_full::full_or(&cache.root, e, "cannot write the config"))?;
    }
    let incremental = obj.join("vmlinux").is_file();
    // No vmlinux yet, but objects an interrupted build left: make goes on from them.
    let resumed = !incremental && obj.join("scripts").is_dir();

    let release_suffix = format!("-pb{}", &commit[..12]);
    let what = format!("{} ({})", &id, short_what(&req.git_ref, &applied.patches));
    let log = cache.failed_log(&id);
    let _ = std::fs::remove_file(&log);
    let env = vec![
        (
            "KBUILD_BUILD_TIMESTAMP".to_string(),
            repo.commit_date(&commit)?,
        ),
        ("KBUILD_BUILD_USER".to_string(), "patchbench".to_string()),
        ("KBUILD_BUILD_HOST".to_string(), "patchbench".to_string()),
        ("KBUILD_BUILD_VERSION".to_string(), "1".to_string()),
    ];
    let vars = vec![("LOCALVERSION".to_string(), release_suffix)];
    progress.line(&format!(
        "patchbench: building {what} at {} with {} jobs{} (log: {})",
        &commit[..12],
        jobs,
        if incremental {
            ", incrementally"
        } else if resumed {
            ", going on from the objects an interrupted build left"
        } else {
            ", from scratch"
        },
        log.display()
    ));
    let started = Instant::now();
    make::run(
        &make::Make {
            src: &src,
            obj: &obj,
            jobs,
            vars: vars.clone(),
            env: env.clone(),
            targets: Vec::new(),
        },
        &log,
        &what,
        &cache.root,
        progress,
        signals,
    )?
    .map_err(|f| {
        cache.remember_failure(&id, &f.0);
        f.into_error()
    })?;
    let release = std::fs::read_to_string(obj.join("include/config/kernel.release"))
        .map_err(|e| anyhow::anyhow!("the build left no kernel release: {e}"))?
        .trim()
        .to_string();

    // Staged, then published by one rename.
    let staged = cache.staging("build")?;
    let at = staged.path();
    let copy = |from: &Path, to: &str| -> anyhow::Result<()> {
        let dest = at.join(to);
        if let Some(p) = dest.parent() {
            std::fs::create_dir_all(p)
                .map_err(|e| disk_full::full_or(&cache.root, e, "cannot stage the build"))?;
        }
        std::fs::copy(from, &dest).map_err(|e| {
            disk_full::full_or(
                &cache.root,
                e,
                &format!("cannot copy {} into the build", from.display()),
            )
        })?;
        Ok(())
    };
    let outputs = make::outputs(&obj);
    copy(
        &outputs[0].0,
        &format!("boot/{}", KernelSpec::image_file_name(&release)),
    )?;
    copy(&outputs[1].0, &format!("boot/System.map-{release}"))?;
    copy(&outputs[3].0, &format!("boot/config-{release}"))?;
    copy(&outputs[2].0, "vmlinux")?;
    if has_modules {
        let mut install_vars = vars.clone();
        install_vars.push(("INSTALL_MOD_PATH".to_string(), at.display().to_string()));
        install_vars.push(("INSTALL_MOD_STRIP".to_string(), "1".to_string()));
        make::run(
            &make::Make {
                src: &src,
                obj: &obj,
                jobs,
                vars: install_vars,
                env: env.clone(),
                targets: vec!["modules_install".to_string()],
            },
            &log,
            &format!("{what}: modules_install"),
            &cache.root,
            progress,
            signals,
        )?
        .map_err(make::Failed::into_error)?;
        let mods = at.join(format!("lib/modules/{release}"));
        for link in ["build", "source"] {
            let _ = std::fs::remove_file(mods.join(link));
        }
        if !mods.join("modules.dep").is_file() {
            anyhow::bail!(
                "modules_install left no modules.dep in {} (is depmod installed? apt-get install kmod)",
                mods.display()
            );
        }
    }
    let build_secs = started.elapsed().as_secs_f64();
    copy(&log, "build.log")?;
    let (choice, origin) = (start.choice.describe(), start.origin.clone());
    let record = Build {
        id: id.clone(),
        key: key.clone(),
        tree: req.tree.clone(),
        git_ref: req.git_ref.clone(),
        base_commit: base,
        commit,
        patches: applied.patches,
        config: ConfigInfo {
            choice,
            origin,
            sha256: resolved.sha256.clone(),
            fragments: fragment_info,
            dropped: resolved.dropped.clone(),
            diff: resolved.diff.clone(),
        },
        compiler,
        release,
        has_modules,
        built_at: crate::clock::now_rfc3339(),
        build_secs,
        incremental,
        dir: PathBuf::new(),
        image: PathBuf::new(),
        system_map: PathBuf::new(),
        vmlinux: PathBuf::new(),
        config_file: PathBuf::new(),
        modules: None,
        log: PathBuf::new(),
        cached: false,
    };
    let json = serde_json::to_string_pretty(&record)?;
    std::fs::write(at.join(cache::BUILD_FILE), json)
        .map_err(|e| disk_full::full_or(&cache.root, e, "cannot write build.json"))?;
    let dir = cache.publish(staged, &id)?;
    let _ = std::fs::remove_file(&log);
    repo.keep(&id, &record.commit)?;
    let mut b = Build::read(&dir)?;
    b.cached = false;
    Ok(Done::Built(Box::new(b)))
}

fn key_of(commit: &str, r: &config::Resolved, compiler: &str) -> BuildKey {
    BuildKey {
        commit: commit.to_string(),
        config_sha256: r.sha256.clone(),
        compiler: compiler.to_string(),
    }
}

/// The finished build of `key`, if the cache has it.
fn found(cache: &Cache, key: &BuildKey) -> Option<Build> {
    let dir = cache.build_dir(&key.id());
    let mut b = Build::read(&dir).ok().filter(|b| b.key == *key)?;
    b.cached = true;
    Some(b)
}

/// Refuses a key that failed to build before, with the first failure's message: the same
/// commit, config and compiler fail the same way (bisect's steps ask for them again).
fn failed_before(cache: &Cache, id: &str) -> anyhow::Result<()> {
    match cache.failed_before(id) {
        Some(message) => Err(Usage(format!(
            "build {id} failed before, so it is not built again (remove {} to retry): {message}",
            cache.failed_record(id).display()
        ))
        .into()),
        None => Ok(()),
    }
}

fn read_memo(cache: &Cache, memo: &str) -> Option<config::Resolved> {
    let text = std::fs::read_to_string(cache.config_memo(memo)).ok()?;
    serde_json::from_str(&text).ok()
}

fn write_memo(cache: &Cache, memo: &str, r: &config::Resolved) {
    if let Ok(json) = serde_json::to_string(r) {
        // Only a shortcut: a memo that cannot be written is resolved again next time.
        let _ = cache::write_atomic(&cache.config_memo(memo), json.as_bytes());
    }
}

/// `HEAD + 2 patches`, for messages.
fn short_what(git_ref: &str, patches: &[AppliedPatch]) -> String {
    let n = patches.iter().filter(|p| p.skipped.is_none()).count();
    match n {
        0 => git_ref.to_string(),
        1 => format!("{git_ref} + 1 patch"),
        n => format!("{git_ref} + {n} patches"),
    }
}
