//! What a bisection reads of the user's git tree, with `git` itself and read-only: a ref's
//! commit, whether good is an ancestor of bad, the candidates (bad's first-parent commits that
//! good lacks, oldest first), each commit's subject, author, date and link (its first `Link:`
//! trailer), and a commit's reverse diff (the revert a confirmation builds on top of the bad
//! endpoint). Nothing here writes to the tree, its index, its refs or its `.git`.

use crate::error::{usage, Usage};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::{Command, Stdio};

/// A commit as the report names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Commit {
    /// The full hash.
    pub sha: String,
    pub subject: String,
    /// `Name <email>`.
    pub author: String,
    /// The author date, ISO 8601.
    pub date: String,
    /// The commit message's first `Link:` trailer, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
}

impl Commit {
    /// The first 12 characters of the hash.
    pub fn short(&self) -> &str {
        &self.sha[..self.sha.len().min(12)]
    }
}

/// git in `tree` with the build's fixed environment (`crate::build::tree::git`: no `GIT_DIR`
/// or `GIT_WORK_TREE` from a hook or `git rebase --exec`, no user or system config), and
/// read-only: no optional locks (`git status` would refresh the index), no pager.
fn git(tree: &Path) -> Command {
    let mut c = crate::build::tree::git(tree);
    c.env("GIT_OPTIONAL_LOCKS", "0").env("GIT_PAGER", "cat");
    c
}

/// Runs git and returns its stdout, or its first stderr line as the error.
fn output(mut c: Command) -> Result<String, String> {
    let out = c
        .output()
        .map_err(|e| format!("cannot run git: {e} (install git)"))?;
    if out.status.success() {
        return String::from_utf8(out.stdout).map_err(|_| "git printed something not UTF-8".into());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    Err(err
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("git failed")
        .trim()
        .to_string())
}

/// Checks that `tree` is a git tree.
pub fn check_tree(tree: &Path) -> anyhow::Result<()> {
    if !tree.is_dir() {
        return usage(format!(
            "--tree {}: no such directory; give a git checkout of Linux",
            tree.display()
        ));
    }
    let mut c = git(tree);
    c.args(["rev-parse", "--git-dir"]);
    output(c).map(|_| ()).map_err(|e| {
        Usage(format!(
            "--tree {} is not a git tree ({}); give a git checkout of Linux",
            tree.display(),
            crate::safe_text::field(&e)
        ))
        .into()
    })
}

/// The commit `r` names in `tree` (`--good`/`--bad` in the message).
pub fn resolve(tree: &Path, r: &str, what: &str) -> anyhow::Result<String> {
    let bad = || {
        Usage(format!(
            "{what} {:?}: no such commit in {} (give a branch, tag or commit hash)",
            crate::safe_text::field(r),
            tree.display()
        ))
    };
    if r.is_empty() || r.starts_with('-') {
        return Err(bad().into());
    }
    let mut c = git(tree);
    c.args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
        .arg(format!("{r}^{{commit}}"));
    let sha = output(c).map_err(|_| bad())?;
    let sha = sha.trim().to_string();
    if sha.len() < 40 {
        return Err(bad().into());
    }
    Ok(sha)
}

/// Whether `a` is an ancestor of `b` (or the same commit).
pub fn is_ancestor(tree: &Path, a: &str, b: &str) -> anyhow::Result<bool> {
    let status = git(tree)
        .args(["merge-base", "--is-ancestor", a, b])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| anyhow::anyhow!("cannot run git: {e}"))?;
    match status.code() {
        Some(0) => Ok(true),
        Some(1) => Ok(false),
        _ => Err(anyhow::anyhow!(
            "git merge-base --is-ancestor {a} {b} failed in {}",
            tree.display()
        )),
    }
}

/// The candidates between `good` and `bad`: bad's first-parent commits that good does not
/// have, oldest first (bad last). A merge on that line is one candidate.
pub fn first_parent_range(tree: &Path, good: &str, bad: &str) -> anyhow::Result<Vec<String>> {
    let mut c = git(tree);
    c.args(["rev-list", "--first-parent", "--reverse"])
        .arg(format!("{good}..{bad}"));
    let text = output(c).map_err(|e| anyhow::anyhow!("git rev-list {good}..{bad}: {e}"))?;
    Ok(text.lines().map(|l| l.trim().to_string()).collect())
}

/// The first `Link:` trailer of a commit message.
fn link_of(message: &str) -> Option<String> {
    message.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        (key.trim().eq_ignore_ascii_case("link") && !value.trim().is_empty())
            .then(|| value.trim().to_string())
    })
}

