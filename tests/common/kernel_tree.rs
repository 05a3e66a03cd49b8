//! A Linux git tree and one build cache for every test that builds a kernel: Debian's kernel
//! source package (`linux-source-6.1`, `/usr/src/linux-source-6.1.tar.xz`, installed by
//! `.ci/run`) unpacked into `target/test-kernel-tree/linux` and committed once, with a fixed
//! author, committer and date, so the commit is the same on every machine (the tarball's own
//! `.gitignore` would ignore files: `git add -f -A .`). The cache beside it
//! (`target/test-kernel-tree/cache`) is shared too, so a CI run builds the tiny base kernel
//! once (minutes) and every later build of it is a cache hit, every patched one incremental.
//!
//! Several test binaries (and the tests of one binary) may ask at once: the tree is made
//! under a file lock, and a `ready` file (written last, holding the commit) says it is whole.
//! The cache has locks of its own (`patchbench::build::cache`).
//!
//! The tree is shared: a test never moves its HEAD, never touches its work tree or index.
//! History on top of it is made with [`commit_on`] (plumbing only, on a branch of the test's
//! own), which bisect's tests use for a short history of commits. [`tiny_kernel`] is the tiny
//! build of its HEAD, the smallest kernel the vm tests boot.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Debian tarball.
pub const TARBALL: &str = "/usr/src/linux-source-6.1.tar.xz";

/// The shared tree and cache.
pub struct KernelTree {
    /// The git tree (its HEAD is the tarball's commit).
    pub tree: PathBuf,
    /// The shared build cache (`--cache`).
    pub cache: PathBuf,
    /// The commit of HEAD.
    pub head: String,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap_or(Path::new(env!("CARGO_TARGET_TMPDIR")))
        .join("test-kernel-tree")
}

/// `git` in `dir` with no user configuration and a fixed identity and date.
pub fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.arg("-C")
        .arg(dir)
        .args(["-c", "gc.auto=0", "-c", "core.hooksPath=/dev/null"])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "patchbench tests")
        .env("GIT_AUTHOR_EMAIL", "tests@patchbench.invalid")
        .env("GIT_COMMITTER_NAME", "patchbench tests")
        .env("GIT_COMMITTER_EMAIL", "tests@patchbench.invalid")
        .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
        .env("LC_ALL", "C");
    c
}

