//! `patchbench build` and `patchbench builds` for real, on Debian's kernel source as a git tree
//! (`common::kernel_tree`, shared with every kernel-building test, with one build cache): the
//! `tiny` config of HEAD is built once (minutes; a cache hit in every later test and CI run),
//! built again is a cache hit (seconds, the same id and files), and a one-file patch (an mbox
//! with its cover letter) rebuilds incrementally in the same slot; the `running` config
//! resolves with the fairness options holding. Bad input is one line and exit status 2 and
//! leaves no build, no staging directory and nothing in the user's tree: not a git tree, an
//! unknown ref, a patch that does not apply (named with its subject and first failed file), a
//! file that is no patch, a missing build tool, a bad fragment, a compiler error (the log's
//! tail and its path), a full disk; a build killed mid-make holds its slot until its compilers
//! are gone, and Ctrl-C mid-build leaves no build and no make (neither is built to its end).
//!
//! Needs `linux-source-6.1`, `flex`, `bison`, `bc`, `libelf-dev` (`.ci/run` installs them).

mod common;

use common::kernel_tree::{kernel_tree, KernelTree};
use common::{fixture, std_patchbench, wait_with_timeout};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A build from scratch on a loaded 2-CPU machine, with room.
const BUILD_LIMIT: Duration = Duration::from_secs(3600);

/// `patchbench build --tree T --config tiny --cache C --format json ARGS`.
fn build_cmd(kt: &KernelTree, cache: &Path, args: &[&str]) -> Command {
    build_in(&kt.tree, cache, args)
}

fn build_in(tree: &Path, cache: &Path, args: &[&str]) -> Command {
    let mut c = std_patchbench();
    c.arg("build").arg("--tree").arg(tree);
    if !args.contains(&"--config") {
        c.args(["--config", "tiny"]);
    }
    c.args(["--format", "json", "--cache"])
        .arg(cache)
        .args(args);
    c
}

/// Runs a command to its end (bounded): (exit status, stdout, stderr).
fn run(cmd: &mut Command) -> (Option<i32>, String, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let o = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut s);
        s
    });
    let e = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let status = wait_with_timeout(&mut child, BUILD_LIMIT);
    (status.code(), o.join().unwrap(), e.join().unwrap())
}

/// A build that must succeed: its JSON document and the seconds it took.
fn build_ok(kt: &KernelTree, cache: &Path, args: &[&str]) -> (serde_json::Value, f64) {
    let started = Instant::now();
    let (code, out, err) = run(&mut build_cmd(kt, cache, args));
    assert_eq!(code, Some(0), "{err}");
    (
        serde_json::from_str(&out).unwrap(),
        started.elapsed().as_secs_f64(),
    )
}

/// What a test may not change in the user's tree: HEAD, the refs, the index, no worktree.
fn tree_state(kt: &KernelTree) -> (String, String, Option<(u64, std::time::SystemTime)>, bool) {
    let git = |args: &[&str]| {
        common::kernel_tree::run(common::kernel_tree::git(&kt.tree).args(args), "git")
    };
    let index = std::fs::metadata(kt.tree.join(".git/index"))
        .ok()
        .map(|m| (m.len(), m.modified().unwrap()));
    (
        git(&["rev-parse", "HEAD"]),
        git(&[
            "for-each-ref",
            "--format=%(refname)",
            "refs/heads",
            "refs/tags",
            "refs/patchbench",
        ]),
        index,
        kt.tree.join(".git/worktrees").exists(),
    )
}

/// The finished builds in a cache (directories named by 16 hex digits).
fn builds_in(cache: &Path) -> Vec<String> {
    std::fs::read_dir(cache)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| patchbench::build::cache::is_id(n))
                .collect()
        })
        .unwrap_or_default()
}

