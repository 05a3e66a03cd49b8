//! The one way patchbench writes a file the user named (`--json`, `--html`, `--csv`, `--svg`,
//! `export -o`, the man pages of `man --dir`), and the one check of such a path before any
//! work: [`target`] decides what the path is, and both the up-front check and the writer
//! ([`write`]) go through it, so they cannot disagree.
//!
//! - A regular file, or a path where nothing exists yet, is replaced atomically: a temporary
//!   file in the same directory, flushed to disk, renamed over it, so a kill or a full disk
//!   never leaves half a file. An existing file keeps its mode; a new one gets 0644 less the
//!   umask.
//! - A symbolic link is followed (through any chain of links, a dangling one included) and its
//!   target replaced as above; the link itself is never replaced.
//! - A FIFO or a character device is written in place, streaming, once (opened for writing,
//!   never created, truncated or replaced: `--json /dev/null` leaves `/dev/null` a device).
//! - `-`, `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` and `/proc/self/fd/N` (or a link to one)
//!   are written to that open descriptor of patchbench's, streaming, once.
//! - A directory, a block device, a socket, or anything else is refused with one line (exit
//!   status 2).
//!
//! A streaming output is written once, when the run ends; a file is also rewritten after
//! every finished unit where the caller asks for it (see `super::sink::FileSink`).

use crate::error::{usage, StdoutFailed};
use anyhow::Context;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::io::RawFd;
use std::path::{Path, PathBuf};

/// The mode a new output file gets before the umask.
pub const NEW_FILE_MODE: u32 = 0o644;

/// How many symbolic links a path may go through (the kernel's own limit, ELOOP).
const MAX_LINKS: usize = 40;

/// The process's umask (from /proc/self/status; without it, read and restored at once).
pub fn umask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(m) = status
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
    {
        return m;
    }
    // SAFETY: umask only swaps the process's file creation mask; it is restored at once.
    unsafe {
        let old = libc::umask(0o022);
        libc::umask(old);
        old as u32
    }
}

/// The mode `path` will have once written: its present mode, or [`NEW_FILE_MODE`] less the
/// umask.
pub fn mode_for(path: &Path) -> u32 {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => m.permissions().mode() & 0o7777,
        _ => NEW_FILE_MODE & !umask(),
    }
}

fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// What an output path is, and so how it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A regular file or a new one: replaced atomically. `file` is the path with every
    /// symbolic link followed (what is replaced; never a link).
    Replace { file: PathBuf },
    /// A FIFO or a character device: opened and written in place.
    Device { path: PathBuf },
    /// One of patchbench's open descriptors (`-` is 1, standard output).
    Descriptor { fd: RawFd },
}

impl Target {
    /// True for an output written in place as a stream (once, when the run ends).
    pub fn is_stream(&self) -> bool {
        !matches!(self, Target::Replace { .. })
    }
}

/// The descriptor a path names by itself: `-`, `/dev/stdout`, `/dev/stderr`, `/dev/stdin`,
/// `/dev/fd/N`, `/proc/self/fd/N`, `/proc/<this pid>/fd/N`.
fn descriptor_named(path: &Path) -> Option<RawFd> {
    let s = path.to_str()?;
    match s {
        "-" | "/dev/stdout" => return Some(1),
        "/dev/stderr" => return Some(2),
        "/dev/stdin" => return Some(0),
        _ => {}
    }
    let me = format!("/proc/{}/fd/", std::process::id());
    let n = s
        .strip_prefix("/dev/fd/")
        .or_else(|| s.strip_prefix("/proc/self/fd/"))
        .or_else(|| s.strip_prefix(me.as_str()))?;
    n.parse().ok()
}

/// Where a path leads: one of our descriptors, or the path every symbolic link on the way
/// ends at (which may not exist).
enum Resolved {
    Descriptor(RawFd),
    Path(PathBuf),
}

fn resolve(path: &Path) -> std::io::Result<Resolved> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        if let Some(fd) = descriptor_named(&p) {
            return Ok(Resolved::Descriptor(fd));
        }
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)?;
                p = if to.is_absolute() {
                    to
                } else {
                    directory_of(&p).join(to)
                };
            }
            _ => return Ok(Resolved::Path(p)),
        }
    }
    Err(std::io::Error::from_raw_os_error(libc::ELOOP))
}

/// The kinds of file refused, in words.
fn kind_of(t: &std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "neither a regular file, a FIFO nor a character device"
    }
}

