//! The `patchbench` command: parse the command line, run the command, map errors to exit
//! statuses (0 ok, 1 regression or failed workload, 2 bad input or error, 128+N on signal N,
//! 141 when standard output was closed). Every error is one line, with whatever it quotes
//! (a path, a value given, another process's command line) shown escaped
//! (`patchbench::safe_text`).

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
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => escaped(err).exit(),
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
