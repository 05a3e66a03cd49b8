//! The user's git tree, read and never written, and patchbench's own git places beside the
//! build cache.
//!
//! - [`Tree::open`] checks that `--tree` is a git tree (work tree or bare) and finds its object
//!   store; [`Tree::resolve`] turns a ref into a commit (`rev-parse --verify REF^{commit}`) and
//!   checks that the commit is a Linux source tree. Nothing else ever runs in the user's tree:
//!   no checkout, no index refresh, no ref, no object.
//! - [`Repo`]: a bare repository of the cache's own (`repos/<tree key>.git`) whose
//!   `objects/info/alternates` names the user's object store, so every commit of the user's tree
//!   is readable there at once (no fetch, no copy) while every object patchbench makes (the
//!   commits of applied patches) is written there, never into the user's `.git`. The commits
//!   of finished builds are kept by refs (`refs/patchbench/<build id>`), and `gc.auto=0` keeps
//!   git from pruning anything in either place.
//! - [`Repo::checkout`]: a build slot's source is a worktree of that repository, moved from
//!   commit to commit with `git checkout --detach -f`: git rewrites only the files that differ,
//!   so only they get new mtimes and make rebuilds only what depends on them.
//!
//! Every git command runs with a fixed environment: no system or global configuration (no
//! hooks, no templates, no `am`/`apply` settings of the user's), the committer of every
//! commit patchbench makes fixed (`patchbench <patchbench@localhost>`), `LC_ALL=C` so messages
//! can be read.

use super::disk_full::{free_bytes, nearly_full, says_disk_full};
use crate::error::Usage;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The committer of every commit patchbench makes (with the author's date as the committer's
/// date), so the same patches on the same commit give the same commit id on every machine.
pub const COMMITTER_NAME: &str = "patchbench";
pub const COMMITTER_EMAIL: &str = "patchbench@localhost";

/// A git command in `dir` with patchbench's fixed environment.
pub fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.arg("-C").arg(dir);
    for setting in [
        "safe.directory=*",
        "core.hooksPath=/dev/null",
        "gc.auto=0",
        "maintenance.auto=false",
        "core.autocrlf=false",
        "core.fsmonitor=false",
        "advice.detachedHead=false",
        "commit.gpgSign=false",
    ] {
        c.args(["-c", setting]);
    }
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_COMMON_DIR",
        "GIT_NAMESPACE",
        "GIT_CEILING_DIRECTORIES",
    ] {
        c.env_remove(var);
    }
    c.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_COMMITTER_NAME", COMMITTER_NAME)
        .env("GIT_COMMITTER_EMAIL", COMMITTER_EMAIL)
        .env("LC_ALL", "C")
        .stdin(std::process::Stdio::null());
    c
}

/// Runs a git command; its stdout, or an error with git's first line of complaint.
pub fn run(cmd: &mut Command, what: &str) -> anyhow::Result<String> {
    let out = output(cmd, what)?;
    if !out.status.success() {
        anyhow::bail!("{what} failed: {}", first_complaint(&out));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs a git command and returns its whole output (a missing git is one line to act on).
pub fn output(cmd: &mut Command, what: &str) -> anyhow::Result<Output> {
    cmd.output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Usage("git is not installed: install it (apt-get install git)".to_string()).into()
        } else {
            anyhow::anyhow!("cannot run git ({what}): {e}")
        }
    })
}

