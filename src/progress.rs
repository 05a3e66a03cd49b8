//! The one progress facility of every long-running command (`run`, `aim7`, `scale`, `model`,
//! an import of many files): a live line on stderr saying where the run is, drawn with
//! indicatif only when stderr is a terminal and redrawn by the command's own loop (no ticker
//! thread, so a harness can still fork). Lines that must stay in the log go through
//! [`Progress::line`]: above the live line on a terminal, plain stderr lines otherwise, each
//! one line with control characters shown escaped.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A live line on stderr if it is a terminal; otherwise only [`Progress::line`] prints.
    pub fn new() -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        Progress { bar: Some(bar) }
    }

    /// A progress line that is never drawn (for tests and quiet callers).
    pub fn hidden() -> Progress {
        Progress { bar: None }
    }

    /// Shows where the run is (escaped and cut as a data field: it may name a file or a
    /// test).
    pub fn show(&self, message: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(crate::safe_text::field(message));
            bar.tick();
        }
    }

    /// Prints a line that stays (above the live line on a terminal), as one line with every
    /// control character escaped (`crate::safe_text::line`): noise lines name other
    /// processes, console lines come from other programs.
    pub fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(crate::safe_text::line(text)),
            None => crate::safe_text::eprint_line(text),
        }
    }

    /// Removes the live line.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Default for Progress {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
