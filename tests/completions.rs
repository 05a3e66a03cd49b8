//! Completions and man pages from the real binary: the bash script, sourced in a real bash,
//! completes `patchbench ru<TAB>` to `run` and `runs` and an option's values; zsh and fish
//! scripts are written; `patchbench man` prints a page and `--dir` writes one per command.
//! (That the script names every subcommand, walking the clap definition, is a unit test in
//! src/cli.rs, where the definition lives.)

mod common;

use std::path::Path;

/// The words bash's completion function `_patchbench` offers for `words`, the last being
/// the one under the cursor.
fn complete(script: &Path, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let cword = words.len() - 1;
    let prev = if cword > 0 { words[cword - 1] } else { "" };
    let program = format!(
        "source '{}'\n\
         COMP_WORDS=({})\n\
         COMP_CWORD={cword}\n\
         COMP_LINE=\"${{COMP_WORDS[*]}}\"\n\
         COMP_POINT=${{#COMP_LINE}}\n\
         _patchbench patchbench '{}' '{prev}'\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display(),
        quoted.join(" "),
        words[cword]
    );
    let out = std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_ru_to_run_and_runs() {
    let out = common::patchbench()
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("patchbench.bash");
    std::fs::write(&script, &out.stdout).unwrap();
    assert_eq!(
        complete(&script, &["patchbench", "ru"]),
        vec!["run", "runs"]
    );
    assert_eq!(
        complete(&script, &["patchbench", "comp"]),
        vec!["compare", "completions"]
    );
    let formats = complete(
        &script,
        &["patchbench", "compare", "a", "b", "--format", ""],
    );
    for f in ["unixbench", "lkp", "markdown", "json", "html"] {
        assert!(
            formats.iter().any(|w| w == f),
            "{f} not offered: {formats:?}"
        );
    }
    assert_eq!(
        complete(&script, &["patchbench", "run", "--col"]),
        vec!["--color"],
        "the global option is offered under a subcommand"
    );
}

#[test]
fn zsh_and_fish_scripts_and_man_pages() {
    for (shell, marker) in [
        ("zsh", "#compdef patchbench"),
        ("fish", "complete -c patchbench"),
    ] {
        let out = common::patchbench()
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(marker), "{shell}");
        assert!(text.contains("compare") && text.contains("runs"), "{shell}");
    }
    let out = common::patchbench().arg("man").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH patchbench 1"), "{}", &page[..200]);
    let dir = tempfile::tempdir().unwrap();
    let out = common::patchbench()
        .args(["man", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let pages = common::entries(dir.path());
    for p in [
        "patchbench.1",
        "patchbench-run.1",
        "patchbench-compare.1",
        "patchbench-man.1",
    ] {
        assert!(pages.iter().any(|x| x == p), "{p} not in {pages:?}");
    }
    assert!(
        !pages.iter().any(|p| p.contains("debug")),
        "hidden commands have no page"
    );
    let run = std::fs::read_to_string(dir.path().join("patchbench-run.1")).unwrap();
    assert!(run.contains("\\-\\-html"), "the run page has its options");
    let bad = common::patchbench()
        .args(["man", "--dir", "/nonexistent-dir"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}
