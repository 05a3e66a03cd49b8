//! The live progress line on stderr (test, copies, pass, time left). Drawn only when stderr is
//! a terminal, redrawn by the runner's own poll loop (no ticker thread).

use crate::unixbench::catalog::TestSpec;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
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

    /// Shows where the run is.
    pub fn show(&mut self, spec: &TestSpec, copies: u32, pass: u32, passes: u32, left: f64) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!(
                "{} · {} cop{} · pass {}/{} · {:.0} s left",
                spec.name,
                copies,
                if copies == 1 { "y" } else { "ies" },
                pass,
                passes,
                left
            ));
            bar.tick();
        }
    }

    /// Removes the line.
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