/// Staging directories left in a cache.
fn staging_in(cache: &Path) -> Vec<String> {
    std::fs::read_dir(cache.join(".work/tmp"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether process `pid` has a build slot's lock file open (`CACHE/.work/slot-*.lock`).
fn holds_slot_lock(pid: i32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|fds| {
            fds.flatten().any(|fd| {
                std::fs::read_link(fd.path()).is_ok_and(|t| {
                    let t = t.to_string_lossy();
                    t.contains("/.work/slot-") && t.ends_with(".lock")
                })
            })
        })
        .unwrap_or(false)
}

/// The one line a refused build says (after any tail lines of a log).
fn last_line(err: &str) -> String {
    err.lines()
        .rfind(|l| !l.trim().is_empty())
        .unwrap_or("")
        .to_string()
}

fn path(v: &serde_json::Value, key: &str) -> PathBuf {
    PathBuf::from(v[key].as_str().unwrap_or_else(|| panic!("no {key} in {v}")))
}

#[test]
fn the_tiny_base_builds_once_then_hits_the_cache_and_a_one_file_patch_is_incremental() {
    let kt = kernel_tree();
    let before = tree_state(&kt);
    let (base, secs) = build_ok(&kt, &kt.cache, &[]);
    eprintln!(
        "base: {} in {secs:.0} s ({}; make {:.0} s)",
        base["id"],
        if base["cached"] == true {
            "a cache hit".to_string()
        } else if base["incremental"] == true {
            "incremental".to_string()
        } else {
            "from scratch".to_string()
        },
        base["build_secs"].as_f64().unwrap()
    );
    assert_eq!(base["schema"], "patchbench.build/1");
    assert_eq!(base["base_commit"], kt.head.as_str());
    assert_eq!(
        base["commit"],
        kt.head.as_str(),
        "no patch: the base commit"
    );
    let release = base["release"].as_str().unwrap();
    assert_eq!(release, format!("6.1.192-pb{}", &kt.head[..12]));
    for key in ["image", "system_map", "vmlinux", "config_file", "log"] {
        assert!(path(&base, key).is_file(), "{key}: {base}");
    }
    assert!(base["modules"].is_null(), "tiny has no modules");
    let info = patchbench::campaign::kernel_image::inspect(&path(&base, "image")).unwrap();
    assert_eq!(info.release, release);
    // Every value tiny and the fairness fragment ask for holds.
    assert!(base["config"]["dropped"].is_null(), "{}", base["config"]);
    let config = std::fs::read_to_string(path(&base, "config_file")).unwrap();
    for want in [
        "CONFIG_64BIT=y",
        "CONFIG_9P_FS=y",
        "CONFIG_NET_9P_VIRTIO=y",
        "CONFIG_VIRTIO_PCI=y",
        "CONFIG_BLK_DEV_INITRD=y",
        "CONFIG_EXT4_FS=y",
        "CONFIG_BLK_DEV_RAM=y",
        "CONFIG_PREEMPT_VOLUNTARY=y",
        "CONFIG_CC_OPTIMIZE_FOR_PERFORMANCE=y",
        "CONFIG_SLUB=y",
        "CONFIG_UNWINDER_ORC=y",
        "# CONFIG_MODULES is not set",
        "# CONFIG_LOCALVERSION_AUTO is not set",
    ] {
        assert!(
            config.lines().any(|l| l == want),
            "{want} not in the config"
        );
    }

    // The same again: found in the cache, the same build.
    let (again, secs) = build_ok(&kt, &kt.cache, &[]);
    eprintln!("base again: {secs:.1} s (a cache hit)");
    assert_eq!(again["cached"], true);
    assert_eq!(again["id"], base["id"]);
    assert_eq!(again["image"], base["image"]);

    // A one-file patch from an mbox with its cover letter: rebuilt in the same slot.
    let mbox = fixture("build/slower.mbox");
    let (patched, secs) = build_ok(&kt, &kt.cache, &["--patch", &mbox]);
    eprintln!(
        "patched: {} in {secs:.0} s ({}; make {:.0} s)",
        patched["id"],
        if patched["cached"] == true {
            "a cache hit"
        } else if patched["incremental"] == true {
            "incremental"
        } else {
            "from scratch"
        },
        patched["build_secs"].as_f64().unwrap()
    );
    assert_ne!(patched["id"], base["id"]);
    assert_eq!(patched["base_commit"], kt.head.as_str());
    assert_ne!(patched["commit"], kt.head.as_str());
    let patches = patched["patches"].as_array().unwrap();
    assert_eq!(patches.len(), 2, "{patches:?}");
    assert_eq!(patches[0]["skipped"], "cover letter");
    assert_eq!(
        patches[1]["subject"],
        "getppid: spin a thousand times first"
    );
    assert_eq!(patches[1]["author"], "Ann Bench <ann@patchbench.invalid>");
    assert_eq!(patches[1]["sha256"].as_str().unwrap().len(), 64);
    assert_eq!(
        patched["config"]["sha256"], base["config"]["sha256"],
        "a patch that changes no Kconfig keeps the config"
    );
    if patched["cached"] != true {
        assert_eq!(patched["incremental"], true, "{patched}");
    }
    let (patched_again, _) = build_ok(&kt, &kt.cache, &["--patch", &mbox]);
    assert_eq!(patched_again["cached"], true);
    assert_eq!(
        patched_again["commit"], patched["commit"],
        "the same commit id"
    );

    // The cache lists both; nothing of the user's tree changed.
    let (code, out, err) = run(std_patchbench()
        .args(["builds", "--format", "json", "--cache"])
        .arg(&kt.cache));
    assert_eq!(code, Some(0), "{err}");
    let listed: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ids: Vec<&str> = listed["builds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&base["id"].as_str().unwrap()), "{ids:?}");
    assert!(ids.contains(&patched["id"].as_str().unwrap()), "{ids:?}");
    let (code, text, _) = run(std_patchbench().args(["builds", "--cache"]).arg(&kt.cache));
    assert_eq!(code, Some(0));
    assert!(text.contains("getppid: spin"), "{text}");
    assert_eq!(tree_state(&kt), before, "the user's tree is untouched");
}

#[test]
fn bad_input_is_one_line_with_exit_status_2_and_leaves_nothing() {
    let kt = kernel_tree();
    let before = tree_state(&kt);
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let not_git = d.path().join("plain");
    std::fs::create_dir(&not_git).unwrap();
    let junk = d.path().join("notes.txt");
    std::fs::write(&junk, "hello, not a patch\n").unwrap();
    let bad_fragment = d.path().join("bad.config");
    std::fs::write(
        &bad_fragment,
        "CONFIG_PREEMPT=n\nthis is not a config line\n",
    )
    .unwrap();
    // A PATH with every tool but flex.
    let tools = d.path().join("bin");
    std::fs::create_dir(&tools).unwrap();
    for t in [
        "git", "make", "gcc", "ld", "bison", "bc", "perl", "tar", "sh",
    ] {
        let found = patchbench::build::tools::on_path(t).unwrap_or_else(|| panic!("{t}"));
        std::os::unix::fs::symlink(found, tools.join(t)).unwrap();
    }
    // A patch that adds a link named as the build's object directory, pointing out of the
    // cache: refused before any checkout, and nothing is written where it points.
    let outside = d.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let obj_link = d.path().join("obj-link.diff");
    std::fs::write(
        &obj_link,
        format!(
            "diff --git a/.patchbench-obj b/.patchbench-obj\nnew file mode 120000\n\
             --- /dev/null\n+++ b/.patchbench-obj\n@@ -0,0 +1 @@\n+{}\n\
             \\ No newline at end of file\n",
            outside.display()
        ),
    )
    .unwrap();
    let obj_link_s = obj_link.display().to_string();
    let stale = fixture("build/stale.mbox");
    let junk_s = junk.display().to_string();
    let frag_s = bad_fragment.display().to_string();
    /// Arguments, another tree, what the line says, and what else it names.
    type Case<'a> = (Vec<&'a str>, Option<&'a Path>, &'a str, &'a [&'a str]);
    let cases: Vec<Case> = vec![
        (vec![], Some(&not_git), "is not a git tree", &[]),
        (
            vec!["--ref", "no-such-branch"],
            None,
            "names no commit",
            &[],
        ),
        (
            vec!["--patch", &stale],
            None,
            "does not apply",
            &[
                "stale.mbox",
                "getppid: against a kernel/sys.c",
                "kernel/sys.c",
            ],
        ),
        (vec!["--patch", &junk_s], None, "neither a patch mail", &[]),
        (
            vec!["--patch", &obj_link_s],
            None,
            "has .patchbench-obj, the name a build keeps for its object directory",
            &[],
        ),
        (
            vec!["--patch", "/dev/zero"],
            None,
            "is a device: give a regular file",
            &[],
        ),
        (
            vec!["--patch", "/no/such.mbox"],
            None,
            "cannot read the patch",
            &[],
        ),
        (vec!["--fragment", &frag_s], None, "line 2", &[]),
        (
            vec!["--config", "/no/such/config"],
            None,
            "cannot read the config",
            &[],
        ),
    ];
    for (args, tree, why, also) in cases {
        let (code, _, err) = run(&mut build_in(tree.unwrap_or(&kt.tree), &cache, &args));
        assert_eq!(code, Some(2), "{args:?}: {err}");
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{args:?}: one line: {err}");
        assert!(err.contains(why), "{args:?}: {err}");
        for a in also {
            assert!(err.contains(a), "{args:?}: {a} not in {err}");
        }
        assert!(builds_in(&cache).is_empty(), "{args:?}");
        assert!(
            staging_in(&cache).is_empty(),
            "{args:?}: {:?}",
            staging_in(&cache)
        );
    }
    let mut c = build_cmd(&kt, &cache, &[]);
    c.env("PATH", &tools);
    let (code, _, err) = run(&mut c);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("flex") && err.contains("apt-get install flex"),
        "{err}"
    );
    assert!(builds_in(&cache).is_empty());
    assert!(
        common::entries(&outside).is_empty(),
        "nothing written through the link"
    );
    assert_eq!(tree_state(&kt), before, "the user's tree is untouched");
}