/// Decides what `path`, given to `option`, is and checks that it can be written, before any
/// work: a missing directory, one where no file can be made, an unwritable file, a directory,
/// a block device or anything else is refused with one line (exit status 2). The writer
/// ([`write`]) decides through this same function.
pub fn target(option: &str, path: &Path) -> anyhow::Result<Target> {
    let shown = crate::safe_text::field(&path.display().to_string());
    let resolved = match resolve(path) {
        Ok(r) => r,
        Err(e) => {
            return usage(format!(
                "{option} {shown}: cannot follow its links ({e}); give another path"
            ))
        }
    };
    let file = match resolved {
        Resolved::Descriptor(fd) => return descriptor(option, &shown, fd),
        Resolved::Path(file) => file,
    };
    match std::fs::metadata(&file) {
        Ok(m) if m.is_file() => {
            if nix::unistd::access(&file, nix::unistd::AccessFlags::W_OK).is_err() {
                return usage(format!(
                    "{option} {shown}: file is not writable; write elsewhere"
                ));
            }
            replaceable(option, &shown, file)
        }
        Ok(m) if m.file_type().is_fifo() || m.file_type().is_char_device() => {
            if nix::unistd::access(&file, nix::unistd::AccessFlags::W_OK).is_err() {
                return usage(format!(
                    "{option} {shown}: not writable by this user; write elsewhere"
                ));
            }
            Ok(Target::Device { path: file })
        }
        Ok(m) => {
            let kind = kind_of(&m.file_type());
            let fix = if m.is_dir() {
                "give a file name"
            } else {
                "patchbench writes a regular file (replaced), a FIFO, a character device or - \
                 (standard output); give one of those"
            };
            usage(format!("{option} {shown}: is {kind}; {fix}"))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => replaceable(option, &shown, file),
        Err(e) => usage(format!(
            "{option} {shown}: cannot be looked up ({e}); write elsewhere"
        )),
    }
}

/// One of our descriptors: it must be open for writing.
fn descriptor(option: &str, shown: &str, fd: RawFd) -> anyhow::Result<Target> {
    // SAFETY: F_GETFL only reads the flags of a descriptor number; an unused one gives EBADF.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || flags & libc::O_ACCMODE == libc::O_RDONLY {
        return usage(format!(
            "{option} {shown}: descriptor {fd} is not open for writing; write elsewhere"
        ));
    }
    Ok(Target::Descriptor { fd })
}

/// A regular file (or a new one) at `file`: its directory must exist and take new files (the
/// temporary file is made there).
fn replaceable(option: &str, shown: &str, file: PathBuf) -> anyhow::Result<Target> {
    let parent = directory_of(&file);
    let parent_shown = crate::safe_text::field(&parent.display().to_string());
    if !parent.is_dir() {
        return usage(format!(
            "{option} {shown}: directory {parent_shown} does not exist; create it or write \
             elsewhere"
        ));
    }
    let w = nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK;
    if nix::unistd::access(&parent, w).is_err() {
        return usage(format!(
            "{option} {shown}: directory {parent_shown} is not writable; write elsewhere"
        ));
    }
    // access() answers for root from the mode bits alone; a read-only mount or a filesystem
    // that takes no new files (/proc, /sys) says no only when a file is made there. So make
    // a file there once, as the writer will for its temporary file, and remove it at once.
    match tempfile::Builder::new()
        .prefix(".patchbench-probe-")
        .tempfile_in(&parent)
    {
        Ok(probe) => drop(probe),
        Err(e) => {
            return usage(format!(
                "{option} {shown}: cannot create a file in {parent_shown} ({e}); write \
                 elsewhere"
            ))
        }
    }
    Ok(Target::Replace { file })
}

/// Writes `bytes` to `path` (given to `option`) as [`target`] decides: a file atomically, a
/// FIFO, a device or a descriptor in place.
pub fn write(option: &str, path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let t = target(option, path)?;
    write_to(&t, option, path, bytes)
}

