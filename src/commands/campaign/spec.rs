//! What `campaign start` checks and builds before anything is stored or started: the
//! campaign's name, the workload (a measuring command with its own arguments, parsed by that
//! command's clap definition, with the options a step sets itself refused), each side
//! (`IMAGE[:WORDS]`, its initrd and modules, its setup command), the executor's options (a
//! guest's vCPUs, memory and CPU set; `--scratch`), a lab's boxes and tags, and from all of it
//! the [`CampaignSpec`] the store keeps.

use super::args::StartArgs;
use crate::error::{usage, Usage};
use crate::record::campaign::plan;
use crate::record::campaign::spec::{CampaignSpec, ExecutorKind, LabSpec, Schedule, SideSpec};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};

/// The workload, parsed with the measuring commands' own argument definitions.
#[derive(Debug, Parser)]
#[command(name = "patchbench", no_binary_name = true)]
struct Workload {
    #[command(subcommand)]
    command: MeasuringCommand,
}

#[derive(Debug, Subcommand)]
enum MeasuringCommand {
    Run(crate::commands::run::RunArgs),
    Aim7(crate::commands::aim7::Aim7Args),
    Scale(crate::commands::scale::ScaleArgs),
    Model(crate::commands::model::ModelArgs),
    Exec(crate::commands::exec::ExecArgs),
}

/// Clap's complaint as one line: its `error:` line, and when that ends with a colon (`the
/// following required arguments were not provided:`) the indented lines it announces.
fn clap_line(text: &str) -> String {
    let mut lines = text.lines().skip_while(|l| !l.starts_with("error:"));
    let Some(first) = lines.next() else {
        return "invalid arguments".to_string();
    };
    let first = first.trim_start_matches("error: ").trim_end();
    if !first.ends_with(':') {
        return first.to_string();
    }
    let listed: Vec<&str> = lines
        .take_while(|l| l.starts_with(' ') && !l.trim().is_empty())
        .map(str::trim)
        .collect();
    format!("{first} {}", listed.join(", "))
}

/// The workload as checked: whether it keeps perf data, and its words as a step runs them.
#[derive(Debug)]
struct CheckedWorkload {
    keeps_perf_data: bool,
    /// What its runs can record, as far as it is known before one runs.
    catalogue: Catalogue,
    /// The words given, with `--` before an `exec` workload's program where it was left out,
    /// so that the options a step adds (`--json FILE --no-store`, `--dir`) go before it
    /// (`crate::campaign::executor::workload_args`) and never to the program.
    words: Vec<String>,
    /// An `exec` workload's program, as given.
    exec_program: Option<String>,
}

/// What a workload's runs can record, as far as it is known before one runs: the prefixes
/// of its metrics' names (besides the monitor rows every workload records) and the tests it
/// runs (None where they are known only where the step runs: an AIM7 workfile).
#[derive(Debug)]
struct Catalogue {
    prefixes: Vec<String>,
    tests: Option<Vec<String>>,
}

/// Checks `--primary KEY` (`name` or `name[param=value,...]`, as `show` lists keys) against the
/// workload's catalogue, before any build or step: a metric its kind records or a monitor
/// row, and a `test=` among the tests it runs.
fn check_primary(key: &str, catalogue: &Catalogue, words: &[String]) -> anyhow::Result<()> {
    let workload = crate::safe_text::field(&words.join(" "));
    let (name, params) = match key.split_once('[') {
        Some((name, rest)) => match rest.strip_suffix(']') {
            Some(params) => (name, params),
            None => {
                return usage(format!(
                    "--primary {:?}: a metric key is NAME or NAME[param=value,...], as \
                     `patchbench show RUN` lists them",
                    crate::safe_text::field(key)
                ))
            }
        },
        None => (key, ""),
    };
    let known = crate::record::monitors::is_monitor(name)
        || catalogue
            .prefixes
            .iter()
            .any(|p| name.starts_with(p.as_str()));
    if name.is_empty() || !known {
        return usage(format!(
            "--primary {:?}: `{workload}` records no metric named {:?}; its metrics start \
             with {} (or are monitor rows); `patchbench show RUN` lists a run's keys",
            crate::safe_text::field(key),
            crate::safe_text::field(name),
            catalogue.prefixes.join(", ")
        ));
    }
    let test = params
        .split(',')
        .filter_map(|p| p.split_once('='))
        .find(|(k, _)| *k == "test")
        .map(|(_, v)| v);
    if let (Some(test), Some(tests)) = (test, &catalogue.tests) {
        if !tests.iter().any(|t| t == test) {
            return usage(format!(
                "--primary {:?}: `{workload}` runs no test {:?} (it runs {})",
                crate::safe_text::field(key),
                crate::safe_text::field(test),
                tests.join(", ")
            ));
        }
    }
    Ok(())
}

