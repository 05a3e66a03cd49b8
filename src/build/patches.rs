//! The side's patches: read, recognised, and applied onto a commit without any work tree.
//!
//! A patch file is either mail (an mbox of one patch, a series, or a series with its cover
//! letter, as `git format-patch` and mailing-list archives give them) or a plain diff (as `git
//! diff` or `diff -u` give them). Mail is split and read with git's own plumbing, exactly as
//! `git am` does it (`git mailsplit`, then `git mailinfo` per message: author, date, subject
//! without its `[PATCH n/m]`, message, diff); a message without a diff (the `[PATCH 0/N]`
//! cover letter) is recognised and skipped, as `git am --empty=drop` does. A plain diff is one
//! patch without an author.
//!
//! Applying happens in the cache's own repository with a private index (`git read-tree`,
//! `git apply --cached`, `git write-tree`, `git commit-tree`): no checkout is needed to learn
//! the resulting commit, so a build already in the cache is found without touching any source
//! tree. Each commit has the patch's author and date, patchbench as committer and the
//! author's date as the committer's (a plain diff: patchbench as author, the base commit's
//! date), so the same patches on the same commit give the same commit id on every machine. A
//! patch that does not apply is named with its file, its place in the series, its subject and
//! the first file that failed; nothing is left behind (the index was private).

use super::tree::{first_complaint, output, run, Repo};
use crate::error::Usage;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// A patch file as given.
#[derive(Debug, Clone)]
pub struct PatchFile {
    /// As given (shown in messages).
    pub path: PathBuf,
    /// Its file name (recorded; a lab box gets the file under this name).
    pub name: String,
    pub bytes: Vec<u8>,
    pub sha256: String,
    /// The subject a plain diff is committed with, when it is not `plain diff NAME` (the
    /// working tree's uncommitted changes: `super::uncommitted`); such a patch is always read
    /// as a plain diff.
    pub subject: Option<String>,
}

/// What was applied (or skipped) from a patch file, in order.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AppliedPatch {
    /// The patch file's name.
    pub file: String,
    /// SHA-256 of the whole file, hex.
    pub sha256: String,
    /// The subject, without `[PATCH n/m]` (a plain diff: `plain diff FILE`).
    pub subject: String,
    /// `Name <email>`; empty for a plain diff.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub author: String,
    /// The commit it made; None when it was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Why it was skipped (`cover letter`): it carries no diff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

impl PatchFile {
    /// Reads a patch file; an unreadable or empty one is bad input.
    pub fn read(path: &Path) -> anyhow::Result<PatchFile> {
        let bytes = super::input::read_bounded("patch", path, super::input::PATCH_LIMIT)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "patch".to_string());
        PatchFile::from_bytes(path, &name, bytes)
    }

    /// A patch file from its bytes (a lab box rebuilding a side from the campaign's record).
    pub fn from_bytes(path: &Path, name: &str, bytes: Vec<u8>) -> anyhow::Result<PatchFile> {
        if bytes.iter().all(|b| b.is_ascii_whitespace()) {
            return Err(Usage(format!(
                "the patch {} is empty: give a patch mail (mbox) or a diff",
                crate::safe_text::field(&path.display().to_string())
            ))
            .into());
        }
        let sha256 = super::tree::hex(&Sha256::digest(&bytes));
        Ok(PatchFile {
            path: path.to_path_buf(),
            name: name.to_string(),
            bytes,
            sha256,
            subject: None,
        })
    }

    /// The same patch, committed as a plain diff with `subject`.
    pub fn with_subject(mut self, subject: String) -> PatchFile {
        self.subject = Some(subject);
        self
    }

    fn shown(&self) -> String {
        crate::safe_text::field(&self.path.display().to_string())
    }
}

/// How a patch file is to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Mail: one message or an mbox of several.
    Mail,
    /// A plain diff.
    Diff,
}

/// Mail when it starts with an mbox `From ` line or a mail header, a diff when it has a diff
/// in it, else None.
pub fn form_of(bytes: &[u8]) -> Option<Form> {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(64 * 1024)]);
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let is_header = |l: &str| {
        l.split_once(':').is_some_and(|(name, _)| {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && [
                    "from",
                    "subject",
                    "date",
                    "to",
                    "message-id",
                    "return-path",
                    "received",
                ]
                .contains(&name.to_ascii_lowercase().as_str())
        })
    };
    if first.starts_with("From ") || is_header(first) {
        return Some(Form::Mail);
    }
    let diff = text
        .lines()
        .any(|l| l.starts_with("diff --git ") || l.starts_with("--- ") || l.starts_with("Index: "));
    diff.then_some(Form::Diff)
}

