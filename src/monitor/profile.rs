//! Sampling profiles of the timed window (`--profile`): `perf record -a -g` of the whole
//! machine, kernel and user, on the hardware `cycles` event where the kernel has one, else
//! `cpu-clock` (which a VM without a PMU has), at 999 Hz (odd, so sampling is not in step with
//! the timer tick), folded by `perf report` into each symbol's self and children share of the
//! samples: `perf-profile.self.<event>.<symbol>` and `perf-profile.children.<event>.<symbol>`
//! in %, as LKP names them (`monitors.md` §1, §3).
//!
//! `super::monitoring` starts a [`Recording`] before a window and [stops](Recording::stop)
//! and [folds](Stopped::fold) it after; perf is a child of this process, started before and
//! reaped after the monitors' window, so its own CPU time is in no unit's rusage. The data
//! is folded at once, on the kernel that was profiled, so symbols are resolved by perf
//! against the running kernel's /proc/kallsyms (which needs `kptr_restrict` 0, or root: see
//! [`kernel_symbols_hidden`]) and the programs' own symbol tables; in a `vm` step the guest
//! records and folds, so a profile names the guest kernel's symbols. (A build's `vmlinux` or
//! `System.map` would match a running kernel only under `nokaslr`, so they are not used.) `.isra.N`, `.constprop.N` and `.part.N` suffixes are
//! dropped so that two builds of one kernel name a function alike. Shares below 0.5 % are
//! left out. A profile that cannot be taken (no perf, `perf_event_paranoid` too high) never
//! stops the run: the reason is returned for the unit's `missing`.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// Shares below this (in %) are not kept.
const LIMIT_PCT: &str = "0.5";

/// The longest wait for perf to start sampling (a TCG guest takes seconds).
const START_LIMIT: Duration = Duration::from_secs(60);

/// perf's control FIFOs, opened read-write here (so neither open waits for perf, and perf's
/// own opens find a peer), removed when dropped: perf has them open by then.
struct Fifos {
    ctl: File,
    ack: File,
    paths: [PathBuf; 2],
}

impl Fifos {
    fn make(ctl: &Path, ack: &Path) -> std::io::Result<Fifos> {
        let mode = nix::sys::stat::Mode::from_bits_truncate(0o600);
        for p in [ctl, ack] {
            let _ = std::fs::remove_file(p);
            nix::unistd::mkfifo(p, mode)?;
        }
        let open = |p: &Path| OpenOptions::new().read(true).write(true).open(p);
        Ok(Fifos {
            ctl: open(ctl)?,
            ack: open(ack)?,
            paths: [ctl.to_path_buf(), ack.to_path_buf()],
        })
    }
}

impl Drop for Fifos {
    fn drop(&mut self) {
        for p in &self.paths {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// A running `perf record`. Dropped unfinished (a pass that failed or was interrupted), it
/// ends and reaps perf, so no perf outlives the run.
pub struct Recording {
    /// None once finished.
    child: Option<Child>,
    data: PathBuf,
    event: &'static str,
}

/// The event sampled here: `cycles` where the kernel counts it, else `cpu-clock`.
pub fn event() -> &'static str {
    static EVENT: OnceLock<&'static str> = OnceLock::new();
    EVENT.get_or_init(|| {
        let ok = Command::new("perf")
            .args(["stat", "-e", "cycles", "-x,", "--", "true"])
            .stdout(Stdio::null())
            .output()
            .map(|o| o.status.success() && !String::from_utf8_lossy(&o.stderr).contains("<not"))
            .unwrap_or(false);
        if ok {
            "cycles"
        } else {
            "cpu-clock"
        }
    })
}

impl Recording {
    /// Starts `perf record` into `data` with its events disabled, and enables them once perf
    /// is ready (its control FIFOs, beside `data`: `enable`, answered `ack`), so sampling
    /// covers the whole window however long perf takes to start (seconds in a TCG guest);
    /// all of it outside any timed window. Err: why no profile can be taken, with the fix.
    pub fn start(data: &Path) -> Result<Recording, String> {
        let event = event();
        let ctl = data.with_extension("ctl");
        let ack = data.with_extension("ack");
        let fifos = Fifos::make(&ctl, &ack).map_err(|e| {
            format!(
                "profile: perf's control FIFOs cannot be made beside {} ({e})",
                data.display()
            )
        })?;
        let mut child = Command::new("perf")
            .args(["record", "-a", "-g", "-F", "999", "-e", event, "-q", "-D", "-1"])
            .arg(format!("--control=fifo:{},{}", ctl.display(), ack.display()))
            .arg("-o")
            .arg(data)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                format!("profile: perf cannot be started ({e}); install it (Debian: apt-get install linux-perf)")
            })?;
        if let Err(e) = wait_until_sampling(&mut child, &fifos) {
            stop(child, nix::sys::signal::Signal::SIGKILL);
            return Err(e);
        }
        Ok(Recording {
            child: Some(child),
            data: data.to_path_buf(),
            event,
        })
    }