/// Checks the workload: a measuring command with valid arguments and test names (run's
/// tests, aim7's without a workfile, scale's testcases, model's model and variants, exec's
/// program on PATH and its patterns), none of the options the campaign sets itself, and no
/// `--dir` together with `--scratch`. Says whether it keeps perf data (`--profile-data`),
/// which only a step on this machine or a kexec box can keep.
fn check_workload(words: &[String], scratch: bool) -> anyhow::Result<CheckedWorkload> {
    const MEASURING: [&str; 5] = ["run", "aim7", "scale", "model", "exec"];
    let first = words.first().map(String::as_str).unwrap_or("");
    if !MEASURING.contains(&first) {
        return usage(format!(
            "the workload after `--` must be a measuring command (run, aim7, scale, model or \
             exec) with its arguments, got {:?}",
            crate::safe_text::field(first)
        ));
    }
    let parsed = Workload::try_parse_from(words).map_err(|e| {
        Usage(format!(
            "the workload's arguments: {}",
            clap_line(&e.to_string())
        ))
    })?;
    struct Sets<'a> {
        output: &'a crate::commands::shared::OutputOpts,
        other_file: Option<&'static str>,
        store: &'a crate::commands::shared::StoreOpts,
        dir: bool,
        list: bool,
        catalogue: Catalogue,
    }
    let prefixes = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let sets = match &parsed.command {
        MeasuringCommand::Run(r) => {
            let plan = crate::commands::run::plan(r)?;
            Sets {
                output: &r.output,
                other_file: r.csv.as_ref().map(|_| "--csv"),
                store: &r.store,
                dir: r.dir.dir.is_some(),
                list: false,
                catalogue: Catalogue {
                    prefixes: prefixes(&["unixbench."]),
                    tests: Some(plan.tests.iter().map(|t| t.id.to_string()).collect()),
                },
            }
        }
        MeasuringCommand::Aim7(a) => {
            // The tests' names now, before any build or step; a workfile is read where the
            // step runs (it may be the step's machine's own file).
            let tests = match &a.workfile {
                None => Some(
                    crate::aim7::resolve_mixes(None, &a.tests)?
                        .into_iter()
                        .map(|m| m.name)
                        .collect(),
                ),
                Some(_) => None,
            };
            Sets {
                output: &a.output,
                other_file: None,
                store: &a.store,
                dir: !a.dirs.is_empty(),
                list: false,
                catalogue: Catalogue {
                    prefixes: prefixes(&["aim7."]),
                    tests,
                },
            }
        }
        MeasuringCommand::Scale(s) => {
            let tests = if s.list {
                Vec::new()
            } else {
                crate::commands::scale::resolve(&s.tests)?
                    .iter()
                    .map(|t| t.name.to_string())
                    .collect()
            };
            Sets {
                output: &s.opts.output,
                other_file: s
                    .csv
                    .as_ref()
                    .map(|_| "--csv")
                    .or(s.svg.as_ref().map(|_| "--svg")),
                store: &s.opts.store,
                dir: s.opts.dir.dir.is_some(),
                list: s.list,
                catalogue: Catalogue {
                    prefixes: prefixes(&["will-it-scale."]),
                    tests: Some(tests),
                },
            }
        }
        MeasuringCommand::Exec(e) => {
            crate::commands::exec::check(e)?;
            // exec's own rows, and its reader's, named after the program (stress-ng.*,
            // hackbench.*, perf-bench.*, fio.*).
            let base = crate::exec::tool::basename(e.command.first().map_or("", String::as_str));
            Sets {
                output: &e.output,
                other_file: None,
                store: &e.store,
                dir: e.dir.dir.is_some(),
                list: false,
                catalogue: Catalogue {
                    prefixes: vec!["exec.".to_string(), format!("{base}."), format!("{base}-")],
                    tests: None,
                },
            }
        }
        MeasuringCommand::Model(m) => {
            if !m.list {
                crate::commands::model::check(m)?;
            }
            Sets {
                output: &m.opts.output,
                other_file: None,
                store: &m.opts.store,
                dir: m.opts.dir.dir.is_some(),
                list: m.list,
                catalogue: Catalogue {
                    prefixes: prefixes(&["model."]),
                    tests: None,
                },
            }
        }
    };
    let refused = if let Some(o) = sets.output.given() {
        Some(o)
    } else if sets.store.store.is_some() {
        Some("--store")
    } else if sets.store.no_store {
        Some("--no-store")
    } else if sets.store.label.is_some() {
        Some("--label")
    } else {
        sets.other_file
    };
    if let Some(opt) = refused {
        return usage(format!(
            "the workload must not have {opt}: the campaign writes each step's JSON and stores \
             its run under NAME/base or NAME/patched itself; drop {opt}"
        ));
    }
    if sets.list {
        return usage("the workload must measure something; drop --list");
    }
    if sets.dir && scratch {
        return usage(
            "the workload's --dir and --scratch both say where the workload works; drop one",
        );
    }
    let mut words = words.to_vec();
    if let MeasuringCommand::Exec(e) = &parsed.command {
        // The program is the last `command.len()` words; `--` goes before it if missing.
        let at = words.len().saturating_sub(e.command.len());
        if at == 0 || words[at - 1] != "--" {
            words.insert(at, "--".to_string());
        }
    }
    let exec_program = match &parsed.command {
        MeasuringCommand::Exec(e) => e.command.first().cloned(),
        _ => None,
    };
    Ok(CheckedWorkload {
        keeps_perf_data: sets.output.profile_data.is_some(),
        catalogue: sets.catalogue,
        words,
        exec_program,
    })
}

