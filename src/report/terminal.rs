//! Standard output, and the terminal reporter every measuring command hands its run to.
//!
//! Everything patchbench prints on stdout goes through [`print`], which turns a closed pipe or
//! a full disk into [`StdoutFailed`] instead of a panic, and lets no control character but a
//! newline, a tab and our own colours reach the terminal (`crate::safe_text`). [`TerminalSink`] shows a run: what a
//! finished unit adds (AIM's rows as they come), then the final report (UnixBench's, the
//! scaling tables), after the store and the files have kept the results.

use crate::error::StdoutFailed;
use crate::record::sink::Sink;
use crate::record::RunRecord;
use std::io::Write;

/// Writes `text` to standard output and flushes it, through the net of
/// `crate::safe_text::text`: newlines and tabs kept, every other control character shown
/// escaped, colour sequences kept only when colour is on.
pub fn print(text: &str) -> anyhow::Result<()> {
    let text = crate::safe_text::text(text, crate::report::color::enabled());
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| StdoutFailed(e).into())
}

/// Renders what the record gained since the last call (the sink keeps its own place).
pub type ProgressRender = Box<dyn FnMut(&RunRecord) -> String>;
/// Renders the final report.
pub type FinalRender = Box<dyn Fn(&RunRecord) -> String>;

/// The terminal reporter.
pub struct TerminalSink {
    progress: Option<ProgressRender>,
    finish: Option<FinalRender>,
}

impl TerminalSink {
    pub fn new(progress: Option<ProgressRender>, finish: Option<FinalRender>) -> TerminalSink {
        TerminalSink { progress, finish }
    }
}

impl Sink for TerminalSink {
    fn name(&self) -> String {
        "standard output".to_string()
    }

    fn started(&mut self, record: &RunRecord) -> anyhow::Result<()> {
        self.progress(record)
    }

    fn progress(&mut self, record: &RunRecord) -> anyhow::Result<()> {
        match self.progress.as_mut() {
            Some(f) => print(&f(record)),
            None => Ok(()),
        }
    }

    fn finished(&mut self, record: &RunRecord) -> anyhow::Result<()> {
        if let Some(f) = self.progress.as_mut() {
            print(&f(record))?;
        }
        if let Some(f) = &self.finish {
            print(&f(record))?;
        }
        // What ran inside the timed window (nothing by default), after the report.
        print(&crate::report::in_window::note(record))
    }
}
