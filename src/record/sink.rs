//! The sinks a run is handed to as it grows: the store (one transaction per finished unit),
//! the `--json` file and other output files, and the terminal reporter. Every measuring command
//! uses the same [`Sinks`], so a failure or a signal at any point keeps what finished, for every
//! command.
//!
//! A sink that cannot start (a bad `--store`) stops the command before any work. A sink that
//! fails later (a full disk under the store, a closed stdout) is dropped from the run with one
//! warning; the run goes on and the other sinks keep its results; at the end the failure is
//! returned, so the command exits non-zero and says which output failed and why.

use crate::error::StdoutFailed;
use crate::record::RunRecord;
use std::path::{Path, PathBuf};

/// Something that keeps or shows a run.
pub trait Sink {
    /// What it is, for messages: `store /path/results.db`, `--json r.json`.
    fn name(&self) -> String;
    /// The run has started (no results yet).
    fn started(&mut self, _record: &RunRecord) -> anyhow::Result<()> {
        Ok(())
    }
    /// One more unit (a test, a load point run, a task count) has finished.
    fn progress(&mut self, record: &RunRecord) -> anyhow::Result<()>;
    /// The run has ended (completely, or `record.incomplete` after a failure or signal).
    fn finished(&mut self, record: &RunRecord) -> anyhow::Result<()>;
    /// The id the run was saved under, for the store.
    fn saved_as(&self) -> Option<String> {
        None
    }
    /// A line for stderr once the run is kept (`saved as run 5 in PATH`).
    fn done_line(&self) -> Option<String> {
        None
    }
}

struct Slot {
    sink: Box<dyn Sink>,
    failure: Option<anyhow::Error>,
}

/// Every sink of one run.
#[derive(Default)]
pub struct Sinks {
    slots: Vec<Slot>,
}

fn is_stdout_failure(e: &anyhow::Error) -> bool {
    e.downcast_ref::<StdoutFailed>().is_some()
}

/// A sink's failure with the sink named once: `store X: the filesystem is full`, not
/// `store X: store X: the filesystem is full` when the error already names it.
fn named(name: &str, e: &anyhow::Error) -> String {
    let text = format!("{e:#}");
    if text.starts_with(name) {
        text
    } else {
        format!("{name}: {text}")
    }
}

impl Sinks {
    pub fn new() -> Sinks {
        Sinks::default()
    }

    /// Adds a sink; sinks are called in the order added (keep the terminal last, so the
    /// results are saved before they are shown).
    pub fn add(&mut self, sink: impl Sink + 'static) {
        self.slots.push(Slot {
            sink: Box::new(sink),
            failure: None,
        });
    }

    /// Before any work: a sink that cannot start stops the command.
    pub fn started(&mut self, record: &RunRecord) -> anyhow::Result<()> {
        for slot in &mut self.slots {
            slot.sink.started(record)?;
        }
        Ok(())
    }

    fn call(
        &mut self,
        record: &RunRecord,
        f: impl Fn(&mut dyn Sink, &RunRecord) -> anyhow::Result<()>,
    ) {
        for slot in self.slots.iter_mut().filter(|s| s.failure.is_none()) {
            if let Err(e) = f(slot.sink.as_mut(), record) {
                if !is_stdout_failure(&e) {
                    crate::safe_text::eprint_line(&format!(
                        "patchbench: warning: {}; the run goes on and its other outputs keep \
                         the results",
                        named(&slot.sink.name(), &e)
                    ));
                }
                slot.failure = Some(e);
            }
        }
    }

    /// One more unit has finished.
    pub fn progress(&mut self, record: &RunRecord) {
        self.call(record, |s, r| s.progress(r));
    }

    /// The run has ended: every sink still working keeps the final record; then the lines
    /// saying where it went. Returns the first failure of the run (a standard output failure
    /// only when nothing else failed).
    pub fn finished(&mut self, record: &RunRecord) -> anyhow::Result<()> {
        self.call(record, |s, r| s.finished(r));
        for slot in self.slots.iter().filter(|s| s.failure.is_none()) {
            if let Some(line) = slot.sink.done_line() {
                crate::safe_text::eprint_line(&format!("patchbench: {line}"));
            }
        }
        let mut failures: Vec<(String, anyhow::Error)> = self
            .slots
            .iter_mut()
            .filter_map(|s| Some((s.sink.name(), s.failure.take()?)))
            .collect();
        failures.sort_by_key(|(_, e)| is_stdout_failure(e));
        match failures.into_iter().next() {
            None => Ok(()),
            Some((_, e)) if is_stdout_failure(&e) => Err(e),
            Some((name, e)) => Err(anyhow::anyhow!(
                "{} (the run's other outputs have its results)",
                named(&name, &e)
            )),
        }
    }