    /// Stops perf (SIGINT, as Ctrl-C does: it writes its data and exits) and reaps it.
    /// Err: why there is no profile (perf ended early, or wrote nothing).
    pub fn stop(mut self) -> Result<Stopped, String> {
        if let Some(child) = self.child.take() {
            stop(child, nix::sys::signal::Signal::SIGINT);
        }
        let written = std::fs::metadata(&self.data).map(|m| m.len()).unwrap_or(0);
        if written == 0 {
            return Err("profile: perf record wrote no data".into());
        }
        Ok(Stopped {
            data: self.data.clone(),
            event: self.event,
        })
    }
}

/// The data of a finished recording (the file stays where it was written).
pub struct Stopped {
    data: PathBuf,
    event: &'static str,
}

impl Stopped {
    /// Folds the samples into each symbol's self and children share. Err: why not.
    pub fn fold(&self) -> Result<BTreeMap<String, f64>, String> {
        fold(&self.data, self.event)
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            stop(child, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

/// Asks perf to enable its events and waits for its answer (`ack`), or for perf to end, or
/// [`START_LIMIT`]. Err: why there will be no profile.
fn wait_until_sampling(child: &mut Child, fifos: &Fifos) -> Result<(), String> {
    use std::io::{Read, Write};
    let started = std::time::Instant::now();
    (&fifos.ctl)
        .write_all(b"enable\n")
        .map_err(|e| format!("profile: perf's control FIFO cannot be written ({e})"))?;
    let mut answer = Vec::new();
    while !answer.windows(3).any(|w| w == b"ack") {
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            let first = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            return Err(format!(
                "profile: perf record stopped at once ({status}: {}); as root, or with \
                 /proc/sys/kernel/perf_event_paranoid at -1, it can sample the whole machine",
                first.trim()
            ));
        }
        if started.elapsed() > START_LIMIT {
            return Err(format!(
                "profile: perf record had not started sampling after {} s; the machine is \
                 too slow or too loaded for --profile",
                START_LIMIT.as_secs()
            ));
        }
        let mut fds = [nix::poll::PollFd::new(
            fifos.ack.as_fd(),
            nix::poll::PollFlags::POLLIN,
        )];
        if nix::poll::poll(&mut fds, nix::poll::PollTimeout::from(100u16)).unwrap_or(0) > 0 {
            let mut buf = [0u8; 16];
            match (&fifos.ack).read(&mut buf) {
                Ok(n) => answer.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("profile: perf's answer cannot be read ({e})")),
            }
        }
    }
    Ok(())
}

/// A number from a file under `proc` (e.g. `sys/kernel/perf_event_paranoid`), if readable.
fn proc_number(proc: &Path, file: &str) -> Option<i64> {
    std::fs::read_to_string(proc.join(file))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether this process may watch every process of the machine without the sysctl's leave:
/// root, or `CAP_PERFMON` (38) or `CAP_SYS_ADMIN` (21) in its effective set (`status` under
/// `proc`'s `self`).
fn privileged(proc: &Path) -> bool {
    let caps = std::fs::read_to_string(proc.join("self/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .unwrap_or(0);
    caps & (1 << 38 | 1 << 21) != 0
}

/// Why `perf record -a` cannot sample the whole machine for this process, or None: a process
/// without root's capabilities needs `kernel.perf_event_paranoid` at 0 or below (under
/// `proc`). The one line says the cause and the two fixes; perf is then not started at all.
pub fn cannot_sample_machine(proc: &Path) -> Option<String> {
    let paranoid = proc_number(proc, "sys/kernel/perf_event_paranoid")?;
    if paranoid <= 0 || privileged(proc) {
        return None;
    }
    Some(format!(
        "profile: not taken: a user without root's capabilities may sample the whole machine \
         only when kernel.perf_event_paranoid is 0 or below (it is {paranoid} here); run as \
         root, or `sysctl kernel.perf_event_paranoid=0`"
    ))
}

/// Why kernel samples cannot be named here, with the fix, or None: `/proc/kallsyms` (under
/// `proc`) shows every address as zero to this user when `kptr_restrict` is 2 (to everyone),
/// 1 (without `CAP_SYSLOG`), or 0 with `perf_event_paranoid` above 1 (the kernel then hides
/// them from an unprivileged reader too); perf then shows kernel samples as bare addresses,
/// which are left out of the profile.
pub fn kernel_symbols_hidden(proc: &Path) -> Option<String> {
    use std::io::BufRead;
    let file = std::fs::File::open(proc.join("kallsyms")).ok()?;
    let mut first = String::new();
    std::io::BufReader::new(file).read_line(&mut first).ok()?;
    let addr = first.split_whitespace().next()?;
    if !addr.bytes().all(|b| b == b'0') {
        return None;
    }
    let restrict = proc_number(proc, "sys/kernel/kptr_restrict");
    let paranoid = proc_number(proc, "sys/kernel/perf_event_paranoid");
    let (cause, fix) = match (restrict, paranoid) {
        (Some(2), _) => (
            "kptr_restrict 2 hides them from every user, root too".to_string(),
            "set kernel.kptr_restrict=0 or 1 (sysctl)",
        ),
        (Some(0), Some(p)) if p > 1 => (
            format!("perf_event_paranoid {p} hides them from a user without root's capabilities"),
            "run as root, or set kernel.perf_event_paranoid=1 (sysctl)",
        ),
        (Some(r), _) => (
            format!("kptr_restrict {r} hides them from this user"),
            "run as root, or set kernel.kptr_restrict=0 (sysctl)",
        ),
        (None, _) => (
            "this kernel hides them from this user".to_string(),
            "run as root",
        ),
    };
    Some(format!(
        "profile: kernel symbols are hidden ({cause}): kernel samples are left out of the \
         profile; {fix}"
    ))
}

/// Sends perf `signal` and reaps it.
fn stop(mut child: Child, signal: nix::sys::signal::Signal) {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::kill(pid, signal);
    let _ = child.wait();
}

/// The self and children shares of every symbol above [`LIMIT_PCT`] in a perf data file.
fn fold(data: &Path, event: &str) -> Result<BTreeMap<String, f64>, String> {
    let mut shares = BTreeMap::new();
    for (kind, flag) in [("self", "--no-children"), ("children", "--children")] {
        let out = Command::new("perf")
            .args(["report", "--stdio", flag, "--sort", "symbol", "-g", "none"])
            .args(["--percent-limit", LIMIT_PCT, "-i"])
            .arg(data)
            .stderr(Stdio::null())
            .output()
            .map_err(|e| format!("profile: perf report cannot be run ({e})"))?;
        if !out.status.success() {
            return Err(format!("profile: perf report failed ({})", out.status));
        }
        for (sym, pct) in parse_report(&String::from_utf8_lossy(&out.stdout), kind == "children") {
            let key = format!("perf-profile.{kind}.{}.{sym}", event.replace(':', "-"));
            *shares.entry(key).or_insert(0.0) += pct;
        }
    }
    Ok(shares)
}

/// `perf report --stdio` lines (`  12.34%  [k] sym`, or with children
/// `  45.00%  12.00%  [k] sym`): (symbol, share in %), suffixes normalised; the children
/// column when `children`.
pub fn parse_report(text: &str, children: bool) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with('#') || t.is_empty() {
            continue;
        }
        let mut f = t.split_whitespace();
        let Some(first) = f.next().and_then(pct) else {
            continue;
        };
        let mut next = f.next();
        if children {
            // The second column is the self share.
            if next.and_then(pct).is_none() {
                continue;
            }
            next = f.next();
        }
        if !matches!(next, Some("[k]" | "[.]" | "[g]" | "[u]")) {
            continue;
        }
        let Some(sym) = f.next() else { continue };
        // An address perf could not name says nothing across runs.
        if sym.starts_with("0x") {
            continue;
        }
        out.push((normalise(sym), first));
    }
    out
}

fn pct(s: &str) -> Option<f64> {
    s.strip_suffix('%')?.parse().ok()
}

/// Drops the compiler's clone suffixes (`.isra.0`, `.constprop.3`, `.part.1`, `.cold`).
fn normalise(sym: &str) -> String {
    let mut s = sym;
    for marker in [".isra.", ".constprop.", ".part.", ".cold"] {
        if let Some(i) = s.find(marker) {
            s = &s[..i];
        }
    }
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_kernel_symbols_are_said_with_the_fix() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("sys/kernel")).unwrap();
        std::fs::write(d.path().join("sys/kernel/kptr_restrict"), "1\n").unwrap();
        std::fs::write(
            d.path().join("kallsyms"),
            "0000000000000000 A fixed_percpu_data\n",
        )
        .unwrap();
        let why = kernel_symbols_hidden(d.path()).unwrap();
        assert!(
            why.contains("kptr_restrict 1") && why.contains("sysctl"),
            "{why}"
        );
        // kptr_restrict 0 with perf_event_paranoid 2: the cause is the paranoid level, as a
        // normal user saw on this VM (the line used to blame kptr_restrict 0).
        std::fs::write(d.path().join("sys/kernel/kptr_restrict"), "0\n").unwrap();
        std::fs::write(d.path().join("sys/kernel/perf_event_paranoid"), "2\n").unwrap();
        let why = kernel_symbols_hidden(d.path()).unwrap();
        assert!(
            why.contains("perf_event_paranoid 2") && why.contains("perf_event_paranoid=1"),
            "{why}"
        );
        assert!(!why.contains("kptr_restrict=0"), "{why}");
        std::fs::write(d.path().join("kallsyms"), "ffffffff81000000 T _stext\n").unwrap();
        assert_eq!(kernel_symbols_hidden(d.path()), None);
    }