/// `IMAGE[:WORDS]` or `:WORDS`: the image (None: the running kernel's) and the words.
fn split_side(s: &str) -> (Option<PathBuf>, Vec<String>) {
    if Path::new(s).is_file() {
        return (Some(PathBuf::from(s)), Vec::new());
    }
    let (image, words) = match s.split_once(':') {
        Some((i, w)) => (i, w),
        None => (s, ""),
    };
    let image = (!image.is_empty()).then(|| PathBuf::from(image));
    (
        image,
        words.split_whitespace().map(str::to_string).collect(),
    )
}

/// Builds and checks one side. With `tree`, `given` is `REF[:WORDS]` and the kernel is
/// built later (`super::campaign_build`).
fn side(
    name: &str,
    given: Option<&str>,
    initrd: Option<&Path>,
    modules: Option<&Path>,
    setup: Option<&str>,
    executor: ExecutorKind,
    tree: bool,
) -> anyhow::Result<SideSpec> {
    if tree {
        if modules.is_some() {
            return usage(format!(
                "--{name}-modules: with --tree the build gives the {name} side's modules; drop it"
            ));
        }
        if let Some(i) = initrd.filter(|i| *i != Path::new("none")) {
            std::fs::File::open(i).map_err(|e| {
                Usage(format!(
                    "cannot read the {name} initrd {}: {e}",
                    i.display()
                ))
            })?;
        }
        let (_, words) = super::build::split_ref(given.unwrap_or("HEAD"));
        check_setup(name, setup)?;
        return Ok(SideSpec {
            name: name.to_string(),
            kernel: None,
            cmdline: words,
            setup: setup.map(str::to_string),
            build: None,
        });
    }
    let (image, cmdline) = given.map(split_side).unwrap_or((None, Vec::new()));
    // The local executor takes no side kernel: `crate::campaign::supports` said so already.
    let boots = executor != ExecutorKind::Local;
    let kernel = if boots {
        let image = match image {
            Some(i) => i,
            None => crate::campaign::side_kernel::running_image().map_err(|e| {
                Usage(format!(
                    "a side without an image boots the running kernel, but {e}; give the image \
                     (--{name} IMAGE:WORDS)"
                ))
            })?,
        };
        Some(
            crate::campaign::side_kernel::of_image(&image, initrd, modules)
                .map_err(|e| Usage(format!("the {name} side: {e}")))?,
        )
    } else {
        None
    };
    check_setup(name, setup)?;
    Ok(SideSpec {
        name: name.to_string(),
        kernel,
        cmdline,
        setup: setup.map(str::to_string),
        build: None,
    })
}

