//! `--include-uncommitted`: the working tree's state at the checked-out HEAD, read as one
//! plain diff on HEAD without writing anything of the user's (no index, no object, no ref).
//!
//! - Tracked changes, staged and not: `git diff HEAD --binary` with a private copy of the
//!   user's index (a porcelain diff may refresh stat data in the index: the copy gets it),
//!   and every option the repository's own configuration could change given on the command
//!   line (prefixes, no renames, three lines of context, no external diff, no textconv, no
//!   colour), so the patch is the same on every machine and `git apply` takes it.
//! - Untracked files that are not ignored (`git ls-files --others --exclude-standard`), each
//!   as a new-file diff (`git diff --no-index /dev/null FILE`: it hashes, it stores nothing),
//!   in git's order. No `git add -N`: that writes the user's index.
//! - The index's copy lives in a staging directory of the build cache (removed at the end, or
//!   swept later when a killed process left it), never in the tree.
//! - Bounded like a `--patch` file ([`super::input::PATCH_LIMIT`]): untracked files are sized
//!   before they are read and git's output is read with the limit, so a stray multi-gigabyte
//!   file is refused in one line, not read.
//!
//! The result is a [`PatchFile`] with its own subject (`uncommitted changes of linux at
//! a8f4cd715df5 (3 files)`): it goes through the same path as the `--patch` files, before
//! them, so its bytes make the commit and so the build's key, and it is named in the build's
//! patches and a run's build line.

use super::input::PATCH_LIMIT;
use super::patches::PatchFile;
use super::tree::{first_complaint, git, output, run, Tree};
use crate::error::Usage;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The most untracked files one patch takes (each is a git process).
pub const UNTRACKED_LIMIT: usize = 1000;

/// The working tree's uncommitted changes as a patch on `head`.
#[derive(Debug, Clone)]
pub struct Uncommitted {
    /// The commit the patch is relative to: the tree's HEAD when it was read.
    pub head: String,
    /// The patch (a plain diff with its own subject).
    pub patch: PatchFile,
    /// How many files it changes.
    pub files: usize,
}

/// The diff options a repository's configuration could otherwise change.
const DIFF_OPTIONS: &[&str] = &[
    "--binary",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--no-renames",
    "--no-relative",
    "--unified=3",
    "--src-prefix=a/",
    "--dst-prefix=b/",
];

/// Reads the uncommitted changes of the tree at `tree` for a build of `refs` (every ref a
/// build asks for; at least one must be the checked-out HEAD: the changes are relative to
/// it), with a private staging directory of the build cache `cache_dir` (swept when a killed
/// process left it). None for a clean tree (the caller says "nothing uncommitted").
pub fn read(
    tree_path: &Path,
    refs: &[&str],
    cache_dir: Option<&Path>,
) -> anyhow::Result<Option<Uncommitted>> {
    let tree = Tree::open(tree_path)?;
    let shown = tree_path.display();
    let top = output(
        git(tree_path).args(["rev-parse", "--show-toplevel"]),
        "git rev-parse",
    )?;
    let top = String::from_utf8_lossy(&top.stdout).trim().to_string();
    if top.is_empty() {
        return Err(Usage(format!(
            "--include-uncommitted: {shown} has no working tree (a bare repository), so \
             nothing in it is uncommitted; leave the flag out"
        ))
        .into());
    }
    let top = PathBuf::from(top);
    let head = run(
        git(&top).args(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]),
        "git rev-parse",
    )
    .map_err(|_| {
        Usage(format!(
            "--include-uncommitted: {shown} has no commit checked out (HEAD names none)"
        ))
    })?
    .trim()
    .to_string();
    let mut at_head = false;
    let mut others: Vec<String> = Vec::new();
    for r in refs {
        let commit = tree.resolve(r)?;
        let said = format!("{} is {}", crate::safe_text::field(r), &commit[..12]);
        if commit == head {
            at_head = true;
        } else if !others.contains(&said) {
            others.push(said);
        }
    }
    if !at_head {
        return Err(Usage(format!(
            "--include-uncommitted builds the working tree's changes, which are relative to \
             the checked-out HEAD ({}) of {shown}, but {}: leave the flag out, or build HEAD",
            &head[..12],
            others.join(" and ")
        ))
        .into());
    }
    let private = super::cache::Cache::open(cache_dir)?.staging("uncommitted")?;
    let state = diff_of(&top, &head, private.path());
    private.close()?;
    let Some((bytes, files)) = state? else {
        return Ok(None);
    };
    let name = top
        .file_name()
        .map(|n| crate::safe_text::field(&n.to_string_lossy()))
        .unwrap_or_else(|| "the tree".to_string());
    let subject = format!(
        "uncommitted changes of {name} at {} ({files} file{})",
        &head[..12],
        if files == 1 { "" } else { "s" }
    );
    let patch = PatchFile::from_bytes(
        &PathBuf::from(format!("{shown} (uncommitted changes)")),
        &format!("uncommitted-{}.diff", &head[..12]),
        bytes,
    )?
    .with_subject(subject);
    Ok(Some(Uncommitted { head, patch, files }))
}