/// The line of git's stderr that says what went wrong (`fatal: ...`, `error: ...`), or its
/// first line.
pub fn first_complaint(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .or_else(|| err.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("no message");
    line.trim().to_string()
}

/// The user's tree, as given with `--tree`.
#[derive(Debug, Clone)]
pub struct Tree {
    /// As given (shown in messages).
    pub path: PathBuf,
    /// Its object store, absolute.
    pub objects: PathBuf,
}

impl Tree {
    /// Checks that `path` is a git tree; the error says what to give instead.
    pub fn open(path: &Path) -> anyhow::Result<Tree> {
        let shown = path.display();
        if !path.is_dir() {
            return Err(Usage(format!(
                "--tree {shown} is not a directory: give the directory of a Linux git checkout"
            ))
            .into());
        }
        let out = output(
            git(path).args(["rev-parse", "--git-path", "objects"]),
            "git rev-parse",
        )?;
        if !out.status.success() {
            return Err(Usage(format!(
                "--tree {shown} is not a git tree ({}): give the directory of a Linux git \
                 checkout (git clone, or `git init && git add -f -A . && git commit` in an \
                 unpacked source tree)",
                first_complaint(&out)
            ))
            .into());
        }
        let rel = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let objects = if Path::new(&rel).is_absolute() {
            PathBuf::from(&rel)
        } else {
            path.join(&rel)
        };
        let objects = objects
            .canonicalize()
            .map_err(|e| anyhow::anyhow!("cannot find the objects of {shown} ({rel}): {e}"))?;
        Ok(Tree {
            path: path.to_path_buf(),
            objects,
        })
    }

    /// A short name for this tree in the cache: from its object store's path.
    pub fn key(&self) -> String {
        short_hash(self.objects.as_os_str().as_encoded_bytes())
    }

    /// What a build of `commit` leaves out when `commit` is the tree's checked-out HEAD and
    /// the working tree has uncommitted changes (a build is always of a commit, as committed):
    /// `1 staged, 2 modified, 1 untracked: kernel/sys.c, ...`, naming up to three paths. None
    /// for a clean tree, another commit, or a tree whose state git cannot say. Read-only: no
    /// optional locks, so `git status` does not refresh the user's index.
    pub fn left_out(&self, commit: &str) -> Option<String> {
        let head = run(
            git(&self.path).args(["rev-parse", "--verify", "--quiet", "HEAD"]),
            "git rev-parse",
        )
        .ok()?;
        if head.trim() != commit {
            return None;
        }
        let status = run(
            git(&self.path).env("GIT_OPTIONAL_LOCKS", "0").args([
                "status",
                "--porcelain=v1",
                "-z",
                "--untracked-files=normal",
            ]),
            "git status",
        )
        .ok()?;
        let (mut staged, mut modified, mut untracked) = (0, 0, 0);
        let mut paths = Vec::new();
        let mut entries = status.split('\0').filter(|e| e.len() > 3);
        while let Some(e) = entries.next() {
            let (x, y, path) = (e.as_bytes()[0], e.as_bytes()[1], &e[3..]);
            if x == b'?' {
                untracked += 1;
            } else {
                staged += usize::from(x != b' ');
                modified += usize::from(y != b' ');
            }
            // A rename or copy names its source in the next entry.
            if matches!(x, b'R' | b'C') {
                entries.next();
            }
            paths.push(crate::safe_text::field(path));
        }
        if paths.is_empty() {
            return None;
        }
        let counts: Vec<String> = [
            (staged, "staged"),
            (modified, "modified"),
            (untracked, "untracked"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, w)| format!("{n} {w}"))
        .collect();
        let more = if paths.len() > 3 {
            format!(" and {} more", paths.len() - 3)
        } else {
            String::new()
        };
        paths.truncate(3);
        Some(format!("{}: {}{more}", counts.join(", "), paths.join(", ")))
    }

    /// The commit `git_ref` names in this tree; an unknown ref, or a commit that is not a
    /// Linux source tree, is bad input.
    pub fn resolve(&self, git_ref: &str) -> anyhow::Result<String> {
        if git_ref.is_empty() || git_ref.starts_with('-') {
            return Err(Usage(format!(
                "{:?} is not a git ref: give a branch, tag or commit (e.g. HEAD, v6.1)",
                crate::safe_text::field(git_ref)
            ))
            .into());
        }
        let out = output(
            git(&self.path).args([
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                &format!("{git_ref}^{{commit}}"),
            ]),
            "git rev-parse",
        )?;
        let commit = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() || commit.len() < 40 {
            return Err(Usage(format!(
                "{} names no commit in {} (`git -C {} log --oneline -3` shows some)",
                crate::safe_text::field(git_ref),
                self.path.display(),
                self.path.display()
            ))
            .into());
        }
        for needed in ["Makefile", "Kconfig", "arch/x86/Makefile"] {
            let there = output(
                git(&self.path).args(["cat-file", "-e", &format!("{commit}:{needed}")]),
                "git cat-file",
            )?;
            if !there.status.success() {
                return Err(Usage(format!(
                    "{} ({}) of {} is not a Linux source tree: it has no {needed}",
                    crate::safe_text::field(git_ref),
                    &commit[..12],
                    self.path.display()
                ))
                .into());
            }
        }
        Ok(commit)
    }
}

/// The first 16 hex digits of the SHA-256 of `bytes`.
pub fn short_hash(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))[..16].to_string()
}

/// Bytes as lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The cache's own bare repository for one user tree.
#[derive(Debug, Clone)]
pub struct Repo {
    pub path: PathBuf,
}