/// Writes `bytes` to an output already decided by [`target`].
pub fn write_to(t: &Target, option: &str, path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let shown = crate::safe_text::field(&path.display().to_string());
    let cannot = || format!("{option} {shown}: cannot write");
    match t {
        Target::Replace { file } => replace(file, bytes).with_context(cannot),
        Target::Device { path } => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NOCTTY)
                .open(path)
                .with_context(cannot)?;
            // It was a FIFO or a device when looked at; never write into a regular file
            // that took its place without replacing it.
            let kind = f.metadata().with_context(cannot)?.file_type();
            if !(kind.is_fifo() || kind.is_char_device()) {
                return usage(format!(
                    "{option} {shown}: changed while patchbench ran (no longer a FIFO or a \
                     device); nothing was written"
                ));
            }
            f.write_all(bytes)
                .and_then(|_| f.flush())
                .with_context(cannot)
        }
        Target::Descriptor { fd: 1 } => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)
                .and_then(|_| out.flush())
                .map_err(|e| StdoutFailed(e).into())
        }
        Target::Descriptor { fd } => {
            // SAFETY: the descriptor was checked open for writing by `target`; it is borrowed
            // for this call only and not closed.
            let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(*fd) };
            let mut rest = bytes;
            while !rest.is_empty() {
                match nix::unistd::write(fd, rest) {
                    Ok(0) => anyhow::bail!("{}: the descriptor took no more bytes", cannot()),
                    Ok(n) => rest = &rest[n..],
                    Err(nix::errno::Errno::EINTR) => {}
                    Err(e) => return Err(std::io::Error::from(e)).with_context(cannot),
                }
            }
            Ok(())
        }
    }
}

/// Replaces the regular file `file` (or makes it) atomically with the output mode.
fn replace(file: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mode = mode_for(file);
    let mut tmp = tempfile::Builder::new()
        .prefix(".patchbench-")
        .tempfile_in(directory_of(file))?;
    tmp.write_all(bytes)?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))?;
    tmp.as_file().sync_all()?;
    tmp.persist(file)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_new_file_gets_0644_less_the_umask_and_an_old_one_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        write("--json", &path, b"one").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, NEW_FILE_MODE & !umask());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write("--json", &path, b"two").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o640);
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left behind");
    }

    #[test]
    fn a_link_is_followed_and_its_target_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        std::fs::write(&real, "old").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("link.json");
        symlink("real.json", &link).unwrap();
        let chain = dir.path().join("chain.json");
        symlink(&link, &chain).unwrap();
        assert_eq!(
            target("--json", &chain).unwrap(),
            Target::Replace { file: real.clone() }
        );
        write("--json", &chain, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert!(std::fs::symlink_metadata(&chain).unwrap().is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o600, "the target keeps its mode");
        // A dangling link makes its target.
        let dangling = dir.path().join("dangling.json");
        symlink("made.json", &dangling).unwrap();
        write("--json", &dangling, b"made").unwrap();
        assert!(std::fs::symlink_metadata(&dangling).unwrap().is_symlink());
        assert_eq!(
            std::fs::read(dir.path().join("made.json")).unwrap(),
            b"made"
        );
        // A loop is refused.
        let a = dir.path().join("a");
        symlink("b", &a).unwrap();
        symlink("a", dir.path().join("b")).unwrap();
        let e = target("--json", &a).unwrap_err().to_string();
        assert!(e.contains("cannot follow its links"), "{e}");
    }

    #[test]
    fn descriptors_are_named_by_their_paths() {
        assert_eq!(descriptor_named(Path::new("-")), Some(1));
        assert_eq!(descriptor_named(Path::new("/dev/stdout")), Some(1));
        assert_eq!(descriptor_named(Path::new("/dev/stderr")), Some(2));
        assert_eq!(descriptor_named(Path::new("/dev/fd/7")), Some(7));
        assert_eq!(descriptor_named(Path::new("/proc/self/fd/3")), Some(3));
        let mine = format!("/proc/{}/fd/4", std::process::id());
        assert_eq!(descriptor_named(Path::new(&mine)), Some(4));
        assert_eq!(descriptor_named(Path::new("/proc/1/fd/4")), None);
        assert_eq!(descriptor_named(Path::new("out.json")), None);
        assert!(matches!(
            target("--json", Path::new("/dev/stderr")),
            Ok(Target::Descriptor { fd: 2 })
        ));
        let e = target("--json", Path::new("/dev/fd/987")).unwrap_err();
        assert!(e.to_string().contains("not open for writing"), "{e}");
    }

    #[test]
    fn directories_and_sockets_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let e = target("--json", dir.path()).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        assert!(e.downcast_ref::<crate::error::Usage>().is_some());
        let sock = dir.path().join("s");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        let e = target("--csv", &sock).unwrap_err().to_string();
        assert!(e.contains("is a socket"), "{e}");
        let e = target("--csv", &dir.path().join("none/x.csv"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not exist"), "{e}");
    }

    #[test]
    fn a_fifo_is_written_in_place_for_its_reader() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("f");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        assert_eq!(
            target("--json", &fifo).unwrap(),
            Target::Device { path: fifo.clone() }
        );
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(&fifo).unwrap())
        };
        write("--json", &fifo, b"{\"streamed\": true}\n").unwrap();
        assert_eq!(reader.join().unwrap(), b"{\"streamed\": true}\n");
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "the FIFO is still a FIFO");
    }
}
