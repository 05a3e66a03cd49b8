//! Who holds a `flock`: the pid from `/proc/locks` (the kernel's own list of locks), its
//! command line from `/proc/PID/cmdline` and its start from `/proc/PID/stat`, for the line a
//! waiting command prints (the measurement lock, the build cache's locks).

use std::fs::File;
use std::os::unix::fs::MetadataExt;

/// Who holds the lock on `file`: `pid 123 (patchbench run syscall), started 03:20:11 UTC`.
pub fn describe(file: &File) -> Option<String> {
    let meta = file.metadata().ok()?;
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let pid = holder_pid(&locks, meta.dev(), meta.ino())?;
    let command = std::fs::read(format!("/proc/{pid}/cmdline"))
        .ok()
        .map(|raw| {
            let words: Vec<String> = raw
                .split(|b| *b == 0)
                .filter(|w| !w.is_empty())
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect();
            crate::safe_text::field_cut(&words.join(" "), 120)
        })
        .filter(|c| !c.is_empty());
    if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
        // A flock outlives its taker in the processes that inherited its descriptor (a killed
        // build's compilers still holding its slot).
        return Some(format!(
            "pid {pid}, which has exited; processes it started still hold the lock"
        ));
    }
    let since = started_at(pid);
    let mut out = format!("pid {pid}");
    if let Some(c) = command {
        out.push_str(&format!(" ({c})"));
    }
    if let Some(s) = since {
        out.push_str(&format!(", started {s}"));
    }
    Some(out)
}

/// The pid of the process holding an exclusive flock on inode `ino` of device `dev`, from
/// `/proc/locks` (`1: FLOCK  ADVISORY  WRITE 1234 00:1a:5678 0 EOF`; the device as hex
/// major:minor).
fn holder_pid(locks: &str, dev: u64, ino: u64) -> Option<u32> {
    let want = format!("{:02x}:{:02x}:{ino}", libc::major(dev), libc::minor(dev));
    locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // A blocked waiter's line starts "1: -> FLOCK"; only holders count.
        if fields.get(1) != Some(&"FLOCK") || fields.get(5) != Some(&want.as_str()) {
            return None;
        }
        fields.get(4)?.parse().ok()
    })
}

/// When process `pid` started, as wall-clock time in UTC (`/proc/PID/stat`'s start in clock
/// ticks since boot, plus the boot time from `/proc/stat`).
fn started_at(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let ticks: u64 = rest.split_whitespace().nth(19)?.parse().ok()?;
    let btime = crate::proc_stat::ProcStat::read()?.btime?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz <= 0 {
        return None;
    }
    let at = time::OffsetDateTime::from_unix_timestamp(btime + (ticks / hz as u64) as i64).ok()?;
    let f = time::macros::format_description!("[hour]:[minute]:[second] UTC");
    at.format(&f).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holder_is_read_from_proc_locks_and_waiters_are_not_holders() {
        let dev = libc::makedev(0, 0x1a);
        let locks = "1: POSIX  ADVISORY  WRITE 999 00:1a:77 0 EOF\n\
                     2: FLOCK  ADVISORY  WRITE 4321 00:1a:77 0 EOF\n\
                     2: -> FLOCK  ADVISORY  WRITE 555 00:1a:77 0 EOF\n\
                     3: FLOCK  ADVISORY  WRITE 111 00:1a:78 0 EOF\n";
        assert_eq!(holder_pid(locks, dev, 77), Some(4321));
        assert_eq!(holder_pid(locks, dev, 79), None);
        assert_eq!(holder_pid(locks, libc::makedev(8, 1), 77), None);
    }
}
