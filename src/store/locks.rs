//! Who holds a lock on a store: SQLite locks with POSIX advisory locks on the database and its
//! `-wal` and `-shm` files, and /proc/locks lists every lock with the holder's pid and the
//! file's device and inode. Used to say which process a store write waited for (its command
//! line shown with any URL's password left out).

use std::os::unix::fs::MetadataExt;

/// The most characters of a holder's command line shown.
const HOLDER_CHARS: usize = 120;
use std::path::Path;

/// `pid 1234 (patchbench run ...)` for every other process holding a lock on the store (its
/// command line escaped and cut to [`HOLDER_CHARS`] characters).
pub fn holders(store: &Path) -> Vec<String> {
    let mut inodes = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        let mut p = store.as_os_str().to_owned();
        p.push(suffix);
        if let Ok(m) = std::fs::metadata(Path::new(&p)) {
            inodes.push(m.ino());
        }
    }
    let me = std::process::id() as i64;
    let text = std::fs::read_to_string("/proc/locks").unwrap_or_default();
    let mut pids: Vec<i64> = text
        .lines()
        .filter_map(|line| {
            // `1: POSIX  ADVISORY  WRITE 1234 08:01:5678 0 EOF`
            let f: Vec<&str> = line.split_whitespace().collect();
            let (pid, file) = (f.get(4)?.parse::<i64>().ok()?, f.get(5)?);
            let inode: u64 = file.rsplit(':').next()?.parse().ok()?;
            (inodes.contains(&inode) && pid > 0 && pid != me).then_some(pid)
        })
        .collect();
    pids.sort_unstable();
    pids.dedup();
    pids.into_iter().map(describe).collect()
}

fn describe(pid: i64) -> String {
    let cmd = std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            String::from_utf8_lossy(&b)
                .split('\0')
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    // Any local process sets its own command line: passwords in URLs removed, shown escaped,
    // on one line, cut short.
    let cmd = super::location::redact_passwords(&cmd);
    if cmd.is_empty() {
        format!("pid {pid}")
    } else {
        format!(
            "pid {pid} ({})",
            crate::safe_text::field_cut(&cmd, HOLDER_CHARS)
        )
    }
}