impl Repo {
    /// `dir` (made if missing), borrowing the objects of `tree`. The caller holds the
    /// repository's lock.
    pub fn open_or_init(dir: &Path, tree: &Tree) -> anyhow::Result<Repo> {
        if !dir.join("HEAD").is_file() {
            let tmp = dir.with_extension("tmp");
            let _ = std::fs::remove_dir_all(&tmp);
            std::fs::create_dir_all(&tmp)
                .map_err(|e| anyhow::anyhow!("cannot make {}: {e}", tmp.display()))?;
            run(
                git(&tmp).args(["init", "--bare", "--quiet", "."]),
                "git init",
            )?;
            std::fs::rename(&tmp, dir).map_err(|e| {
                anyhow::anyhow!("cannot rename {} to {}: {e}", tmp.display(), dir.display())
            })?;
        }
        // Written every time: the user's tree may have moved its objects (it is found by
        // path, so a moved tree is another tree).
        let alternates = dir.join("objects/info/alternates");
        let want = format!("{}\n", tree.objects.display());
        if std::fs::read_to_string(&alternates).ok().as_deref() != Some(want.as_str()) {
            super::cache::write_atomic(&alternates, want.as_bytes())
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", alternates.display()))?;
        }
        Ok(Repo {
            path: dir.to_path_buf(),
        })
    }

    /// `git` in this repository.
    pub fn git(&self) -> Command {
        git(&self.path)
    }

    /// Keeps `commit` from ever being pruned: `refs/patchbench/<name>`.
    pub fn keep(&self, name: &str, commit: &str) -> anyhow::Result<()> {
        run(
            self.git()
                .args(["update-ref", &format!("refs/patchbench/{name}"), commit]),
            "git update-ref",
        )?;
        Ok(())
    }

    /// The committer date of `commit`, as git prints it in mails (RFC 2822).
    pub fn commit_date(&self, commit: &str) -> anyhow::Result<String> {
        Ok(run(
            self.git().args(["show", "-s", "--format=%cD", commit]),
            "git show",
        )?
        .trim()
        .to_string())
    }

    /// The bytes of the files of `commit`.
    fn checkout_bytes(&self, commit: &str) -> anyhow::Result<u64> {
        let list = run(
            self.git()
                .args(["ls-tree", "-r", "-l", "--full-tree", commit]),
            "git ls-tree",
        )?;
        Ok(list
            .lines()
            .filter_map(|l| l.split_whitespace().nth(3)?.parse::<u64>().ok())
            // Each file takes whole 4 KiB blocks.
            .map(|n| n.div_ceil(4096) * 4096)
            .sum())
    }

    /// Makes `src` a worktree of this repository at `commit`, or moves it there: only files
    /// that differ are rewritten. A lock file left by a killed git is removed first (the
    /// caller holds the slot's lock, so no git runs there).
    /// Whether `commit` has `path` (a file, link or directory) in its tree.
    pub fn has_path(&self, commit: &str, path: &str) -> anyhow::Result<bool> {
        Ok(output(
            self.git()
                .args(["cat-file", "-e", &format!("{commit}:{path}")]),
            "git cat-file",
        )?
        .status
        .success())
    }

    pub fn checkout(&self, src: &Path, commit: &str) -> anyhow::Result<()> {
        if !src.join(".git").exists() {
            // git says no ENOSPC when a checkout fills the disk ("unable to write file"), and
            // removes what it wrote: the room is looked at first.
            let needed = self.checkout_bytes(commit)? + (256 << 20);
            if let Some(free) = free_bytes(src) {
                if free < needed {
                    return Err(Usage(format!(
                        "the disk holding the build cache is full: the kernel source needs about \
                         {} MiB in {}, {} MiB are free; free space there or give --cache DIR on \
                         another disk",
                        needed >> 20,
                        src.display(),
                        free >> 20
                    ))
                    .into());
                }
            }
            let _ = std::fs::remove_dir_all(src);
            let _ = run(self.git().args(["worktree", "prune"]), "git worktree prune");
            let out = output(
                self.git()
                    .args(["worktree", "add", "--detach", "--force", "--quiet"])
                    .arg(src)
                    .arg(commit),
                "git worktree add",
            )?;
            if !out.status.success() {
                // Said before the half checkout is removed (which frees the disk again).
                let e = checkout_error(src, &out);
                let _ = std::fs::remove_dir_all(src);
                let _ = run(self.git().args(["worktree", "prune"]), "git worktree prune");
                return Err(e);
            }
            return Ok(());
        }
        if let Ok(gitdir) = run(
            git(src).args(["rev-parse", "--absolute-git-dir"]),
            "git rev-parse",
        ) {
            let _ = std::fs::remove_file(Path::new(gitdir.trim()).join("index.lock"));
        }
        let out = output(
            git(src).args(["checkout", "--detach", "--force", "--quiet", commit]),
            "git checkout",
        )?;
        if !out.status.success() {
            return Err(checkout_error(src, &out));
        }
        Ok(())
    }
}