#[test]
fn a_full_disk_is_said_and_stores_nothing() {
    let kt = kernel_tree();
    let fs = common::Tmpfs::mount("size=64m");
    let cache = fs.path.join("cache");
    let (code, _, err) = run(&mut build_cmd(&kt, &cache, &[]));
    assert_eq!(code, Some(2), "{err}");
    let line = last_line(&err);
    assert!(
        line.contains("is full") && line.contains("--cache"),
        "{err}"
    );
    assert!(builds_in(&cache).is_empty());
    assert!(staging_in(&cache).is_empty(), "{:?}", staging_in(&cache));
}

#[test]
fn a_compiler_error_shows_the_logs_tail_and_path_stores_nothing_and_is_not_built_again() {
    let kt = kernel_tree();
    let before = builds_in(&kt.cache);
    // A failure remembered by an earlier run of this test would answer at once: forget it.
    let _ = std::fs::remove_dir_all(kt.cache.join(".work/failed"));
    let broken = || build_cmd(&kt, &kt.cache, &["--patch", &fixture("build/broken.diff")]);
    let (code, _, err) = run(&mut broken());
    assert_eq!(code, Some(2), "{err}");
    let line = last_line(&err);
    assert!(line.contains("the kernel build"), "{err}");
    assert!(line.contains("error:"), "the first error is named: {line}");
    assert!(err.contains("  | "), "the log's tail: {err}");
    let log = line
        .rsplit("the whole log is ")
        .next()
        .map(|s| PathBuf::from(s.trim()))
        .unwrap();
    let text = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    assert!(text.contains("kernel/sys.c"), "{}", log.display());
    let id = log.file_stem().unwrap().to_string_lossy().into_owned();
    assert!(patchbench::build::cache::is_id(&id), "{}", log.display());
    assert!(
        !before.contains(&id) && !builds_in(&kt.cache).contains(&id),
        "no build stored"
    );
    // Asked again, the same key is refused at once with the first failure's message, and
    // make does not run (no "building" line, no log tail).
    let (code, _, again) = run(&mut broken());
    assert_eq!(code, Some(2), "{again}");
    let second = last_line(&again);
    assert!(
        second.contains(&format!(
            "build {id} failed before, so it is not built again"
        )) && second.ends_with(line.rsplit("patchbench: error: ").next().unwrap()),
        "{again}"
    );
    assert!(
        !again.contains("building ") && !again.contains("  | "),
        "{again}"
    );
}