    /// The store id of the run, once saved.
    pub fn saved_as(&self) -> Option<String> {
        self.slots.iter().find_map(|s| s.sink.saved_as())
    }
}

/// What a [`FileSink`] writes: the whole file from the record so far (None: nothing yet).
pub type Render = Box<dyn Fn(&RunRecord) -> anyhow::Result<Option<Vec<u8>>>>;

/// An output file (see [`super::output_file`]): a file is rewritten atomically (after every
/// unit where asked, and at the end); a FIFO, a device or standard output is written once, at
/// the end, so its reader gets one whole document.
pub struct FileSink {
    option: &'static str,
    path: PathBuf,
    render: Render,
    every_unit: bool,
    announce: bool,
    wrote: bool,
}

impl FileSink {
    /// `option` names the file in messages (`--json`); `every_unit` rewrites it after every
    /// finished unit as well as at the end; `announce` says `wrote PATH` at the end.
    pub fn new(
        option: &'static str,
        path: &Path,
        every_unit: bool,
        announce: bool,
        render: Render,
    ) -> FileSink {
        FileSink {
            option,
            path: path.to_path_buf(),
            render,
            every_unit,
            announce,
            wrote: false,
        }
    }

    /// The `--json` document, rewritten after every unit.
    pub fn json(path: &Path, announce: bool) -> FileSink {
        FileSink::new(
            "--json",
            path,
            true,
            announce,
            Box::new(|r| r.to_json().map(Some)),
        )
    }

    fn write(&mut self, record: &RunRecord, last: bool) -> anyhow::Result<()> {
        let target = super::output_file::target(self.option, &self.path)?;
        if target.is_stream() && !last {
            return Ok(());
        }
        if let Some(bytes) = (self.render)(record)? {
            super::output_file::write_to(&target, self.option, &self.path, &bytes)?;
            self.wrote = true;
        }
        Ok(())
    }
}

impl Sink for FileSink {
    fn name(&self) -> String {
        format!(
            "{} {}",
            self.option,
            crate::safe_text::field(&self.path.display().to_string())
        )
    }

    fn progress(&mut self, record: &RunRecord) -> anyhow::Result<()> {
        if self.every_unit {
            self.write(record, false)?;
        }
        Ok(())
    }

    fn finished(&mut self, record: &RunRecord) -> anyhow::Result<()> {
        self.write(record, true)
    }

    fn done_line(&self) -> Option<String> {
        (self.announce && self.wrote).then(|| {
            format!(
                "wrote {}",
                crate::safe_text::field(&self.path.display().to_string())
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink whose every write fails with `message`.
    struct Failing {
        name: String,
        message: String,
    }

    impl Sink for Failing {
        fn name(&self) -> String {
            self.name.clone()
        }
        fn progress(&mut self, _: &RunRecord) -> anyhow::Result<()> {
            anyhow::bail!("{}", self.message)
        }
        fn finished(&mut self, _: &RunRecord) -> anyhow::Result<()> {
            anyhow::bail!("{}", self.message)
        }
    }

    fn failure_of(name: &str, message: &str) -> String {
        let mut sinks = Sinks::new();
        sinks.add(Failing {
            name: name.into(),
            message: message.into(),
        });
        let record = RunRecord::new(
            crate::record::Kind::Debug,
            crate::sysinfo::SystemInfo::default(),
            &(),
        );
        sinks.progress(&record);
        sinks.finished(&record).unwrap_err().to_string()
    }

    #[test]
    fn a_failing_sink_is_named_once() {
        let e = failure_of("store /s.db", "store /s.db: the filesystem is full");
        assert_eq!(
            e,
            "store /s.db: the filesystem is full (the run's other outputs have its results)"
        );
        let e = failure_of("--json r.json", "disk on fire");
        assert_eq!(
            e,
            "--json r.json: disk on fire (the run's other outputs have its results)"
        );
    }
}
