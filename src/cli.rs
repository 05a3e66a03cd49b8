//! The command line: the clap definition of every subcommand and the dispatch to the command
//! that implements it. Nothing else: each command's arguments live with the command in
//! `crate::commands`, and nothing imports from this module but `main.rs`. The completion
//! scripts and man pages are generated from this definition (`patchbench completions`,
//! `patchbench man`).

use clap::{CommandFactory, Parser, Subcommand};
use patchbench::commands::{
    agent, aim7, bisect, build, calibrate, campaign, check, compare, completions, debug_writer,
    exec, import, list, model, push, run, scale, store,
};
use patchbench::report::color::{self, ColorChoice};

/// patchbench: did my change make the operating system faster or slower, and is that real?
///
/// Runs faithful re-implementations of UnixBench, AIM7 and will-it-scale workloads at 1..N
/// parallel copies, keeps every sample with a fingerprint of the system, and compares a base
/// run with a patched one statistically.
#[derive(Debug, Parser)]
#[command(name = "patchbench", version, about, long_about = None, max_term_width = 100)]
pub struct Cli {
    /// Colour the verdicts on a terminal: auto (when standard output is a terminal and
    /// NO_COLOR is not set), always, never.
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "WHEN",
        default_value = "auto"
    )]
    pub color: ColorChoice,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the UnixBench System Benchmarks Index (or selected tests) at 1..N copies.
    Run(run::RunArgs),
    /// List every test with its report name, unit, baseline, time divisor and description.
    List(list::ListArgs),
    /// Run AIM7 jobs (creat-clo, disk_*, …) at a load of N tasks and report jobs/min.
    Aim7(aim7::Aim7Args),
    /// Run will-it-scale testcases at 1..N tasks, as processes and/or threads.
    Scale(scale::ScaleArgs),
    /// Run a user-space model of a kernel mechanism (model-setbit, model-isize).
    Model(model::ModelArgs),
    /// Run a program we did not write (stress-ng, or any command) and keep its wall time and
    /// what its output says, as a run: `patchbench exec -- stress-ng --get 1 --timeout 5`.
    Exec(exec::ExecArgs),
    /// Check the machine for noise before measuring; exit status 1 if anything warns.
    Check(check::CheckArgs),
    /// List the stored runs: id, label, date, host, kernel, tests.
    Runs(store::RunsArgs),
    /// Show one stored run: its system, settings and every metric.
    Show(store::ShowArgs),
    /// Write one stored run as JSON (the `--json` document) or CSV (one row per metric).
    Export(store::ExportArgs),
    /// Delete stored runs.
    Rm(store::RmArgs),
    /// Store results from files: UnixBench reports/logs, AIM7 multitask output,
    /// will-it-scale CSV, patchbench JSON. Several files are several runs of one side.
    Import(import::ImportArgs),
    /// Copy this box's runs into a lab's shared store (postgres://...), each run once:
    /// pushing again stores nothing twice and finishes a push that was cut short.
    Push(push::PushArgs),
    /// Compare base with patched, per metric: runs, means, spreads, the interval of the change,
    /// p and q, a verdict, and the runs needed to see 1 % and 2 %.
    Compare(compare::CompareArgs),
    /// How often compare flags a row on this box with one kernel on both sides, from your own
    /// A/A runs (a campaign or a label), and the smallest change it can detect.
    Calibrate(calibrate::CalibrateArgs),
    /// Build a kernel from a git tree, a ref and patches (mbox or diff), or find it in the
    /// cache: one config for every build, fairness options pinned; prints its id and files.
    Build(build::BuildArgs),
    /// List the build cache: id, commit, patches, config, release, size, age.
    Builds(build::BuildsArgs),
    /// Campaigns: base and patched kernels (or settings) measured in alternating rounds,
    /// booted for you, until the answer is precise enough (start, status, resume, report, stop;
    /// install-hook and remove-hook for kexec, release-box for a lab).
    Campaign(campaign::CampaignArgs),
    /// Find the commit between a good and a bad kernel that changed a metric, with a paired
    /// campaign of kernels built from the tree at every step (start, status, resume, report,
    /// stop).
    Bisect(bisect::BisectArgs),
    /// A lab box's worker: claims steps of lab campaigns (`campaign start --boxes N`) from
    /// a shared store, runs them and stores their runs, until stopped.
    Agent(agent::AgentArgs),
    /// Print the completion script for a shell (bash, zsh, fish, elvish, powershell).
    Completions(completions::CompletionsArgs),
    /// Print the man page (or write one per command with --dir).
    Man(completions::ManArgs),
    /// Testing aid (hidden): saves a synthetic run slowly through the run sink.
    #[command(hide = true, name = "debug-slow-writer")]
    DebugSlowWriter(debug_writer::DebugArgs),
    /// Testing aid (hidden): holds the store's write lock for a while.
    #[command(hide = true, name = "debug-hold-lock")]
    DebugHoldLock(debug_writer::HoldLockArgs),
}