/// One message of a mail patch file, as `git mailinfo` read it.
#[derive(Debug, Clone, PartialEq)]
struct Message {
    author_name: String,
    author_email: String,
    date: String,
    subject: String,
    body: String,
    /// The diff; empty for a cover letter.
    diff: Vec<u8>,
}

/// The messages of a mail file, in order (`git mailsplit`, then `git mailinfo -u` for each:
/// the subject loses its `[PATCH ...]`, the text is re-coded to UTF-8, as `git am` does).
fn messages(repo: &Repo, file: &PatchFile, tmp: &Path) -> anyhow::Result<Vec<Message>> {
    let dir = tmp.join("mails");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let mbox = tmp.join("mbox");
    std::fs::write(&mbox, &file.bytes)?;
    let out = output(
        repo.git()
            .arg("mailsplit")
            .arg("-b")
            .arg(format!("-o{}", dir.display()))
            .arg(&mbox),
        "git mailsplit",
    )?;
    if !out.status.success() {
        return Err(Usage(format!(
            "the patch {} is not a readable mbox ({})",
            file.shown(),
            first_complaint(&out)
        ))
        .into());
    }
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    names.sort();
    let mut all = Vec::new();
    for mail in names {
        let msg = tmp.join("msg");
        let diff = tmp.join("diff");
        let input = std::fs::File::open(&mail)?;
        let out = repo
            .git()
            .args(["mailinfo", "-u"])
            .arg(&msg)
            .arg(&diff)
            .stdin(input)
            .output()
            .map_err(|e| anyhow::anyhow!("cannot run git mailinfo: {e}"))?;
        if !out.status.success() {
            return Err(Usage(format!(
                "the patch {} holds a mail git cannot read ({})",
                file.shown(),
                first_complaint(&out)
            ))
            .into());
        }
        let info = String::from_utf8_lossy(&out.stdout);
        let field = |name: &str| {
            info.lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.trim().to_string())
                .unwrap_or_default()
        };
        all.push(Message {
            author_name: field("Author:"),
            author_email: field("Email:"),
            date: field("Date:"),
            subject: field("Subject:"),
            body: std::fs::read_to_string(&msg).unwrap_or_default(),
            diff: std::fs::read(&diff).unwrap_or_default(),
        });
    }
    if all.is_empty() {
        return Err(Usage(format!("the patch {} holds no mail", file.shown())).into());
    }
    Ok(all)
}

/// The result of applying a side's patches.
#[derive(Debug, Clone)]
pub struct Applied {
    /// The commit after the last patch (the base commit when there is none).
    pub commit: String,
    pub patches: Vec<AppliedPatch>,
}

/// Where a patch failed, for the message.
fn first_failed_file(stderr: &str) -> Option<String> {
    for l in stderr.lines() {
        if let Some(rest) = l.strip_prefix("error: patch failed: ") {
            return Some(rest.rsplit_once(':').map_or(rest, |(f, _)| f).to_string());
        }
    }
    stderr.lines().find_map(|l| {
        let rest = l.strip_prefix("error: ")?;
        let (file, _) = rest.split_once(": ")?;
        (!file.contains(' ')).then(|| file.to_string())
    })
}

