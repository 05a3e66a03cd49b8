//! Ctrl-C, SIGTERM and SIGHUP while tasks run: the handlers only set a flag; the driver looks at
//! it between samples, kills its tasks, removes its files and exits with 128 + the signal.

use crate::error::Interrupted;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The installed handlers and the flags they set.
pub struct Interrupt {
    flags: Vec<(i32, &'static str, Arc<AtomicBool>)>,
}

impl Interrupt {
    /// Installs flag-setting handlers for SIGINT, SIGTERM and SIGHUP.
    pub fn install() -> anyhow::Result<Interrupt> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let mut flags = Vec::new();
        for (sig, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP")] {
            let flag = Arc::new(AtomicBool::new(false));
            signal_hook::flag::register(sig, Arc::clone(&flag))?;
            flags.push((sig, name, flag));
        }
        Ok(Interrupt { flags })
    }

    /// The signal that arrived, if any.
    pub fn pending(&self) -> Option<Interrupted> {
        self.flags
            .iter()
            .find(|(_, _, f)| f.load(Ordering::Relaxed))
            .map(|(signal, name, _)| Interrupted {
                signal: *signal,
                name,
            })
    }

    /// An [`Interrupted`] error once a signal has arrived.
    pub fn check(&self) -> anyhow::Result<()> {
        match self.pending() {
            Some(i) => Err(i.into()),
            None => Ok(()),
        }
    }
}