fn checkout_error(src: &Path, out: &Output) -> anyhow::Error {
    let why = first_complaint(out);
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("unable to write file") {
        return Usage(format!(
            "cannot write the kernel source in {} ({}): the disk holding the build cache is \
             probably full ({} MiB free now); free space there or give --cache DIR on another \
             disk",
            src.display(),
            err.lines()
                .find(|l| l.contains("unable to write"))
                .unwrap_or("")
                .trim(),
            free_bytes(src).unwrap_or(0) >> 20
        ))
        .into();
    }
    if says_disk_full(&err) || nearly_full(src) {
        Usage(format!(
            "the disk holding the build cache is full: cannot check out the kernel source in {} \
             ({why}); free space there or give --cache DIR on another disk",
            src.display()
        ))
        .into()
    } else {
        anyhow::anyhow!(
            "cannot check out the kernel source in {}: {why}",
            src.display()
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Writes `files` in the git tree `dir`, commits everything there and returns the commit.
    pub(crate) fn commit_in(dir: &Path, files: &[(&str, &str)]) -> String {
        for (name, text) in files {
            let p = dir.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        run(git(dir).args(["add", "-A", "."]), "add").unwrap();
        run(
            git(dir)
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@t")
                .args(["commit", "-q", "-m", "c"]),
            "commit",
        )
        .unwrap();
        run(git(dir).args(["rev-parse", "HEAD"]), "rev-parse")
            .unwrap()
            .trim()
            .to_string()
    }

    #[test]
    fn uncommitted_changes_at_head_are_named_without_touching_the_index() {
        let d = tempfile::tempdir().unwrap();
        let user = d.path().join("linux");
        std::fs::create_dir(&user).unwrap();
        run(git(&user).args(["init", "-q"]), "init").unwrap();
        let first = commit_in(&user, &[("Makefile", "all:\n"), ("a.c", "1\n")]);
        let head = commit_in(&user, &[("b.c", "2\n")]);
        let tree = Tree::open(&user).unwrap();
        assert_eq!(tree.left_out(&head), None, "a clean tree");
        std::fs::write(user.join("Makefile"), "all: x\n").unwrap();
        std::fs::write(user.join("staged.c"), "3\n").unwrap();
        run(git(&user).args(["add", "staged.c"]), "add").unwrap();
        std::fs::write(user.join("new.c"), "4\n").unwrap();
        let index = user.join(".git/index");
        let before = std::fs::metadata(&index).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let said = tree.left_out(&head).unwrap();
        assert_eq!(
            said,
            "1 staged, 1 modified, 1 untracked: Makefile, staged.c, new.c"
        );
        assert_eq!(
            std::fs::metadata(&index).unwrap().modified().unwrap(),
            before,
            "the user's index is not rewritten"
        );
        assert_eq!(
            tree.left_out(&first),
            None,
            "not HEAD: nothing of the tree is left out"
        );
    }

    #[test]
    fn a_tree_is_read_not_written_and_its_commits_are_seen_through_alternates() {
        let d = tempfile::tempdir().unwrap();
        let user = d.path().join("linux");
        std::fs::create_dir(&user).unwrap();
        let e = Tree::open(&user).unwrap_err();
        assert!(e.to_string().contains("not a git tree"), "{e}");
        assert!(e.downcast_ref::<Usage>().is_some());
        run(git(&user).args(["init", "-q"]), "init").unwrap();
        let head = commit_in(
            &user,
            &[
                ("Makefile", "all:\n"),
                ("Kconfig", ""),
                ("arch/x86/Makefile", ""),
            ],
        );
        let tree = Tree::open(&user).unwrap();
        assert_eq!(tree.resolve("HEAD").unwrap(), head);
        let e = tree.resolve("no-such-branch").unwrap_err();
        assert!(e.to_string().contains("names no commit"), "{e}");
        assert!(tree.resolve("--all").is_err());
        let before = walk(&user.join(".git"));
        let repo = Repo::open_or_init(&d.path().join("cache/repo.git"), &tree).unwrap();
        let src = d.path().join("cache/slot/src");
        repo.checkout(&src, &head).unwrap();
        assert_eq!(
            std::fs::read_to_string(src.join("Makefile")).unwrap(),
            "all:\n"
        );
        repo.keep("b1", &head).unwrap();
        repo.checkout(&src, &head).unwrap();
        assert_eq!(
            walk(&user.join(".git")),
            before,
            "nothing written in the user's .git"
        );
        // Not Linux: refused by name.
        let other = d.path().join("other");
        std::fs::create_dir(&other).unwrap();
        run(git(&other).args(["init", "-q"]), "init").unwrap();
        commit_in(&other, &[("README", "x")]);
        let e = Tree::open(&other).unwrap().resolve("HEAD").unwrap_err();
        assert!(e.to_string().contains("not a Linux source tree"), "{e}");
    }

    fn walk(d: &Path) -> Vec<(PathBuf, u64)> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push((p.clone(), std::fs::metadata(&p).unwrap().len()));
            }
        }
        out.sort();
        out
    }
}