/// A setup command must say something.
fn check_setup(name: &str, setup: Option<&str>) -> anyhow::Result<()> {
    if let Some(s) = setup {
        if s.trim().is_empty() {
            return usage(format!(
                "--{name}-setup is empty; give a shell command or drop it"
            ));
        }
    }
    Ok(())
}

/// Builds the spec from the arguments, checking everything that can be checked here.
pub fn spec(a: &StartArgs) -> anyhow::Result<CampaignSpec> {
    crate::campaign::check_name("campaign", &a.name, crate::campaign::NAME_MAX)?;
    let checked = check_workload(&a.workload, a.steps.scratch.is_some())?;
    if let Some(key) = &a.steps.primary {
        check_primary(key, &checked.catalogue, &a.workload)?;
    }
    let keeps_perf_data = checked.keeps_perf_data;
    let s = &a.sides;
    let tree = a.steps.tree.is_some();
    let boots = s.base.is_some() || s.patched.is_some() || tree;
    let executor = a
        .steps
        .executor
        .unwrap_or_else(|| crate::campaign::default_executor(boots));
    let lab = (a.lab.boxes.is_some() || !a.lab.tags.is_empty()).then(|| LabSpec {
        boxes: a.lab.boxes.unwrap_or(1),
        tags: a.lab.tags.clone(),
    });
    let side_kernel = [
        ("base", &s.base, &s.base_initrd, &s.base_modules),
        ("patched", &s.patched, &s.patched_initrd, &s.patched_modules),
    ]
    .into_iter()
    .find(|(_, given, initrd, modules)| {
        let (image, words) = given.as_deref().map(split_side).unwrap_or_default();
        image.is_some() || !words.is_empty() || initrd.is_some() || modules.is_some()
    })
    .map(|(name, ..)| name);
    let asks = crate::campaign::Asks {
        built_kernels: tree,
        side_kernel: side_kernel.filter(|_| !tree),
        duet: a.steps.duet,
        agents: lab.is_some(),
        scratch: a.steps.scratch.is_some(),
        perf_data_files: keeps_perf_data,
    };
    crate::campaign::supports(executor, &asks).map_err(Usage)?;
    let program = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("cannot find the patchbench program itself: {e}"))?;
    if let (Some(tool), ExecutorKind::Vm | ExecutorKind::Kexec) = (&checked.exec_program, executor)
    {
        // The step looks for the tool elsewhere than this shell: found late, after a build and
        // a boot, unless checked now.
        let own = program.canonicalize().ok();
        let own = own.as_deref().and_then(Path::parent);
        crate::exec::tool::check_for_step(tool, executor == ExecutorKind::Vm, own)
            .map_err(Usage)?;
    }
    let sides = vec![
        side(
            "base",
            s.base.as_deref(),
            s.base_initrd.as_deref(),
            s.base_modules.as_deref(),
            s.base_setup.as_deref(),
            executor,
            tree,
        )?,
        side(
            "patched",
            s.patched.as_deref(),
            s.patched_initrd.as_deref(),
            s.patched_modules.as_deref(),
            s.patched_setup.as_deref(),
            executor,
            tree,
        )?,
    ];
    let schedule = match a.steps.until {
        Some(pct) => Schedule::Until {
            pct,
            max_rounds: a.steps.max_rounds,
            max_time_s: a.steps.max_time,
        },
        None => Schedule::Rounds {
            rounds: a
                .steps
                .rounds
                .unwrap_or(crate::campaign::primary::fewest_rounds(a.steps.confidence)),
        },
    };
    let vm = if executor == ExecutorKind::Vm {
        let cpus = match a.steps.cpus.as_deref() {
            Some(list) => Some(parse_cpu_list(list).map_err(Usage)?),
            None => None,
        };
        let given = crate::campaign::vm::options::Given {
            vcpus: a.steps.vcpus,
            memory_mib: Some(a.steps.memory),
            cpus,
            allow_tcg: a.steps.allow_tcg,
            qemu: Some(a.steps.qemu.clone()),
            duet: a.steps.duet,
        };
        Some(crate::campaign::vm::options::resolve(&given).map_err(Usage)?)
    } else {
        None
    };
    Ok(CampaignSpec {
        name: a.name.clone(),
        sides,
        workload: checked.words,
        schedule,
        order: a.steps.order,
        seed: a.steps.seed.unwrap_or_else(plan::new_seed),
        executor,
        duet: a.steps.duet,
        scratch: a.steps.scratch.clone(),
        vm,
        kexec: None,
        lab,
        step_timeout_s: a.steps.step_timeout,
        settle_s: a.steps.settle,
        primary: a.steps.primary.clone(),
        confidence: a.steps.confidence,
        program,
        started_on: crate::sysinfo::hostname(),
        build: None,
    })
}