/// Applies `files` in order onto `base` in `repo`, with a private index in `tmp`.
/// `base_name` names the base in messages (the ref as given).
pub fn apply(
    repo: &Repo,
    base: &str,
    base_name: &str,
    files: &[PatchFile],
    tmp: &Path,
) -> anyhow::Result<Applied> {
    let mut parent = base.to_string();
    let mut applied = Vec::new();
    if files.is_empty() {
        return Ok(Applied {
            commit: parent,
            patches: applied,
        });
    }
    let index = tmp.join("index");
    let base_date = repo.commit_date(base)?;
    run(
        repo.git()
            .env("GIT_INDEX_FILE", &index)
            .args(["read-tree", base]),
        "git read-tree",
    )?;
    for file in files {
        let form = match file.subject {
            Some(_) => Some(Form::Diff),
            None => form_of(&file.bytes),
        };
        let form = form.ok_or_else(|| {
            Usage(format!(
                "{} is neither a patch mail (mbox, as `git format-patch` writes) nor a diff",
                file.shown()
            ))
        })?;
        let messages = match form {
            Form::Mail => messages(repo, file, tmp)?,
            Form::Diff => vec![Message {
                author_name: super::tree::COMMITTER_NAME.to_string(),
                author_email: super::tree::COMMITTER_EMAIL.to_string(),
                date: base_date.clone(),
                subject: file
                    .subject
                    .clone()
                    .unwrap_or_else(|| format!("plain diff {}", file.name)),
                body: format!("Applied by patchbench; sha256 {}.\n", file.sha256),
                diff: file.bytes.clone(),
            }],
        };
        let count = messages.len();
        for (i, m) in messages.into_iter().enumerate() {
            let place = if count > 1 {
                format!(" ({}/{count})", i + 1)
            } else {
                String::new()
            };
            let author = match form {
                Form::Mail => format!("{} <{}>", m.author_name, m.author_email),
                Form::Diff => String::new(),
            };
            if m.diff.iter().all(|b| b.is_ascii_whitespace()) {
                applied.push(AppliedPatch {
                    file: file.name.clone(),
                    sha256: file.sha256.clone(),
                    subject: m.subject.clone(),
                    author,
                    commit: None,
                    skipped: Some(if i == 0 && count > 1 {
                        "cover letter".to_string()
                    } else {
                        "no diff".to_string()
                    }),
                });
                continue;
            }
            let diff_file = tmp.join("patch.diff");
            std::fs::write(&diff_file, &m.diff)?;
            let out = output(
                repo.git()
                    .env("GIT_INDEX_FILE", &index)
                    .args(["apply", "--cached", "--whitespace=nowarn"])
                    .arg(&diff_file),
                "git apply",
            )?;
            if !out.status.success() {
                let err = String::from_utf8_lossy(&out.stderr).into_owned();
                let first = first_failed_file(&err)
                    .map(|f| format!(": the first file that failed is {f}"))
                    .unwrap_or_default();
                return Err(Usage(format!(
                    "the patch {}{place} \"{}\" does not apply to {} ({}){first} ({}); \
                     rebase it onto that commit, or build it on another ref",
                    file.shown(),
                    crate::safe_text::field(&m.subject),
                    crate::safe_text::field(base_name),
                    &base[..12.min(base.len())],
                    first_complaint(&out)
                ))
                .into());
            }
            let tree = run(
                repo.git().env("GIT_INDEX_FILE", &index).arg("write-tree"),
                "git write-tree",
            )?;
            let message = if m.body.trim().is_empty() {
                format!("{}\n", m.subject)
            } else {
                format!("{}\n\n{}", m.subject, m.body.trim_end_matches('\n')) + "\n"
            };
            let msg_file = tmp.join("message");
            std::fs::write(&msg_file, message)?;
            let commit = run(
                repo.git()
                    .env("GIT_AUTHOR_NAME", &m.author_name)
                    .env("GIT_AUTHOR_EMAIL", &m.author_email)
                    .env("GIT_AUTHOR_DATE", &m.date)
                    .env("GIT_COMMITTER_DATE", &m.date)
                    .args(["commit-tree", tree.trim(), "-p", &parent, "-F"])
                    .arg(&msg_file),
                "git commit-tree",
            )?
            .trim()
            .to_string();
            applied.push(AppliedPatch {
                file: file.name.clone(),
                sha256: file.sha256.clone(),
                subject: m.subject,
                author,
                commit: Some(commit.clone()),
                skipped: None,
            });
            parent = commit;
        }
    }
    Ok(Applied {
        commit: parent,
        patches: applied,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::tree::{git, Tree};

    #[test]
    fn mail_and_diffs_are_told_apart() {
        assert_eq!(
            form_of(b"From 1234 Mon Sep 17 00:00:00 2001\nFrom: a <a@b>\n"),
            Some(Form::Mail)
        );
        assert_eq!(form_of(b"Subject: [PATCH] x\n\nbody\n"), Some(Form::Mail));
        assert_eq!(
            form_of(b"diff --git a/f b/f\n--- a/f\n+++ b/f\n"),
            Some(Form::Diff)
        );
        assert_eq!(
            form_of(b"--- f.orig\n+++ f\n@@ -1 +1 @@\n"),
            Some(Form::Diff)
        );
        assert_eq!(form_of(b"hello world\n"), None);
        assert_eq!(
            first_failed_file("error: patch failed: kernel/sys.c:950\nerror: kernel/sys.c: patch does not apply\n"),
            Some("kernel/sys.c".to_string())
        );
        assert_eq!(
            first_failed_file("error: fs/x.c: does not exist in index\n"),
            Some("fs/x.c".to_string())
        );
    }

    fn setup(d: &Path) -> (Repo, String) {
        let user = d.join("linux");
        std::fs::create_dir_all(user.join("arch/x86")).unwrap();
        for f in ["Makefile", "Kconfig", "arch/x86/Makefile"] {
            std::fs::write(user.join(f), "").unwrap();
        }
        std::fs::write(user.join("sys.c"), "int getppid(void)\n{\n\treturn 1;\n}\n").unwrap();
        run(git(&user).args(["init", "-q"]), "init").unwrap();
        run(git(&user).args(["add", "-A", "."]), "add").unwrap();
        run(
            git(&user)
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@t")
                .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
                .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
                .args(["commit", "-q", "-m", "base"]),
            "commit",
        )
        .unwrap();
        let tree = Tree::open(&user).unwrap();
        let base = tree.resolve("HEAD").unwrap();
        let repo = Repo::open_or_init(&d.join("repo.git"), &tree).unwrap();
        (repo, base)
    }

    const SERIES: &str = "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Ann Dev <ann@example.org>
Date: Tue, 2 Jan 2024 10:00:00 +0000
Subject: [PATCH 0/1] make getppid slower

This series makes getppid slower.

--
2.39.5

From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001
From: Ann Dev <ann@example.org>
Date: Tue, 2 Jan 2024 10:00:01 +0000
Subject: [PATCH 1/1] sys: slower getppid

It returns 2 now.

Signed-off-by: Ann Dev <ann@example.org>
---
 sys.c | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/sys.c b/sys.c
--- a/sys.c
+++ b/sys.c
@@ -1,4 +1,4 @@
 int getppid(void)
 {
-\treturn 1;
+\treturn 2;
 }
-- 
2.39.5

";

    #[test]
    fn a_series_with_its_cover_letter_applies_the_same_commit_every_time() {
        let d = tempfile::tempdir().unwrap();
        let (repo, base) = setup(d.path());
        let series = PatchFile::from_bytes(
            Path::new("slower.mbox"),
            "slower.mbox",
            SERIES.replace("\\t", "\t").into_bytes(),
        )
        .unwrap();
        let tmp = d.path().join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        let a = apply(&repo, &base, "HEAD", std::slice::from_ref(&series), &tmp).unwrap();
        assert_eq!(a.patches.len(), 2);
        assert_eq!(a.patches[0].skipped.as_deref(), Some("cover letter"));
        assert_eq!(a.patches[0].subject, "make getppid slower");
        assert_eq!(a.patches[1].subject, "sys: slower getppid");
        assert_eq!(a.patches[1].author, "Ann Dev <ann@example.org>");
        assert_eq!(a.patches[1].commit.as_deref(), Some(a.commit.as_str()));
        assert_ne!(a.commit, base);
        let again = apply(&repo, &base, "HEAD", std::slice::from_ref(&series), &tmp).unwrap();
        assert_eq!(again.commit, a.commit, "deterministic");
        let file = run(
            repo.git().args(["show", &format!("{}:sys.c", a.commit)]),
            "show",
        )
        .unwrap();
        assert!(file.contains("return 2;"), "{file}");
        let who = run(
            repo.git()
                .args(["show", "-s", "--format=%an|%cn|%ad|%cd", &a.commit]),
            "show",
        )
        .unwrap();
        assert_eq!(
            who.trim(),
            "Ann Dev|patchbench|Tue Jan 2 10:00:01 2024 +0000|Tue Jan 2 10:00:01 2024 +0000"
        );
        // The same change as a plain diff; then once more, which no longer applies.
        let diff = PatchFile::from_bytes(
            Path::new("x.diff"),
            "x.diff",
            b"diff --git a/sys.c b/sys.c\n--- a/sys.c\n+++ b/sys.c\n@@ -2,3 +2,3 @@\n {\n-\treturn 1;\n+\treturn 3;\n }\n"
                .to_vec(),
        )
        .unwrap();
        let p = apply(&repo, &base, "HEAD", std::slice::from_ref(&diff), &tmp).unwrap();
        assert_eq!(p.patches[0].subject, "plain diff x.diff");
        assert_eq!(p.patches[0].author, "");
        let e = apply(&repo, &base, "HEAD", &[diff.clone(), diff], &tmp).unwrap_err();
        let text = e.to_string();
        assert!(e.downcast_ref::<Usage>().is_some());
        assert!(
            text.contains("x.diff")
                && text.contains("plain diff x.diff")
                && text.contains("first file that failed is sys.c"),
            "{text}"
        );
        let junk = PatchFile::from_bytes(Path::new("notes.txt"), "notes.txt", b"hello\n".to_vec())
            .unwrap();
        let e = apply(&repo, &base, "HEAD", &[junk], &tmp).unwrap_err();
        assert!(e.to_string().contains("neither a patch mail"), "{e}");
    }
}
