//! The harness side of a duet's start barrier: in a campaign guest that runs beside another
//! (`PATCHBENCH_BARRIER` names the guest's barrier port, a virtio-serial device), the harness
//! calls [`wait`] just before it releases a measured pass or point (UnixBench before opening a
//! pass's start gate, AIM7 before a load point's start mark, will-it-scale before its tasks'
//! gate; never inside a timed loop): it writes `ready WHAT` to the port and waits for the
//! host's `go`, which comes when the other guest is ready too (or has ended). Without the
//! variable it does nothing. A port that cannot be used is said once on standard error and the
//! run goes on unsynchronised (the host is what ends the guest).

use super::signals::Signals;
use crate::error::Interrupted;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};

/// The variable that names the barrier port.
pub const ENV: &str = "PATCHBENCH_BARRIER";

/// Set once a failure was said, so it is said once.
static WARNED: AtomicBool = AtomicBool::new(false);

/// Waits at the barrier before `what` (a pass, a load point) when the run has one.
pub fn wait(what: &str, signals: &Signals) -> Result<(), Interrupted> {
    let Some(path) = std::env::var_os(ENV).filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    let port = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY)
            .open(&path)
    };
    let result = match port {
        Ok(mut port) => exchange(&mut port, what, signals)?,
        Err(e) => Err(format!("cannot open {}: {e}", path.to_string_lossy())),
    };
    if let Err(e) = result {
        if !WARNED.swap(true, Ordering::SeqCst) {
            eprintln!("patchbench: warning: duet barrier: {e}; running without it");
        }
    }
    Ok(())
}

/// Says `ready WHAT` on `port` and reads until the line `go`.
pub fn exchange<P: Read + Write + AsFd>(
    port: &mut P,
    what: &str,
    signals: &Signals,
) -> Result<Result<(), String>, Interrupted> {
    let what: String = what
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if let Err(e) = port.write_all(format!("ready {what}\n").as_bytes()) {
        return Ok(Err(format!("cannot write to the port: {e}")));
    }
    let mut line = Vec::new();
    loop {
        signals.check()?;
        let (sig, data) = {
            let mut fds = [
                PollFd::new(signals.fd(), PollFlags::POLLIN),
                PollFd::new(port.as_fd(), PollFlags::POLLIN),
            ];
            let _ = poll(
                &mut fds,
                PollTimeout::try_from(1000).unwrap_or(PollTimeout::MAX),
            );
            let ready = |k: usize| fds[k].revents().is_some_and(|r| !r.is_empty());
            (ready(0), ready(1))
        };
        if sig {
            signals.drain();
        }
        if !data {
            continue;
        }
        let mut byte = [0u8; 1];
        match port.read(&mut byte) {
            Ok(0) => return Ok(Err("the host closed the port".to_string())),
            Ok(_) if byte[0] == b'\n' => {
                if line == b"go" {
                    return Ok(Ok(()));
                }
                line.clear();
            }
            Ok(_) => line.push(byte[0]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Ok(Err(format!("cannot read the port: {e}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;
    use std::os::unix::net::UnixStream;

    #[test]
    fn says_ready_and_returns_on_go() {
        let signals = Signals::install().unwrap();
        let (mut guest, host) = UnixStream::pair().unwrap();
        let answer = std::thread::spawn(move || {
            let mut r = std::io::BufReader::new(host.try_clone().unwrap());
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            let mut h = host;
            h.write_all(b"noise\ngo\n").unwrap();
            line
        });
        exchange(&mut guest, "run pipe\npass 1", &signals)
            .unwrap()
            .unwrap();
        assert_eq!(answer.join().unwrap(), "ready run pipe pass 1\n");
    }

    #[test]
    fn a_closed_host_is_an_error_not_a_hang() {
        let signals = Signals::install().unwrap();
        let (mut guest, host) = UnixStream::pair().unwrap();
        drop(host);
        let r = exchange(&mut guest, "x", &signals).unwrap();
        assert!(r.is_err());
    }
}