    #[test]
    fn a_user_who_may_not_sample_the_machine_is_told_the_one_cause() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("sys/kernel")).unwrap();
        std::fs::create_dir_all(d.path().join("self")).unwrap();
        let status = |caps: &str| {
            std::fs::write(
                d.path().join("self/status"),
                format!("Name:\tpatchbench\nCapEff:\t{caps}\n"),
            )
            .unwrap()
        };
        std::fs::write(d.path().join("sys/kernel/perf_event_paranoid"), "2\n").unwrap();
        status("0000000000000000");
        let why = cannot_sample_machine(d.path()).unwrap();
        assert!(
            why.contains("is 2 here") && why.contains("perf_event_paranoid=0"),
            "{why}"
        );
        // Root's capabilities (or CAP_PERFMON alone) may.
        status("000001ffffffffff");
        assert_eq!(cannot_sample_machine(d.path()), None);
        status("0000004000000000");
        assert_eq!(cannot_sample_machine(d.path()), None);
        // Anyone may at 0 or -1.
        status("0000000000000000");
        std::fs::write(d.path().join("sys/kernel/perf_event_paranoid"), "-1\n").unwrap();
        assert_eq!(cannot_sample_machine(d.path()), None);
    }

    // perf 6.1's layout.
    const SELF: &str = "# Samples: 1K of event 'cpu-clock'\n#\n# Overhead  Symbol\n\
                        # ........  ......\n#\n    61.20%  [k] clear_page_erms\n\
                        \x20    9.10%  [.] main\n     2.00%  [k] do_anonymous_page.isra.0\n";
    const CHILDREN: &str = "# Children      Self  Symbol\n\
                            \x20   76.00%     0.00%  [.] 0x0000000000841f0f\n\
                            \x20   99.80%     0.10%  [k] entry_SYSCALL_64_after_hwframe\n\
                            \x20   61.20%    61.20%  [k] clear_page_erms\n";

    #[test]
    fn reports_fold_into_symbol_shares() {
        let s = parse_report(SELF, false);
        assert_eq!(s[0], ("clear_page_erms".to_string(), 61.2));
        assert_eq!(s[1], ("main".to_string(), 9.1));
        assert_eq!(s[2], ("do_anonymous_page".to_string(), 2.0));
        let c = parse_report(CHILDREN, true);
        assert_eq!(c[0], ("entry_SYSCALL_64_after_hwframe".to_string(), 99.8));
        assert_eq!(c.len(), 2);
    }
}
