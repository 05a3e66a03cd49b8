//! The `patchbench` command: parse the command line, run the command, map errors to exit
//! statuses (0 ok, 1 regression or failed workload, 2 bad input or error, 128+N on signal N,
//! 141 when standard output was closed). Every error is one line, with whatever it quotes
//! (a path, a value given, another process's command line) shown escaped
//! (`patchbench::safe_text`).
#![warn(
    clippy::undocumented_unsafe_blocks,
    clippy::unwrap_used,
    clippy::expect_used
)]

use clap::error::{ContextKind, ContextValue};
use clap::Parser;

mod cli;

/// Clap's error with every value it quotes from the command line shown escaped, so an
/// argument with a newline or an escape sequence cannot forge a line or drive the terminal.
fn escaped(mut err: clap::Error) -> clap::Error {
    let quoted: Vec<(ContextKind, ContextValue)> = err
        .context()
        .filter_map(|(kind, value)| match value {
            ContextValue::String(s) => {
                Some((kind, ContextValue::String(patchbench::safe_text::field(s))))
            }
            ContextValue::Strings(v) => Some((
                kind,
                ContextValue::Strings(v.iter().map(|s| patchbench::safe_text::field(s)).collect()),
            )),
            _ => None,
        })
        .collect();
    for (kind, value) in quoted {
        err.insert(kind, value);
    }
    err
}

/// Clap's refusal as one line, as every other error: `patchbench: error: WHAT; tip: ...; see
/// \`patchbench CMD --help\``; help and version requests print as clap prints them.
fn one_line(err: clap::Error) -> ! {
    use clap::error::ErrorKind;
    if matches!(
        err.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        err.exit()
    }
    let text = err.render().to_string();
    let mut what = String::new();
    let mut tips = Vec::new();
    let mut command = String::from("patchbench");
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(e) = line.strip_prefix("error: ") {
            what = e.to_string();
        } else if let Some(t) = line.strip_prefix("tip: ") {
            tips.push(t.to_string());
        } else if let Some(u) = line.strip_prefix("Usage: ") {
            // `patchbench campaign start [OPTIONS] ...`: the command is the words before the
            // first option or argument.
            command = u
                .split_whitespace()
                .take_while(|w| !w.starts_with(['[', '<', '-']))
                .collect::<Vec<_>>()
                .join(" ");
        } else if what.is_empty() {
            what = line.to_string();
        } else if !line.starts_with("For more information") && tips.is_empty() {
            // A continuation of the message (a list of possible values, say).
            what.push(' ');
            what.push_str(line);
        }
    }
    let mut msg = format!("patchbench: error: {what}");
    for t in tips {
        msg.push_str(&format!("; tip: {t}"));
    }
    msg.push_str(&format!("; see `{command} --help`"));
    patchbench::safe_text::eprint_line(&msg);
    std::process::exit(2)
}

/// A failed allocation ends with one line and exit status 2 after cleaning up, not an abort.
#[global_allocator]
static ALLOC: patchbench::out_of_memory::Guard = patchbench::out_of_memory::Guard::LOUD;

/// The main thread's signal stack in static memory, set before Rust's runtime would map one
/// (which aborts under a tight address-space limit).
#[used]
#[link_section = ".init_array"]
static SIGNAL_STACK: extern "C" fn() = patchbench::out_of_memory::install_signal_stack;

fn main() {
    patchbench::private_dir::install_panic_hook();
    patchbench::emergency::install_bus_error_handler();
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => one_line(escaped(err)),
    };
    let status = match cli::execute(cli) {
        Ok(code) => code,
        Err(err) => {
            if !patchbench::error::is_quiet(&err) {
                // One line: the error and its causes, no backtrace.
                let mut msg = err.to_string();
                for cause in err.chain().skip(1) {
                    msg.push_str(": ");
                    msg.push_str(&cause.to_string());
                }
                patchbench::safe_text::eprint_line(&format!("patchbench: error: {msg}"));
            }
            patchbench::error::exit_status(&err)
        }
    };
    std::process::exit(status);
}