/// Runs the parsed command; returns the process exit status.
pub fn execute(cli: Cli) -> anyhow::Result<i32> {
    color::init(cli.color);
    match cli.command {
        Command::Run(a) => run::execute(&a),
        Command::List(a) => list::execute(&a),
        Command::Aim7(a) => aim7::execute(&a),
        Command::Scale(a) => scale::execute(&a),
        Command::Model(a) => model::execute(&a),
        Command::Exec(a) => exec::execute(&a),
        Command::Check(a) => check::execute(&a),
        Command::Runs(a) => store::runs(&a),
        Command::Show(a) => store::show(&a),
        Command::Export(a) => store::export(&a),
        Command::Rm(a) => store::rm(&a),
        Command::Import(a) => import::execute(&a),
        Command::Push(a) => push::execute(&a),
        Command::Compare(a) => compare::execute(&a),
        Command::Calibrate(a) => calibrate::execute(&a),
        Command::Build(a) => build::build(&a),
        Command::Builds(a) => build::builds(&a),
        Command::Campaign(a) => campaign::execute(&a),
        Command::Bisect(a) => bisect::execute(&a),
        Command::Agent(a) => agent::execute(&a),
        Command::Completions(a) => completions::completions(&a, Cli::command()),
        Command::Man(a) => completions::man(&a, Cli::command()),
        Command::DebugSlowWriter(a) => debug_writer::slow_writer(&a),
        Command::DebugHoldLock(a) => debug_writer::hold_lock(&a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every visible subcommand, at every depth, by its name (`run`, `help`, …).
    fn subcommands(cmd: &clap::Command, out: &mut Vec<String>) {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            out.push(sub.get_name().to_string());
            subcommands(sub, out);
        }
    }

    /// The visible subcommands of the top level only.
    fn top_level(cmd: &clap::Command) -> Vec<String> {
        cmd.get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(|s| s.get_name().to_string())
            .collect()
    }

    #[test]
    fn the_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn the_bash_script_mentions_every_subcommand() {
        let mut cmd = Cli::command();
        let mut names = Vec::new();
        subcommands(&cmd, &mut names);
        assert!(names.len() >= 14, "{names:?}");
        let mut script = Vec::new();
        clap_complete::generate(
            clap_complete::Shell::Bash,
            &mut cmd,
            "patchbench",
            &mut script,
        );
        let script = String::from_utf8(script).unwrap();
        // The top level offers each name as a word of its `opts` list.
        let top = script
            .lines()
            .find(|l| l.trim_start().starts_with("opts=\"") && l.contains(" run "))
            .expect("the top-level word list");
        for name in &top_level(&Cli::command()) {
            assert!(
                top.split(['"', ' ']).any(|w| w == name),
                "{name} is not offered at the top level: {top}"
            );
        }
        // Nested subcommands (campaign start, ...) are offered somewhere in the script.
        for name in &names {
            assert!(
                script.split(['"', ' ']).any(|w| w == name),
                "{name} is not offered"
            );
        }
        for shell in [clap_complete::Shell::Zsh, clap_complete::Shell::Fish] {
            let mut s = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "patchbench", &mut s);
            let s = String::from_utf8(s).unwrap();
            for name in &names {
                assert!(s.contains(name.as_str()), "{shell}: {name} missing");
            }
        }
    }

    #[test]
    fn the_man_page_lists_every_visible_subcommand() {
        let mut page = Vec::new();
        clap_mangen::Man::new(Cli::command())
            .render(&mut page)
            .unwrap();
        let page = String::from_utf8(page).unwrap();
        for name in top_level(&Cli::command()) {
            assert!(
                page.contains(&format!("patchbench\\-{}", name.replace('-', "\\-"))),
                "{name}"
            );
        }
    }
}