/// Gives `copy` the modification time of `original`.
fn keep_time(original: &Path, copy: &Path) -> anyhow::Result<()> {
    let when = std::fs::metadata(original)
        .and_then(|m| m.modified())
        .map_err(|e| anyhow::anyhow!("cannot read the time of {}: {e}", original.display()))?;
    std::fs::File::options()
        .write(true)
        .open(copy)
        .and_then(|f| f.set_modified(when))
        .map_err(|e| anyhow::anyhow!("cannot date the copy {}: {e}", copy.display()))
}

/// The diff of the working tree at `top` against `head` (tracked changes, then untracked
/// files) and how many files it changes; None when there is none. `private` holds the copy
/// of the index.
fn diff_of(top: &Path, head: &str, private: &Path) -> anyhow::Result<Option<(Vec<u8>, usize)>> {
    let index = private.join("index");
    let theirs = run(
        git(top).args(["rev-parse", "--path-format=absolute", "--git-path", "index"]),
        "git rev-parse",
    )?;
    // No index at all: git reads none either (every file of HEAD is then a staged deletion).
    match std::fs::copy(theirs.trim(), &index) {
        // The copy keeps the index's time: git trusts an entry's stat (times to the second
        // in Debian's build) only when the file is older than the index, so a copy dated now
        // made a same-size edit in the index's second look unchanged (a test missed one such
        // edit in 15 under load).
        Ok(_) => keep_time(Path::new(theirs.trim()), &index)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => anyhow::bail!("cannot copy the index {}: {e}", theirs.trim()),
    }
    let with_index = |c: &mut Command| {
        c.env("GIT_INDEX_FILE", &index)
            .env("GIT_OPTIONAL_LOCKS", "0")
            .args(["-c", "core.splitIndex=false"]);
    };
    let mut c = git(top);
    with_index(&mut c);
    c.arg("diff").args(DIFF_OPTIONS).arg(head).arg("--");
    let mut bytes = bounded(&mut c, PATCH_LIMIT, "git diff", |code| code == 0)?;
    let mut files = count_files(&bytes);

    let mut c = git(top);
    with_index(&mut c);
    c.args(["ls-files", "-z", "--others", "--exclude-standard"]);
    let list = bounded(&mut c, PATCH_LIMIT, "git ls-files", |code| code == 0)?;
    let untracked: Vec<String> = list
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    if untracked.len() > UNTRACKED_LIMIT {
        return Err(Usage(format!(
            "--include-uncommitted: {} has {} untracked files (e.g. {}), more than a change \
             needs (at most {UNTRACKED_LIMIT}): add build outputs to .gitignore, or remove them",
            top.display(),
            untracked.len(),
            crate::safe_text::field(&untracked[0])
        ))
        .into());
    }
    // Sized before any is read.
    let mut total = bytes.len() as u64;
    for p in &untracked {
        let meta = std::fs::symlink_metadata(top.join(p));
        let refuse = |why: String| -> anyhow::Error {
            Usage(format!(
                "--include-uncommitted: the untracked {} in {} {why}",
                crate::safe_text::field(p),
                top.display()
            ))
            .into()
        };
        match meta {
            Ok(m) if m.is_file() || m.file_type().is_symlink() => total += m.len(),
            // `ls-files` names a repository inside the tree as `dir/`.
            Ok(m) if m.is_dir() => {
                return Err(refuse(
                    "is a git repository of its own, which no patch can hold: move it out of \
                     the tree, or leave --include-uncommitted out"
                        .to_string(),
                ))
            }
            Ok(_) => {
                return Err(refuse(
                    "is not a regular file (a FIFO, socket or device), which no patch can \
                     hold: remove it, or leave --include-uncommitted out"
                        .to_string(),
                ))
            }
            Err(e) => return Err(refuse(format!("cannot be read: {e}"))),
        }
        if total > PATCH_LIMIT {
            return Err(too_big(top));
        }
    }
    for p in &untracked {
        let mut c = git(top);
        c.args(["diff", "--no-index"])
            .args(DIFF_OPTIONS)
            .args(["--", "/dev/null", p]);
        // --no-index exits 1 when the files differ, as a new file always does.
        let one = bounded(
            &mut c,
            PATCH_LIMIT - bytes.len() as u64,
            "git diff --no-index",
            |code| code <= 1,
        )
        .map_err(|e| match e.downcast_ref::<Usage>() {
            Some(_) => too_big(top),
            None => e,
        })?;
        bytes.extend_from_slice(&one);
        files += 1;
    }
    if bytes.is_empty() {
        return Ok(None);
    }
    Ok(Some((bytes, files)))
}