/// `0-3,6` as CPU numbers.
fn parse_cpu_list(s: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let num = |t: &str| {
            t.trim()
                .parse::<u32>()
                .map_err(|_| format!("--cpus {s:?}: {t:?} is not a CPU number (e.g. 2-5)"))
        };
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(part)?, num(part)?),
        };
        if lo > hi || hi >= 4096 {
            return Err(format!("--cpus {s:?}: {part:?} is not a CPU range"));
        }
        out.extend(lo..=hi);
    }
    out.sort_unstable();
    out.dedup();
    if out.is_empty() {
        return Err("--cpus names no CPU (e.g. --cpus 2-5)".to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_cpu_list("0-2,5").unwrap(), vec![0, 1, 2, 5]);
        assert!(parse_cpu_list("3-1").is_err() && parse_cpu_list("x").is_err());
    }

    #[test]
    fn sides_split_image_and_words() {
        assert_eq!(
            split_side(":pti=off quiet"),
            (None, vec!["pti=off".to_string(), "quiet".to_string()])
        );
        assert_eq!(
            split_side("/nonexistent/vmlinuz:pti=on"),
            (
                Some(PathBuf::from("/nonexistent/vmlinuz")),
                vec!["pti=on".to_string()]
            )
        );
    }

    #[test]
    fn the_primary_key_is_checked_against_the_workload() {
        let w = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        let check = |work: &str, key: &str| {
            let c = check_workload(&w(work), false).unwrap();
            check_primary(key, &c.catalogue, &w(work)).map_err(|e| e.to_string())
        };
        for (work, key) in [
            (
                "run --quick syscall",
                "unixbench.score[copies=1,test=syscall]",
            ),
            ("run --quick syscall", "unixbench.index[copies=1]"),
            ("run --quick syscall", "vmstat.system.cs"),
            (
                "scale getppid1",
                "will-it-scale.per_process_ops[mode=processes,tasks=1,test=getppid1]",
            ),
            ("aim7 creat-clo", "aim7.jobs-per-min[load=2,test=creat-clo]"),
            ("exec -- sh -c true", "exec.wall_time"),
        ] {
            assert!(
                check(work, key).is_ok(),
                "{work} {key}: {:?}",
                check(work, key)
            );
        }
        for (work, key, says) in [
            (
                "run --quick syscall",
                "no.such.metric",
                "records no metric named",
            ),
            (
                "run --quick syscall",
                "unixbench.score[copies=1,test=pipe]",
                "runs no test \"pipe\"",
            ),
            (
                "scale getppid1",
                "aim7.jobs-per-min",
                "records no metric named",
            ),
            (
                "scale getppid1",
                "will-it-scale.per_process_ops[test=open1]",
                "runs no test",
            ),
            (
                "run --quick syscall",
                "unixbench.score[copies=1",
                "NAME[param=value",
            ),
            (
                "exec -- sh -c true",
                "stress-ng.get.ops_per_sec",
                "records no metric named",
            ),
        ] {
            let e = check(work, key).unwrap_err();
            assert!(e.contains(says), "{work} {key}: {e}");
        }
    }

    #[test]
    fn names_are_checked() {
        let campaign_name =
            |n: &str| crate::campaign::check_name("campaign", n, crate::campaign::NAME_MAX);
        assert!(campaign_name("pti-test_1.2").is_ok());
        for bad in ["", "-x", ".x", "a/b", "a b", "a\nb", &"x".repeat(65)] {
            assert!(campaign_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn clap_complaints_become_one_whole_line() {
        let text = "error: the following required arguments were not provided:\n  \
                    --profile\n  --other\n\nUsage: patchbench run --profile\n";
        assert_eq!(
            clap_line(text),
            "the following required arguments were not provided: --profile, --other"
        );
        assert_eq!(
            clap_line("error: unexpected argument '--x' found\n\n  tip: ...\n"),
            "unexpected argument '--x' found"
        );
        let e = check_workload(
            &["run", "syscall", "--profile-data", "/tmp/p"].map(str::to_string),
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("were not provided: --profile"), "{e}");
    }

    #[test]
    fn workloads_are_checked() {
        let w = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert!(check_workload(&w("run --quick syscall"), false).is_ok());
        for good in [
            "scale getppid1",
            "aim7 creat-clo",
            "aim7 --workfile /nowhere/on/this/host",
            "model isize",
            "exec -- sh -c true",
            "exec --runs 2 sh -c true",
        ] {
            assert!(check_workload(&w(good), false).is_ok(), "{good}");
        }
        for (bad, why) in [
            ("list", "measuring command"),
            ("compare a b", "measuring command"),
            ("run --quick syscall --json x.json", "--json"),
            ("run --quick syscall --label x", "--label"),
            ("run --quick syscall --no-store", "--no-store"),
            ("run --quick nosuchtest", "nosuchtest"),
            ("run --copies 0", "workload's arguments"),
            ("scale --list", "--list"),
            ("scale nosuch_test", "unknown testcase \"nosuch_test\""),
            ("aim7 nosuch", "unknown AIM7 test \"nosuch\""),
            ("model nosuch-model", "unknown model \"nosuch-model\""),
            ("model setbit --variants bogus", "unknown variant \"bogus\""),
            ("exec -- stress-ng-not-here", "not found on PATH"),
            ("exec --label x -- sh -c true", "--label"),
            ("exec --metric nopattern -- sh", "give NAME"),
        ] {
            let e = check_workload(&w(bad), false).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
        // The step's own options go before an exec workload's program.
        let c = check_workload(&w("exec --runs 2 sh -c true"), false).unwrap();
        assert_eq!(c.words, w("exec --runs 2 -- sh -c true"));
        let c = check_workload(&w("exec -- sh -c --"), false).unwrap();
        assert_eq!(c.words, w("exec -- sh -c --"));
        let e = check_workload(&w("run --quick syscall --dir /tmp"), true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--scratch"), "{e}");
    }
}
