//! The host side of a duet's start barrier. Each guest has a virtio-serial port whose host end
//! is a unix socket QEMU connects to (we listen before QEMU starts). Before each measured pass
//! or point the guest's harness writes `ready WHAT` and waits for `go` (`crate::proc::barrier`);
//! the host answers every waiting guest at once as soon as every guest still running waits.
//! A guest that has ended (QEMU gone, its socket closed) no longer counts, so the other is
//! released at once and never waits for ever; a guest that hangs is ended by the step's
//! deadline, which releases the other.

use crate::proc::supervise::Alongside;
use std::cell::RefCell;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

/// Where a guest is with respect to the barrier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Running,
    Waiting,
    Gone,
}

/// What a watched descriptor is.
#[derive(Debug, Clone, Copy)]
enum Watched {
    Listener(usize),
    Connection(usize),
}

/// One guest's end.
struct End {
    listener: UnixListener,
    socket: PathBuf,
    connection: Option<UnixStream>,
    partial: Vec<u8>,
    place: Place,
}

/// The barrier of a duet's guests.
pub struct Barrier {
    ends: Vec<End>,
    last: RefCell<Vec<Watched>>,
    /// How many times the guests were released together.
    pub released: u32,
}

impl Barrier {
    /// Listens on `sockets` (one per guest; QEMU connects to each as its port's host end).
    pub fn listen(sockets: &[PathBuf]) -> Result<Barrier, String> {
        let ends = sockets
            .iter()
            .map(|p| {
                let listener = UnixListener::bind(p)
                    .map_err(|e| format!("cannot listen on {}: {e}", p.display()))?;
                listener
                    .set_nonblocking(true)
                    .map_err(|e| format!("cannot listen on {}: {e}", p.display()))?;
                Ok(End {
                    listener,
                    socket: p.clone(),
                    connection: None,
                    partial: Vec::new(),
                    place: Place::Running,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Barrier {
            ends,
            last: RefCell::new(Vec::new()),
            released: 0,
        })
    }

    /// The socket of guest `i`.
    pub fn socket(&self, i: usize) -> &Path {
        &self.ends[i].socket
    }

    /// Guest `i` is gone: it no longer holds the others.
    pub fn gone(&mut self, i: usize) {
        if let Some(e) = self.ends.get_mut(i) {
            e.place = Place::Gone;
            e.connection = None;
        }
        self.release_if_all_wait();
    }

    fn accept(&mut self, i: usize) {
        if let Ok((stream, _)) = self.ends[i].listener.accept() {
            if stream.set_nonblocking(true).is_ok() {
                self.ends[i].connection = Some(stream);
            }
        }
    }

    fn read(&mut self, i: usize) {
        let end = &mut self.ends[i];
        let Some(conn) = end.connection.as_mut() else {
            return;
        };
        let mut buf = [0u8; 512];
        match conn.read(&mut buf) {
            Ok(0) => {
                end.connection = None;
                end.place = Place::Gone;
            }
            Ok(n) => {
                end.partial.extend_from_slice(&buf[..n]);
                while let Some(nl) = end.partial.iter().position(|&b| b == b'\n') {
                    let line: Vec<u8> = end.partial.drain(..=nl).collect();
                    if line.starts_with(b"ready") && end.place == Place::Running {
                        end.place = Place::Waiting;
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => {
                end.connection = None;
                end.place = Place::Gone;
            }
        }
        self.release_if_all_wait();
    }

    /// Sends `go` to every waiting guest once no running guest is still on its way.
    fn release_if_all_wait(&mut self) {
        let waiting = self
            .ends
            .iter()
            .filter(|e| e.place == Place::Waiting)
            .count();
        let running = self
            .ends
            .iter()
            .filter(|e| e.place == Place::Running)
            .count();
        if waiting == 0 || running > 0 {
            return;
        }
        for e in self.ends.iter_mut().filter(|e| e.place == Place::Waiting) {
            let sent = e
                .connection
                .as_mut()
                .map(|c| c.write_all(b"go\n").is_ok())
                .unwrap_or(false);
            e.place = if sent { Place::Running } else { Place::Gone };
        }
        self.released += 1;
    }
}

impl Alongside for Barrier {
    fn fds(&self) -> Vec<RawFd> {
        let mut watched = Vec::new();
        let mut fds = Vec::new();
        for (i, e) in self.ends.iter().enumerate() {
            match (&e.connection, e.place) {
                (_, Place::Gone) => {}
                (Some(c), _) => {
                    watched.push(Watched::Connection(i));
                    fds.push(c.as_raw_fd());
                }
                (None, _) => {
                    watched.push(Watched::Listener(i));
                    fds.push(e.listener.as_raw_fd());
                }
            }
        }
        *self.last.borrow_mut() = watched;
        fds
    }

    fn readable(&mut self, index: usize) {
        let what = self.last.borrow().get(index).copied();
        match what {
            Some(Watched::Listener(i)) => self.accept(i),
            Some(Watched::Connection(i)) => self.read(i),
            None => {}
        }
    }

    fn ended(&mut self, which: usize) {
        self.gone(which);
    }
}

impl Drop for Barrier {
    fn drop(&mut self) {
        for e in &self.ends {
            let _ = std::fs::remove_file(&e.socket);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;
    use std::time::Duration;

    /// Runs the barrier's side of the poll loop until `done` says so (at most a few seconds).
    fn pump(b: &mut Barrier, mut done: impl FnMut(&Barrier) -> bool) {
        let end = std::time::Instant::now() + Duration::from_secs(10);
        while !done(b) && std::time::Instant::now() < end {
            let fds = b.fds();
            for (k, fd) in fds.iter().enumerate() {
                let mut p = [libc::pollfd {
                    fd: *fd,
                    events: libc::POLLIN,
                    revents: 0,
                }];
                // SAFETY: one valid pollfd.
                if unsafe { libc::poll(p.as_mut_ptr(), 1, 10) } > 0 {
                    b.readable(k);
                    break;
                }
            }
        }
    }

    fn guest(path: &Path) -> (UnixStream, std::io::BufReader<UnixStream>) {
        let s = UnixStream::connect(path).unwrap();
        let r = std::io::BufReader::new(s.try_clone().unwrap());
        (s, r)
    }

    fn got_go(r: &mut std::io::BufReader<UnixStream>) -> bool {
        r.get_ref()
            .set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let mut line = String::new();
        r.read_line(&mut line).is_ok() && line == "go\n"
    }

    #[test]
    fn both_are_released_together_and_a_gone_guest_holds_no_one() {
        let d = tempfile::tempdir().unwrap();
        let socks = [d.path().join("a.sock"), d.path().join("b.sock")];
        let mut b = Barrier::listen(&socks).unwrap();
        let (mut a, mut ra) = guest(&socks[0]);
        let (mut g2, mut rb) = guest(&socks[1]);
        pump(&mut b, |b| b.ends.iter().all(|e| e.connection.is_some()));
        a.write_all(b"ready pass 1\n").unwrap();
        pump(&mut b, |b| b.ends[0].place == Place::Waiting);
        assert!(!got_go(&mut ra), "released before the other was ready");
        g2.write_all(b"ready pass 1\n").unwrap();
        pump(&mut b, |b| b.released == 1);
        assert!(got_go(&mut ra) && got_go(&mut rb));
        // The second guest ends: the first is released alone, at once.
        drop(g2);
        drop(rb);
        a.write_all(b"ready pass 2\n").unwrap();
        pump(&mut b, |b| b.released == 2);
        assert!(got_go(&mut ra));
        assert_eq!(b.released, 2);
    }

    #[test]
    fn a_guest_ended_by_the_wait_releases_the_other() {
        let d = tempfile::tempdir().unwrap();
        let socks = [d.path().join("a.sock"), d.path().join("b.sock")];
        let mut b = Barrier::listen(&socks).unwrap();
        let (mut a, mut ra) = guest(&socks[0]);
        pump(&mut b, |b| b.ends[0].connection.is_some());
        a.write_all(b"ready x\n").unwrap();
        pump(&mut b, |b| b.ends[0].place == Place::Waiting);
        assert!(!got_go(&mut ra));
        b.ended(1);
        assert!(got_go(&mut ra));
        drop(b);
        assert!(!socks[0].exists(), "the sockets are removed");
    }
}
