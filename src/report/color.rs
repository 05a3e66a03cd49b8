//! Colour on the terminal: `--color auto|always|never` (the CLI's global option), decided
//! once per process by [`init`].
//!
//! `auto` colours only when standard output is a terminal, `NO_COLOR` is unset or empty
//! (no-color.org: any non-empty value disables) and `TERM` is not `dumb`; `CLICOLOR_FORCE`
//! (non-empty, not `0`) colours a pipe as well, unless `NO_COLOR` says otherwise. `always`
//! and `never` override the environment. Files written with `--json`, `--csv`, `--html`,
//! `export -o` are never coloured: only what goes to standard output asks [`enabled`].
//!
//! Colouring only wraps words that are already in the text (verdicts, `warn`), so the text
//! without colour is byte for byte what it was before colour existed.

use crate::compare::verdict::Verdict;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

/// `--color`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when standard output is a terminal and NO_COLOR is not set.
    #[default]
    Auto,
    Always,
    Never,
}

static ON: AtomicBool = AtomicBool::new(false);

/// The environment variables the decision reads.
#[derive(Debug, Clone, Default)]
pub struct Env {
    pub no_color: Option<String>,
    pub clicolor_force: Option<String>,
    pub term: Option<String>,
}

impl Env {
    pub fn read() -> Env {
        let var = |k: &str| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned());
        Env {
            no_color: var("NO_COLOR"),
            clicolor_force: var("CLICOLOR_FORCE"),
            term: var("TERM"),
        }
    }
}

/// Whether to colour standard output.
pub fn decide(choice: ColorChoice, env: &Env, stdout_is_terminal: bool) -> bool {
    let set = |v: &Option<String>| v.as_deref().is_some_and(|s| !s.is_empty());
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto if set(&env.no_color) => false,
        ColorChoice::Auto
            if set(&env.clicolor_force) && env.clicolor_force.as_deref() != Some("0") =>
        {
            true
        }
        ColorChoice::Auto => stdout_is_terminal && env.term.as_deref() != Some("dumb"),
    }
}

/// Decides for this process from `choice`, the environment and standard output.
pub fn init(choice: ColorChoice) {
    let on = decide(choice, &Env::read(), std::io::stdout().is_terminal());
    ON.store(on, Ordering::Relaxed);
}

/// Whether standard output is coloured.
pub fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

/// The colours used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paint {
    Red,
    Green,
    Yellow,
    Dim,
}

impl Paint {
    fn sgr(self) -> &'static str {
        match self {
            Paint::Red => "31",
            Paint::Green => "32",
            Paint::Yellow => "33",
            Paint::Dim => "2",
        }
    }
}

/// `text` in `paint` (ANSI SGR), or as it is with `None`.
pub fn paint(text: &str, paint: Option<Paint>) -> String {
    match paint {
        Some(p) => format!("\x1b[{}m{text}\x1b[0m", p.sgr()),
        None => text.to_string(),
    }
}

/// A verdict's colour: regressed red, improved green, inconclusive, no verdict and too few dim,
/// bimodal and drifting yellow (look at the runs), no change and not flagged plain.
pub fn of_verdict(v: Verdict) -> Option<Paint> {
    match v {
        Verdict::Regressed => Some(Paint::Red),
        Verdict::Improved => Some(Paint::Green),
        Verdict::Inconclusive | Verdict::NoVerdict | Verdict::TooFew => Some(Paint::Dim),
        Verdict::Bimodal | Verdict::Drifting => Some(Paint::Yellow),
        Verdict::NoChange | Verdict::NotFlagged => None,
    }
}

/// Removes ANSI SGR sequences (`ESC [ … m`): what a coloured text reads as without colour.
pub fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("\x1b[") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        match after.find('m') {
            Some(j) if after[..j].bytes().all(|b| b.is_ascii_digit() || b == b';') => {
                rest = &after[j + 1..];
            }
            _ => {
                out.push_str("\x1b[");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(no_color: Option<&str>, force: Option<&str>, term: Option<&str>) -> Env {
        Env {
            no_color: no_color.map(str::to_string),
            clicolor_force: force.map(str::to_string),
            term: term.map(str::to_string),
        }
    }

    #[test]
    fn auto_colours_a_terminal_only_and_no_color_wins() {
        let plain = env(None, None, Some("xterm-256color"));
        assert!(decide(ColorChoice::Auto, &plain, true));
        assert!(!decide(ColorChoice::Auto, &plain, false), "a pipe");
        assert!(!decide(
            ColorChoice::Auto,
            &env(Some("1"), None, None),
            true
        ));
        assert!(
            !decide(ColorChoice::Auto, &env(Some("false"), None, None), true),
            "any non-empty value disables"
        );
        assert!(
            decide(ColorChoice::Auto, &env(Some(""), None, None), true),
            "an empty NO_COLOR is unset"
        );
        assert!(!decide(
            ColorChoice::Auto,
            &env(None, None, Some("dumb")),
            true
        ));
        assert!(decide(
            ColorChoice::Auto,
            &env(None, Some("1"), None),
            false
        ));
        assert!(!decide(
            ColorChoice::Auto,
            &env(None, Some("0"), None),
            false
        ));
        assert!(!decide(
            ColorChoice::Auto,
            &env(Some("1"), Some("1"), None),
            true
        ));
        assert!(decide(
            ColorChoice::Always,
            &env(Some("1"), None, None),
            false
        ));
        assert!(!decide(ColorChoice::Never, &plain, true));
    }

    #[test]
    fn painting_wraps_and_strip_undoes_it() {
        let red = paint("regressed", of_verdict(Verdict::Regressed));
        assert_eq!(red, "\x1b[31mregressed\x1b[0m");
        assert_eq!(
            paint("no change", of_verdict(Verdict::NoChange)),
            "no change"
        );
        assert_eq!(
            strip(&format!("a {red} b\x1b[2mc\x1b[0m")),
            "a regressed bc"
        );
        assert_eq!(strip("\x1b[x"), "\x1b[x");
    }
}