#[test]
fn a_killed_build_holds_its_slot_until_its_compilers_are_gone_and_ctrl_c_leaves_no_build() {
    let kt = kernel_tree();
    // A change no other test (and no earlier run) builds, so this one is never a cache hit;
    // its build is removed at the end.
    let d = tempfile::tempdir().unwrap();
    let patch = d.path().join("comment.diff");
    let sys = common::kernel_tree::file_at(&kt, &kt.head, "kernel/sys.c");
    let line = sys
        .lines()
        .position(|l| l == "SYSCALL_DEFINE0(getppid)")
        .unwrap();
    std::fs::write(
        &patch,
        format!(
            "diff --git a/kernel/sys.c b/kernel/sys.c\n--- a/kernel/sys.c\n+++ b/kernel/sys.c\n\
             @@ -{n},2 +{n},3 @@\n {a}\n+/* patchbench's kill test {nonce} */\n {b}\n",
            n = line + 1,
            a = "SYSCALL_DEFINE0(getppid)",
            b = "{",
            nonce = uuid::Uuid::new_v4()
        ),
    )
    .unwrap();
    // The base first, so the interrupted builds are incremental ones in a built slot.
    build_ok(&kt, &kt.cache, &[]);
    let before = builds_in(&kt.cache);
    let patch_arg = patch.display().to_string();
    // A build in a session of its own (whatever it starts, make and the compilers, can be
    // counted), its stderr read line by line until it starts make.
    let start = || {
        let mut cmd = build_cmd(&kt, &kt.cache, &["--patch", &patch_arg]);
        use std::os::unix::process::CommandExt;
        // SAFETY: setsid is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines =
            std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap()));
        let mut seen = Vec::new();
        for l in lines.by_ref().map_while(Result::ok) {
            let started = l.contains("patchbench: building");
            seen.push(l);
            if started {
                break;
            }
        }
        (child, lines, seen)
    };

    // SIGKILL mid-make: patchbench dies at once, its make with it (the parent-death signal),
    // but the compilers make started finish their files, reparented to init.
    let (mut first, _, seen) = start();
    assert!(
        seen.iter().any(|l| l.contains("patchbench: building")),
        "the build never started: {seen:?}"
    );
    let first_sid = first.id() as i32;
    std::thread::sleep(Duration::from_secs(3));
    // Every process of the build holds the slot's lock, not patchbench alone.
    let holders: Vec<(i32, String)> = common::session_pids(first_sid)
        .into_iter()
        .filter(|(pid, _)| *pid != first_sid && holds_slot_lock(*pid))
        .collect();
    assert!(
        holders.iter().any(|(_, name)| name == "make"),
        "make holds no slot lock: {:?} of {:?}",
        holders,
        common::session_pids(first_sid)
    );
    common::signal(&first, libc::SIGKILL);
    let _ = wait_with_timeout(&mut first, Duration::from_secs(10));
    let left_at_kill = common::session_members(first_sid);

    // Started at once, the same build waits for the slot until the last of them is gone: when
    // it starts make, nothing of the first build is left.
    let (mut second, lines, seen) = start();
    let second_sid = second.id() as i32;
    assert!(
        seen.iter().any(|l| l.contains("patchbench: building")),
        "the second build never started: {seen:?}"
    );
    let left_at_make = common::session_members(first_sid);
    let waited = seen.iter().any(|l| {
        l.contains("patchbench: waiting: another build of this tree is using its build slot")
    });
    eprintln!(
        "killed build: {left_at_kill} processes left at the kill, {left_at_make} when the next \
         started make; it waited: {waited}"
    );
    eprintln!("{}", seen.join("\n"));
    assert_eq!(left_at_make, 0, "{seen:?}");

    // Ctrl-C mid-make: no build published, no make, no compiler, no staging left.
    std::thread::sleep(Duration::from_secs(2));
    common::signal(&second, libc::SIGINT);
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = wait_with_timeout(&mut second, Duration::from_secs(60));
    assert_eq!(status.code(), Some(130), "{rest:?}");
    assert!(
        rest.iter()
            .any(|l| l.contains("interrupted by SIGINT; nothing was stored as a build")),
        "{rest:?}"
    );
    common::wait_until(
        Duration::from_secs(10),
        "make and the compilers to go",
        || common::session_members(second_sid) == 0,
    );
    // (The killed build's staging directory is the next build's to sweep.)
    let leftover: Vec<String> = staging_in(&kt.cache)
        .into_iter()
        .filter(|n| n.starts_with(&format!("build-{second_sid}-")))
        .collect();
    assert!(leftover.is_empty(), "{leftover:?}");
    // Other tests of this binary may publish builds of their own meanwhile (they share the
    // cache): none of the new ones is this patch's.
    let ours: Vec<String> = builds_in(&kt.cache)
        .into_iter()
        .filter(|id| !before.contains(id))
        .filter(|id| {
            std::fs::read_to_string(kt.cache.join(id).join("build.json"))
                .is_ok_and(|j| j.contains("comment.diff"))
        })
        .collect();
    assert!(
        ours.is_empty(),
        "neither the killed nor the interrupted build was published: {ours:?}"
    );
}