/// Subject, author, date and link of each of `shas`, in one git call.
pub fn commits(tree: &Path, shas: &[String]) -> anyhow::Result<Vec<Commit>> {
    if shas.is_empty() {
        return Ok(Vec::new());
    }
    let mut c = git(tree);
    c.args([
        "show",
        "--no-patch",
        "--no-walk=unsorted",
        "--format=%H%x1f%s%x1f%an <%ae>%x1f%aI%x1f%B%x1e",
    ])
    .args(shas);
    let text = output(c).map_err(|e| anyhow::anyhow!("git show: {e}"))?;
    let mut out = Vec::new();
    for record in text.split('\x1e') {
        let record = record.trim_start_matches('\n');
        if record.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = record.splitn(5, '\x1f').collect();
        if f.len() < 5 {
            return Err(anyhow::anyhow!("git show printed an unexpected record"));
        }
        out.push(Commit {
            sha: f[0].to_string(),
            subject: f[1].to_string(),
            author: f[2].to_string(),
            date: f[3].to_string(),
            link: link_of(f[4]),
        });
    }
    if out.len() != shas.len() {
        return Err(anyhow::anyhow!(
            "git show named {} commits of {}",
            out.len(),
            shas.len()
        ));
    }
    Ok(out)
}

/// The reverse of `sha`'s change against its first parent, as a plain diff (what `git revert`
/// would apply), written to `file`.
pub fn reverse_diff(tree: &Path, sha: &str, file: &Path) -> anyhow::Result<()> {
    let mut c = git(tree);
    c.args(["diff", "--binary", "--no-color", "--no-ext-diff"])
        .arg(sha)
        .arg(format!("{sha}^"));
    let text = output(c).map_err(|e| anyhow::anyhow!("git diff {sha} {sha}^: {e}"))?;
    std::fs::write(file, text).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", file.display()))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A tree of `n` commits on a line, each changing file `f`; the last has a Link: trailer.
    pub(crate) fn line_of_commits(dir: &Path, n: usize) -> Vec<String> {
        let run = |args: &[&str]| {
            let out = crate::build::tree::git(dir)
                .args(args)
                .env("GIT_AUTHOR_NAME", "A U Thor")
                .env("GIT_AUTHOR_EMAIL", "a@example.org")
                .env("GIT_COMMITTER_NAME", "C")
                .env("GIT_COMMITTER_EMAIL", "c@example.org")
                .output()
                .unwrap();
            assert!(out.status.success(), "{args:?}: {out:?}");
            String::from_utf8(out.stdout).unwrap()
        };
        run(&["init", "-q", "-b", "main"]);
        let mut shas = Vec::new();
        for i in 0..n {
            std::fs::write(dir.join("f"), format!("{i}\n")).unwrap();
            run(&["add", "f"]);
            let msg = if i + 1 == n {
                format!("change {i}\n\nLink: https://lore.example/{i}\n")
            } else {
                format!("change {i}")
            };
            run(&["commit", "-q", "-m", &msg]);
            shas.push(run(&["rev-parse", "HEAD"]).trim().to_string());
        }
        shas
    }

    #[test]
    fn refs_ranges_commits_and_reverse_diffs_are_read_from_the_tree() {
        let d = tempfile::tempdir().unwrap();
        let shas = line_of_commits(d.path(), 5);
        check_tree(d.path()).unwrap();
        assert_eq!(resolve(d.path(), "main", "--bad").unwrap(), shas[4]);
        assert_eq!(resolve(d.path(), "main~4", "--good").unwrap(), shas[0]);
        let e = resolve(d.path(), "nope", "--good").unwrap_err().to_string();
        assert!(e.starts_with("--good \"nope\": no such commit"), "{e}");
        assert!(resolve(d.path(), "--all", "--good").is_err());
        assert!(is_ancestor(d.path(), &shas[0], &shas[4]).unwrap());
        assert!(!is_ancestor(d.path(), &shas[4], &shas[0]).unwrap());
        let range = first_parent_range(d.path(), &shas[0], &shas[4]).unwrap();
        assert_eq!(range, shas[1..].to_vec());
        let cs = commits(d.path(), &range).unwrap();
        assert_eq!(cs[0].subject, "change 1");
        assert_eq!(cs[0].author, "A U Thor <a@example.org>");
        assert_eq!(cs[3].link.as_deref(), Some("https://lore.example/4"));
        assert_eq!(cs[0].link, None);
        let file = d.path().join("rev.diff");
        reverse_diff(d.path(), &shas[4], &file).unwrap();
        let diff = std::fs::read_to_string(&file).unwrap();
        assert!(diff.contains("-4\n+3\n"), "{diff}");
        let nd = tempfile::tempdir().unwrap();
        let e = check_tree(nd.path()).unwrap_err().to_string();
        assert!(e.contains("is not a git tree"), "{e}");
    }
}