fn too_big(top: &Path) -> anyhow::Error {
    Usage(format!(
        "--include-uncommitted: the uncommitted changes of {} are larger than {} MiB, more \
         than any patch needs (untracked build outputs? add them to .gitignore)",
        top.display(),
        PATCH_LIMIT >> 20
    ))
    .into()
}

/// The files a git diff changes: its `diff --git` lines (a line of a hunk starts with a
/// space, `+`, `-` or `\`, and a line of a binary patch with no space).
pub fn count_files(diff: &[u8]) -> usize {
    diff.split(|b| *b == b'\n')
        .filter(|l| l.starts_with(b"diff --git "))
        .count()
}

/// The stdout of `cmd`, read up to `limit` bytes: more is bad input (the child is killed),
/// an exit status `ok` refuses is an error with git's complaint.
fn bounded(
    cmd: &mut Command,
    limit: u64,
    what: &str,
    ok: impl Fn(i32) -> bool,
) -> anyhow::Result<Vec<u8>> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| anyhow::anyhow!("cannot run git ({what}): {e}"))?;
    let mut bytes = Vec::new();
    let read = match child.stdout.take() {
        Some(out) => out.take(limit + 1).read_to_end(&mut bytes),
        None => Ok(0),
    };
    if read.is_err() || bytes.len() as u64 > limit {
        let _ = child.kill();
        let _ = child.wait();
        if let Err(e) = read {
            anyhow::bail!("cannot read what {what} says: {e}");
        }
        return Err(Usage(format!("{what} says more than {} MiB", limit >> 20)).into());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| anyhow::anyhow!("cannot wait for git ({what}): {e}"))?;
    if !out.status.code().is_some_and(ok) {
        anyhow::bail!("{what} failed: {}", first_complaint(&out));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit_all(dir: &Path) -> String {
        crate::build::tree::tests::commit_in(dir, &[])
    }

    fn write(dir: &Path, name: &str, bytes: &[u8]) {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }

    /// What may not change in the user's tree: status, the index's bytes and mtime, refs,
    /// and the object store's files.
    fn state(dir: &Path) -> (String, Vec<u8>, std::time::SystemTime, String, usize) {
        let index = dir.join(".git/index");
        let status = run(
            git(dir)
                .env("GIT_OPTIONAL_LOCKS", "0")
                .args(["status", "--porcelain=v1", "-uall"]),
            "status",
        )
        .unwrap();
        let refs = run(git(dir).args(["for-each-ref"]), "refs").unwrap();
        let objects = walkdir(&dir.join(".git/objects"));
        (
            status,
            std::fs::read(&index).unwrap(),
            std::fs::metadata(&index).unwrap().modified().unwrap(),
            refs,
            objects,
        )
    }

    fn walkdir(d: &Path) -> usize {
        std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .map(|e| {
                if e.path().is_dir() {
                    walkdir(&e.path())
                } else {
                    1
                }
            })
            .sum()
    }

    fn linux_tree(d: &Path) -> (PathBuf, String) {
        let user = d.join("linux");
        std::fs::create_dir(&user).unwrap();
        run(git(&user).args(["init", "-q"]), "init").unwrap();
        write(&user, "Makefile", b"all:\n");
        write(&user, "Kconfig", b"");
        write(&user, "arch/x86/Makefile", b"");
        write(&user, "kernel/sys.c", b"int a;\nint b;\nint c;\n");
        write(&user, "gone.c", b"x\n");
        write(&user, ".gitignore", b"*.o\n");
        let head = commit_all(&user);
        (user, head)
    }

    #[test]
    fn staged_modified_and_untracked_files_make_one_patch_that_applies_on_head() {
        let d = tempfile::tempdir().unwrap();
        let (user, head) = linux_tree(d.path());
        assert!(
            read(&user, &["HEAD"], Some(&d.path().join("cache")))
                .unwrap()
                .is_none(),
            "a clean tree"
        );
        // Staged (a new file and an edit), modified, deleted, untracked (text, binary,
        // empty), ignored.
        write(&user, "staged.c", b"s\n");
        write(&user, "Makefile", b"all: x\n");
        run(git(&user).args(["add", "staged.c", "Makefile"]), "add").unwrap();
        write(&user, "kernel/sys.c", b"int a;\nint B;\nint c;\n");
        std::fs::remove_file(user.join("gone.c")).unwrap();
        write(&user, "new/file.c", b"new\n");
        write(&user, "blob.bin", &[0, 1, 2, 255, 0]);
        write(&user, "empty.c", b"");
        write(&user, "built.o", b"ignored\n");
        let before = state(&user);
        std::thread::sleep(std::time::Duration::from_millis(20));
        // A GIT_DIR of the caller's (another repository) is not followed.
        let elsewhere = tempfile::tempdir().unwrap();
        run(git(elsewhere.path()).args(["init", "-q"]), "init").unwrap();
        std::env::set_var("GIT_DIR", elsewhere.path().join(".git"));
        std::env::set_var("GIT_INDEX_FILE", elsewhere.path().join("nothing"));
        let got = read(&user, &["HEAD", "HEAD"], Some(&d.path().join("cache")));
        std::env::remove_var("GIT_DIR");
        std::env::remove_var("GIT_INDEX_FILE");
        let u = got.unwrap().unwrap();
        assert_eq!(state(&user), before, "nothing of the user's changed");
        assert_eq!(u.head, head);
        assert_eq!(u.files, 7, "{}", String::from_utf8_lossy(&u.patch.bytes));
        assert_eq!(
            u.patch.subject.as_deref(),
            Some(format!("uncommitted changes of linux at {} (7 files)", &head[..12]).as_str())
        );
        assert_eq!(u.patch.name, format!("uncommitted-{}.diff", &head[..12]));
        let text = String::from_utf8_lossy(&u.patch.bytes);
        for want in [
            "diff --git a/Makefile b/Makefile",
            "+int B;",
            "deleted file mode",
            "diff --git a/staged.c b/staged.c",
            "diff --git a/new/file.c b/new/file.c",
            "GIT binary patch",
            "diff --git a/empty.c b/empty.c",
        ] {
            assert!(text.contains(want), "{want} not in {text}");
        }
        assert!(!text.contains("built.o"), "ignored files are not taken");
        // It applies on HEAD in a clone (never in the user's tree).
        let clone = d.path().join("clone");
        run(
            git(d.path()).args(["clone", "-q"]).arg(&user).arg(&clone),
            "clone",
        )
        .unwrap();
        let file = d.path().join("u.diff");
        std::fs::write(&file, &u.patch.bytes).unwrap();
        run(git(&clone).args(["apply", "--check"]).arg(&file), "check").unwrap();
        run(git(&clone).arg("apply").arg(&file), "apply").unwrap();
        assert_eq!(
            std::fs::read(clone.join("blob.bin")).unwrap(),
            [0, 1, 2, 255, 0]
        );
        assert!(clone.join("empty.c").is_file());
        assert!(!clone.join("gone.c").exists());
        // The same state reads as the same bytes (the same build key).
        let again = read(&user, &["HEAD"], Some(&d.path().join("cache")))
            .unwrap()
            .unwrap();
        assert_eq!(again.patch.sha256, u.patch.sha256);
        assert_eq!(state(&user), before);
        // Applied as the first patch in the cache's repository: a commit with its subject,
        // and the same commit from the recorded name, subject and bytes (a lab box's replay).
        let tree = Tree::open(&user).unwrap();
        let repo =
            super::super::tree::Repo::open_or_init(&d.path().join("repo.git"), &tree).unwrap();
        let tmp = d.path().join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        let a = super::super::patches::apply(
            &repo,
            &head,
            "HEAD",
            std::slice::from_ref(&u.patch),
            &tmp,
        )
        .unwrap();
        assert_eq!(a.patches[0].subject, u.patch.subject.clone().unwrap());
        assert_eq!(a.patches[0].file, u.patch.name);
        let shown = run(
            repo.git()
                .args(["show", &format!("{}:kernel/sys.c", a.commit)]),
            "show",
        )
        .unwrap();
        assert!(shown.contains("int B;"), "{shown}");
        let mut replayed =
            PatchFile::from_bytes(Path::new("elsewhere"), &u.patch.name, u.patch.bytes.clone())
                .unwrap();
        replayed.subject = u.patch.subject.clone();
        let b = super::super::patches::apply(&repo, &head, "HEAD", &[replayed], &tmp).unwrap();
        assert_eq!(b.commit, a.commit, "the same key on another box");
        assert_eq!(state(&user), before);
    }

    #[test]
    fn another_commit_a_bare_tree_and_too_much_are_refused_in_one_line() {
        let d = tempfile::tempdir().unwrap();
        let (user, first) = linux_tree(d.path());
        write(&user, "kernel/sys.c", b"int a;\n");
        let _second = commit_all(&user);
        write(&user, "kernel/sys.c", b"int z;\n");
        let e = read(&user, &[&first], Some(&d.path().join("cache"))).unwrap_err();
        assert!(e.downcast_ref::<Usage>().is_some(), "{e}");
        assert!(
            e.to_string().contains("relative to the checked-out HEAD"),
            "{e}"
        );
        // One side at HEAD is enough (a campaign's other side is built as committed).
        let u = read(&user, &[&first, "HEAD"], Some(&d.path().join("cache")))
            .unwrap()
            .unwrap();
        // A build of another commit with them is refused before anything is checked or made.
        let req = super::super::BuildRequest {
            tree: user.clone(),
            git_ref: first.clone(),
            patches: Vec::new(),
            config: super::super::config::ConfigChoice::Tiny,
            fragments: Vec::new(),
            jobs: None,
            cache_dir: Some(d.path().join("cache2")),
            uncommitted: Some(u),
        };
        let signals = crate::proc::signals::Signals::install().unwrap();
        let e = super::super::check_request(&req, &crate::progress::Progress::new(), &signals)
            .unwrap_err();
        assert!(e.downcast_ref::<Usage>().is_some(), "{e}");
        assert!(e.to_string().contains("are relative to"), "{e}");
        assert!(!d.path().join("cache2").exists(), "nothing made");
        let bare = d.path().join("bare.git");
        run(
            git(d.path())
                .args(["clone", "-q", "--bare"])
                .arg(&user)
                .arg(&bare),
            "clone",
        )
        .unwrap();
        let e = read(&bare, &["HEAD"], Some(&d.path().join("cache"))).unwrap_err();
        assert!(e.to_string().contains("no working tree"), "{e}");
        // Untracked files are sized before they are read.
        let big = std::fs::File::create(user.join("huge.img")).unwrap();
        big.set_len(PATCH_LIMIT + 1).unwrap();
        let e = read(&user, &["HEAD"], Some(&d.path().join("cache"))).unwrap_err();
        assert!(e.downcast_ref::<Usage>().is_some(), "{e}");
        assert!(e.to_string().contains("larger than 64 MiB"), "{e}");
    }
}