#[test]
fn the_running_config_resolves_with_the_fairness_options_holding() {
    let kt = kernel_tree();
    let before = tree_state(&kt);
    let (code, out, err) = run(std_patchbench()
        .args([
            "build",
            "--config-only",
            "--config",
            "running",
            "--format",
            "json",
        ])
        .arg("--tree")
        .arg(&kt.tree)
        .arg("--cache")
        .arg(&kt.cache));
    assert_eq!(code, Some(0), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["schema"], "patchbench.build-config/1");
    let v = patchbench::build::config::values(doc["text"].as_str().unwrap());
    assert_eq!(
        v.get("CONFIG_PREEMPT_VOLUNTARY").map(String::as_str),
        Some("y")
    );
    for off in [
        "CONFIG_PREEMPT_DYNAMIC",
        "CONFIG_DEBUG_LIST",
        "CONFIG_PROVE_LOCKING",
        "CONFIG_KASAN",
        "CONFIG_MODULE_SIG_ALL",
    ] {
        assert_ne!(v.get(off).map(String::as_str), Some("y"), "{off}");
    }
    eprintln!(
        "the running config on this tree: not kept: {}",
        doc["dropped"]
    );
    assert_eq!(tree_state(&kt), before);
}

#[test]
fn builds_shows_the_work_area_and_prune_frees_it_and_old_builds() {
    let kt = kernel_tree();
    let (base, _) = build_ok(&kt, &kt.cache, &[]);
    let id = base["id"].as_str().unwrap().to_string();
    // A cache of its own: a copy of the base build and a slot, so the shared one is kept.
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    std::fs::create_dir_all(cache.join(".work/slots/0000/src")).unwrap();
    std::fs::write(cache.join(".work/slots/0000/src/obj.o"), vec![0u8; 4096]).unwrap();
    assert!(std::process::Command::new("cp")
        .arg("-a")
        .arg(kt.cache.join(&id))
        .arg(cache.join(&id))
        .status()
        .unwrap()
        .success());
    let builds = |args: &[&str]| {
        run(std_patchbench()
            .args(["builds", "--cache"])
            .arg(&cache)
            .args(args))
    };
    let (code, out, err) = builds(&[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains(&id) && out.contains("work area: "), "{out}");
    // Pruned: the slot goes, the build stays (it is not older than a day).
    let (code, out, err) = builds(&["--prune", "--older-than", "1", "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["pruned"]["slots_removed"], 1, "{doc}");
    assert_eq!(doc["builds"].as_array().unwrap().len(), 1, "{doc}");
    assert!(!cache.join(".work/slots/0000").exists());
    // Older than 0 days: every build goes, taken out of the cache by a rename first.
    let (code, out, err) = builds(&["--prune", "--older-than", "0"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains(&format!("1 build(s): {id}")), "{out}");
    assert!(out.contains("no builds in"), "{out}");
    assert!(builds_in(&cache).is_empty());
    let (code, _, err) = builds(&["--older-than", "3"]);
    assert_eq!(code, Some(2), "--older-than needs --prune: {err}");
}

#[test]
fn include_uncommitted_builds_the_working_trees_edit_and_the_build_names_it() {
    let kt = kernel_tree();
    let shared_before = tree_state(&kt);
    // A checkout of the shared tree's HEAD of its own, whose work tree may be edited: the
    // shared objects through a link (so the cache's repository and build slot are the shared
    // tree's, and the build is incremental there), only kernel/sys.c checked out (sparse).
    let d = tempfile::tempdir().unwrap();
    let user = d.path().join("linux");
    let git =
        |args: &[&str]| common::kernel_tree::run(common::kernel_tree::git(&user).args(args), "git");
    std::fs::create_dir(&user).unwrap();
    git(&["init", "-q", "-b", "main"]);
    std::fs::remove_dir_all(user.join(".git/objects")).unwrap();
    std::os::unix::fs::symlink(kt.tree.join(".git/objects"), user.join(".git/objects")).unwrap();
    git(&["update-ref", "refs/heads/main", &kt.head]);
    git(&["config", "core.sparseCheckout", "true"]);
    std::fs::write(user.join(".git/info/sparse-checkout"), "/kernel/sys.c\n").unwrap();
    git(&["read-tree", "-mu", "HEAD"]);
    // The edit, not committed: getppid returns its parent's pid plus nothing, one line.
    let sys = user.join("kernel/sys.c");
    let text = std::fs::read_to_string(&sys).unwrap();
    let at = text.find("SYSCALL_DEFINE0(getppid)").unwrap();
    let end = at + text[at..].find("\treturn pid;\n").unwrap();
    let edited = format!(
        "{}\treturn pid + 0 * __LINE__; /* uncommitted */\n{}",
        &text[..end],
        &text[end + "\treturn pid;\n".len()..]
    );
    std::fs::write(&sys, &edited).unwrap();
    let status = || {
        let index = std::fs::read(user.join(".git/index")).unwrap();
        let mtime = std::fs::metadata(user.join(".git/index"))
            .unwrap()
            .modified()
            .unwrap();
        // Optional locks off: this `git status` must not refresh the index either.
        let status = common::kernel_tree::run(
            common::kernel_tree::git(&user)
                .env("GIT_OPTIONAL_LOCKS", "0")
                .args(["status", "--porcelain"]),
            "git status",
        );
        (status, index, mtime)
    };
    let before = status();
    assert_eq!(before.0, " M kernel/sys.c\n");
    let short = &kt.head[..12];

    // Without the flag: the warning names the file (a missing --patch then stops the build
    // before anything is built).
    let (code, _, err) = run(&mut build_in(
        &user,
        &kt.cache,
        &["--patch", "/nonexistent/x.diff"],
    ));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "has uncommitted changes, which this build of HEAD ({short}) leaves out"
        )) && err.contains("1 modified: kernel/sys.c")
            && err.contains("give --include-uncommitted"),
        "{err}"
    );
    // With it: the one real build, of HEAD and the edit.
    let started = Instant::now();
    let (code, out, err) = run(&mut build_in(&user, &kt.cache, &["--include-uncommitted"]));
    assert_eq!(code, Some(0), "{err}");
    let b: serde_json::Value = serde_json::from_str(&out).unwrap();
    eprintln!(
        "with the uncommitted edit: {} in {:.0} s ({}; make {:.0} s)",
        b["id"],
        started.elapsed().as_secs_f64(),
        if b["cached"] == true {
            "a cache hit"
        } else if b["incremental"] == true {
            "incremental"
        } else {
            "from scratch"
        },
        b["build_secs"].as_f64().unwrap()
    );
    assert!(!err.contains("warning"), "nothing is left out: {err}");
    assert_eq!(b["base_commit"], kt.head.as_str());
    assert_ne!(
        b["commit"],
        kt.head.as_str(),
        "the edit is a commit on HEAD"
    );
    let patches = b["patches"].as_array().unwrap();
    assert_eq!(patches.len(), 1, "{patches:?}");
    assert_eq!(
        patches[0]["subject"],
        format!("uncommitted changes of linux at {short} (1 file)").as_str()
    );
    assert_eq!(
        patches[0]["file"],
        format!("uncommitted-{short}.diff").as_str()
    );
    assert_eq!(patches[0]["commit"], b["commit"]);
    // The commit built has the edit (in the cache's own repository, never the user's).
    let repos = kt.cache.join(".work/repos");
    let built_sys = std::fs::read_dir(&repos)
        .unwrap()
        .flatten()
        .find_map(|r| {
            let out = common::kernel_tree::git(&r.path())
                .args(["show", &format!("{}:kernel/sys.c", b["commit"].as_str()?)])
                .output()
                .ok()?;
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
        })
        .expect("the built commit is in the cache's repository");
    assert_eq!(built_sys, edited);
    // The cache's list names it too; the user's tree and index are as they were.
    let (code, text, _) = run(std_patchbench().args(["builds", "--cache"]).arg(&kt.cache));
    assert_eq!(code, Some(0));
    assert!(text.contains("HEAD + \"uncommitted changes of"), "{text}");
    assert_eq!(
        status(),
        before,
        "the user's work tree and index are untouched"
    );
    assert_eq!(tree_state(&kt), shared_before);
}