/// Runs `cmd`, failing the test with `what` and its stderr unless it succeeds; its stdout.
pub fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("kernel tree fixture: {what}: {e}"));
    assert!(
        out.status.success(),
        "kernel tree fixture: {what} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Holds the fixture's lock while alive.
struct Held(#[allow(dead_code)] nix::fcntl::Flock<std::fs::File>);

fn lock(dir: &Path) -> Held {
    std::fs::create_dir_all(dir).unwrap();
    let file = std::fs::File::create(dir.join(".lock")).unwrap();
    Held(
        nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
            .unwrap_or_else(|(_, e)| panic!("cannot lock {}: {e}", dir.display())),
    )
}

/// The shared tree and cache, made on first use (a minute or two).
pub fn kernel_tree() -> KernelTree {
    let dir = root();
    let _held = lock(&dir);
    let tree = dir.join("linux");
    let ready = dir.join("ready");
    if !ready.is_file() {
        assert!(
            Path::new(TARBALL).is_file(),
            "the kernel-build tests need Debian's kernel source: apt-get install linux-source-6.1 \
             ({TARBALL} is missing)"
        );
        let _ = std::fs::remove_dir_all(&tree);
        let unpack = dir.join("unpack");
        let _ = std::fs::remove_dir_all(&unpack);
        std::fs::create_dir_all(&unpack).unwrap();
        run(
            Command::new("tar")
                .arg("-xf")
                .arg(TARBALL)
                .arg("-C")
                .arg(&unpack),
            "tar -xf linux-source-6.1.tar.xz (apt-get install xz-utils)",
        );
        let top = std::fs::read_dir(&unpack)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.is_dir())
            .expect("the tarball holds a directory");
        std::fs::rename(&top, &tree).unwrap();
        let _ = std::fs::remove_dir_all(&unpack);
        run(git(&tree).args(["init", "-q", "-b", "main"]), "git init");
        run(git(&tree).args(["add", "-f", "-A", "."]), "git add");
        run(
            git(&tree).args(["commit", "-q", "-m", "Debian linux-source-6.1"]),
            "git commit",
        );
        let head = run(git(&tree).args(["rev-parse", "HEAD"]), "git rev-parse");
        std::fs::write(&ready, head.trim()).unwrap();
    }
    let head = std::fs::read_to_string(&ready).unwrap().trim().to_string();
    KernelTree {
        tree,
        cache: dir.join("cache"),
        head,
    }
}

/// Makes a commit on top of `parent` with `edits` (path, new content) on branch `branch`
/// (created or moved), without touching the work tree, the index or HEAD; returns it. Under
/// the fixture's lock.
pub fn commit_on(
    kt: &KernelTree,
    branch: &str,
    parent: &str,
    edits: &[(&str, &str)],
    message: &str,
) -> String {
    let _held = lock(&root());
    let scratch = tempfile::tempdir().unwrap();
    let index = scratch.path().join("index");
    let with_index = |c: &mut Command| {
        c.env("GIT_INDEX_FILE", &index);
    };
    let mut c = git(&kt.tree);
    with_index(&mut c);
    run(c.args(["read-tree", parent]), "git read-tree");
    for (path, content) in edits {
        let file = scratch.path().join("blob");
        std::fs::write(&file, content).unwrap();
        let blob = run(
            git(&kt.tree).args(["hash-object", "-w"]).arg(&file),
            "git hash-object",
        );
        let mut c = git(&kt.tree);
        with_index(&mut c);
        run(
            c.args([
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("100644,{},{path}", blob.trim()),
            ]),
            "git update-index",
        );
    }
    let mut c = git(&kt.tree);
    with_index(&mut c);
    let tree = run(c.arg("write-tree"), "git write-tree");
    let commit = run(
        git(&kt.tree).args(["commit-tree", tree.trim(), "-p", parent, "-m", message]),
        "git commit-tree",
    );
    let commit = commit.trim().to_string();
    run(
        git(&kt.tree).args(["update-ref", &format!("refs/heads/{branch}"), &commit]),
        "git update-ref",
    );
    commit
}

/// The content of `path` at `commit` of the tree.
pub fn file_at(kt: &KernelTree, commit: &str, path: &str) -> String {
    run(
        git(&kt.tree).args(["show", &format!("{commit}:{path}")]),
        "git show",
    )
}

/// A kernel of the shared cache, as a vm campaign boots it (`--base IMAGE`).
pub struct TinyKernel {
    /// Its image (`CACHE/<id>/boot/vmlinuz-RELEASE`).
    pub image: PathBuf,
    /// Its release (`6.1.192-pb<commit>`).
    pub release: String,
}

/// The `tiny` build of the tree's HEAD (`patchbench build --config tiny`): the smallest kernel
/// the tests boot, with no modules to load. A cache hit once tests/build.rs or any kernel
/// campaign built it (the first run on a new machine builds it here, minutes).
pub fn tiny_kernel() -> TinyKernel {
    let kt = kernel_tree();
    let mut c = super::std_patchbench();
    c.arg("build")
        .arg("--tree")
        .arg(&kt.tree)
        .arg("--cache")
        .arg(&kt.cache)
        .args(["--config", "tiny", "--format", "json"]);
    let out = run(&mut c, "patchbench build --config tiny");
    let doc: serde_json::Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("patchbench build's JSON: {e}: {out}"));
    TinyKernel {
        image: PathBuf::from(doc["image"].as_str().expect("the build's image")),
        release: doc["release"]
            .as_str()
            .expect("the build's release")
            .to_string(),
    }
}
