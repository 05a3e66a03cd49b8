//! The kernel configuration a build uses, resolved once and checked.
//!
//! A config starts from one of: `running` (this machine's kernel's: `/boot/config-RELEASE` or
//! `/proc/config.gz`), `tiny` (`make tinyconfig` for x86_64 plus [`TINY`], the options our vm
//! executor's guest and every workload need), a file, or an already resolved `.config` (the
//! base side's, for the patched side; bisect's, for every commit). Then come the fragments every
//! build gets ([`FAIRNESS`]: debug options that change speed off and one preemption model, as
//! LKP's benchmark category does; [`REPRODUCIBLE`]: what would make two builds of one key
//! differ), then the user's `--fragment`s, in that order (the last assignment of a symbol
//! wins, as with virtme-ng and `merge_config.sh`); then `make olddefconfig`. Kconfig silently
//! drops what a dependency forbids, so every requested value is checked again afterwards, as
//! LKP's `need_kconfig` filter does, and the ones that did not hold are reported.
//!
//! An already resolved config gets no fragment: only `make olddefconfig` at the build's commit
//! (a patch may add a symbol: it gets its default), and the differences to the given config
//! are reported ([`diff`]).
//!
//! Resolution happens in a scratch object directory of its own, never in a build slot's, so
//! the slot's `.config` is rewritten only when the resolved config differs from it.

use crate::error::Usage;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Where a build's config starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigChoice {
    /// The running kernel's config (`/boot/config-$(uname -r)`, else `/proc/config.gz`).
    Running,
    /// `make tinyconfig` plus what the vm executor and the workloads need ([`TINY`]).
    Tiny,
    /// A config file, taken as a starting point (fragments and `olddefconfig` follow).
    File(PathBuf),
    /// A config resolved before (the other side's `.config`): `olddefconfig` only.
    Resolved(PathBuf),
}

impl ConfigChoice {
    /// The user's fragments that apply to this choice: none to an already resolved config
    /// (it has its fragments already), all of them to any other.
    pub fn fragments(&self, given: &[PathBuf]) -> Vec<PathBuf> {
        if matches!(self, ConfigChoice::Resolved(_)) {
            Vec::new()
        } else {
            given.to_vec()
        }
    }
}

impl ConfigChoice {
    /// `running`, `tiny` or a file, as `--config` takes it.
    pub fn parse(s: &str) -> ConfigChoice {
        match s {
            "running" => ConfigChoice::Running,
            "tiny" => ConfigChoice::Tiny,
            f => ConfigChoice::File(PathBuf::from(f)),
        }
    }

    /// How it is named in records: `running`, `tiny`, `file NAME`, `resolved`.
    pub fn describe(&self) -> String {
        match self {
            ConfigChoice::Running => "running".to_string(),
            ConfigChoice::Tiny => "tiny".to_string(),
            ConfigChoice::File(p) => format!(
                "file {}",
                p.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ),
            ConfigChoice::Resolved(_) => "resolved".to_string(),
        }
    }
}

/// What the vm executor's guest and every workload need beyond `make tinyconfig` (which is
/// allnoconfig with EXPERT, a 32-bit kernel on x86 unless told, no SMP, SLOB, size
/// optimisation, the guess unwinder). Every option and why: docs/build.md.
pub const TINY: &str = "\
CONFIG_64BIT=y
CONFIG_SMP=y
CONFIG_NR_CPUS=64
CONFIG_CC_OPTIMIZE_FOR_PERFORMANCE=y
CONFIG_SLUB=y
CONFIG_UNWINDER_ORC=y
CONFIG_KERNEL_GZIP=y
CONFIG_MODULES=n
CONFIG_PRINTK=y
CONFIG_BUG=y
CONFIG_EARLY_PRINTK=y
CONFIG_TTY=y
CONFIG_UNIX98_PTYS=y
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y
CONFIG_BINFMT_ELF=y
CONFIG_BINFMT_SCRIPT=y
CONFIG_PROC_FS=y
CONFIG_PROC_SYSCTL=y
CONFIG_SYSFS=y
CONFIG_DEVTMPFS=y
CONFIG_DEVTMPFS_MOUNT=y
CONFIG_TMPFS=y
CONFIG_SHMEM=y
CONFIG_BLK_DEV_INITRD=y
CONFIG_PCI=y
CONFIG_PCI_MSI=y
CONFIG_ACPI=y
CONFIG_HYPERVISOR_GUEST=y
CONFIG_PARAVIRT=y
CONFIG_KVM_GUEST=y
CONFIG_VIRTIO_MENU=y
CONFIG_VIRTIO=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_CONSOLE=y
CONFIG_NET=y
CONFIG_INET=y
CONFIG_UNIX=y
CONFIG_NET_9P=y
CONFIG_NET_9P_VIRTIO=y
CONFIG_NETWORK_FILESYSTEMS=y
CONFIG_9P_FS=y
CONFIG_MULTIUSER=y
CONFIG_FUTEX=y
CONFIG_EPOLL=y
CONFIG_EVENTFD=y
CONFIG_SIGNALFD=y
CONFIG_TIMERFD=y
CONFIG_POSIX_TIMERS=y
CONFIG_FILE_LOCKING=y
CONFIG_RSEQ=y
CONFIG_AIO=y
CONFIG_ADVISE_SYSCALLS=y
CONFIG_MEMBARRIER=y
CONFIG_FHANDLE=y
CONFIG_INOTIFY_USER=y
CONFIG_SYSVIPC=y
CONFIG_POSIX_MQUEUE=y
CONFIG_BLOCK=y
CONFIG_BLK_DEV=y
CONFIG_BLK_DEV_RAM=y
CONFIG_BLK_DEV_RAM_COUNT=1
CONFIG_EXT4_FS=y
CONFIG_PERF_EVENTS=y
CONFIG_KALLSYMS=y
CONFIG_HIGH_RES_TIMERS=y
CONFIG_NO_HZ_IDLE=y
CONFIG_HZ_250=y
CONFIG_SCHEDSTATS=y
CONFIG_VM_EVENT_COUNTERS=y
";

/// Applied to every config: the debug and tracing options that change speed off (LKP's
/// benchmark category, then ours), and one preemption model, so that two commits are compared
/// under the same kernel (LKP: "to have fair comparison between different commits"). Every
/// option and why: docs/build.md.
pub const FAIRNESS: &str = "\
CONFIG_EXPERT=y
CONFIG_XFS_DEBUG=n
CONFIG_XFS_ONLINE_SCRUB_STATS=n
CONFIG_PM_DEBUG=n
CONFIG_PM_SLEEP_DEBUG=n
CONFIG_DEBUG_ATOMIC_SLEEP=n
CONFIG_DEBUG_SPINLOCK_SLEEP=n
CONFIG_CIFS_DEBUG=n
CONFIG_NFS_DEBUG=n
CONFIG_SUNRPC_DEBUG=n
CONFIG_DM_DEBUG=n
CONFIG_SCSI_DEBUG=n
CONFIG_DEBUG_SHIRQ=n
CONFIG_DEBUG_MEMORY_INIT=n
CONFIG_BUG_ON_DATA_CORRUPTION=n
CONFIG_DEBUG_LIST=n
CONFIG_DEBUG_PLIST=n
CONFIG_PREEMPT_NONE=n
CONFIG_PREEMPT=n
CONFIG_PREEMPT_RT=n
CONFIG_PREEMPT_DYNAMIC=n
CONFIG_PREEMPT_VOLUNTARY=y
CONFIG_PROVE_LOCKING=n
CONFIG_DEBUG_LOCK_ALLOC=n
CONFIG_LOCK_STAT=n
CONFIG_DEBUG_SPINLOCK=n
CONFIG_DEBUG_MUTEXES=n
CONFIG_DEBUG_RWSEMS=n
CONFIG_DEBUG_WW_MUTEX_SLOWPATH=n
CONFIG_DEBUG_PREEMPT=n
CONFIG_DEBUG_IRQFLAGS=n
CONFIG_IRQSOFF_TRACER=n
CONFIG_PREEMPT_TRACER=n
CONFIG_KASAN=n
CONFIG_KCSAN=n
CONFIG_KMSAN=n
CONFIG_UBSAN=n
CONFIG_KCOV=n
CONFIG_GCOV_KERNEL=n
CONFIG_DEBUG_PAGEALLOC=n
CONFIG_PAGE_POISONING=n
CONFIG_SLUB_DEBUG_ON=n
CONFIG_DEBUG_OBJECTS=n
CONFIG_DEBUG_KMEMLEAK=n
CONFIG_DEBUG_VM=n
CONFIG_DEBUG_SG=n
CONFIG_DEBUG_NOTIFIERS=n
CONFIG_DEBUG_CREDENTIALS=n
CONFIG_DEBUG_PER_CPU_MAPS=n
CONFIG_DEBUG_KOBJECT=n
";

/// Applied to every config after [`FAIRNESS`]: what would make two builds of one key differ,
/// or make a build need what a stock tree lacks (Debian's config names a certificate file the
/// source package does not carry).
pub const REPRODUCIBLE: &str = "\
CONFIG_LOCALVERSION=\"\"
CONFIG_LOCALVERSION_AUTO=n
CONFIG_MODULE_SIG=n
CONFIG_MODULE_SIG_ALL=n
CONFIG_SYSTEM_TRUSTED_KEYS=\"\"
CONFIG_SYSTEM_REVOCATION_KEYS=\"\"
CONFIG_DEBUG_INFO_BTF=n
CONFIG_IKHEADERS=n
";

/// A fragment: `CONFIG_X=VALUE` lines and `# CONFIG_X is not set` (= `n`), with where each
/// came from, in order.
#[derive(Debug, Clone, Default)]
pub struct Fragment {
    pub values: Vec<(String, String)>,
}

impl Fragment {
    /// Reads fragment text; `name` names it in errors.
    pub fn parse(name: &str, text: &str) -> Result<Fragment, String> {
        let mut values = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            match config_line(raw) {
                Ok(Some(v)) => values.push(v),
                Ok(None) => {}
                Err(why) => return Err(bad_line(name, i, raw, why)),
            }
        }
        Ok(Fragment { values })
    }

    /// The text appended to a `.config` (`=n` written as kconfig reads it).
    pub fn text(&self) -> String {
        self.values
            .iter()
            .map(|(s, v)| {
                if v == "n" {
                    format!("# {s} is not set\n")
                } else {
                    format!("{s}={v}\n")
                }
            })
            .collect()
    }
}

/// A `.config` read as symbol → value (`n` for `# ... is not set`).
pub fn values(config: &str) -> BTreeMap<String, String> {
    Fragment::parse("", config)
        .map(|f| f.values.into_iter().collect())
        .unwrap_or_else(|_| {
            // A real .config has only those lines; keep what can be read.
            config
                .lines()
                .filter_map(|l| {
                    if let Some(sym) = l
                        .strip_prefix("# ")
                        .and_then(|r| r.strip_suffix(" is not set"))
                    {
                        return Some((sym.to_string(), "n".to_string()));
                    }
                    let (s, v) = l.split_once('=')?;
                    s.starts_with("CONFIG_")
                        .then(|| (s.to_string(), v.to_string()))
                })
                .collect()
        })
}

/// A requested value that kconfig did not keep.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Dropped {
    pub symbol: String,
    pub wanted: String,
    /// What the resolved config has (`n` when absent).
    pub got: String,
    /// Which fragment asked for it (`tiny`, `fairness`, `reproducible` or a file name).
    pub from: String,
    /// Why kconfig did not keep it, as far as the tree shows ([`explain`]); empty in records
    /// of earlier builds.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why: String,
}

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}={} (from {}) became {}",
            self.symbol, self.wanted, self.from, self.got
        )?;
        if !self.why.is_empty() {
            write!(f, ": {}", self.why)?;
        }
        Ok(())
    }
}

/// Says why each dropped value was not kept, from the tree at `src` (its Kconfig files): an
/// unknown symbol, a forced or selected one, an unmet dependency, a value not taken.
pub fn explain(dropped: &mut [Dropped], src: &Path) {
    for d in dropped {
        d.why = reason(d, symbol_in_kconfig(src, &d.symbol)).to_string();
    }
}

/// Why `d` was not kept; `known`: whether the tree's Kconfig defines its symbol (None: not
/// known).
fn reason(d: &Dropped, known: Option<bool>) -> &'static str {
    let tristate = |v: &str| matches!(v, "y" | "m" | "n");
    match (known, d.wanted.as_str(), d.got.as_str()) {
        (Some(false), _, _) => "this tree's Kconfig has no such symbol",
        (_, "n", _) => "another enabled option selects it, or it cannot be turned off",
        (_, "m", "y") => "it can only be built in here (modules off, or selected as built-in)",
        (_, w, "n") if w == "y" || w == "m" => {
            "a dependency is not met (see its `depends on` in Kconfig)"
        }
        (_, w, _) if !tristate(w) => {
            "kconfig did not take the value (out of its range, or the symbol has no prompt)"
        }
        _ => "kconfig chose another value (a dependency or a select)",
    }
}

/// Whether a Kconfig file of the tree at `src` defines `symbol` (`config X` or `menuconfig
/// X`); None when git cannot say.
fn symbol_in_kconfig(src: &Path, symbol: &str) -> Option<bool> {
    let name = symbol.strip_prefix("CONFIG_")?;
    let out = super::tree::output(
        super::tree::git(src).args([
            "grep",
            "-q",
            "-E",
            &format!("^[[:space:]]*(menu)?config[[:space:]]+{name}[[:space:]]*$"),
            "--",
            "Kconfig*",
            "*/Kconfig*",
        ]),
        "git grep",
    )
    .ok()?;
    match out.status.code() {
        Some(0) => Some(true),
        Some(1) => Some(false),
        _ => None,
    }
}

/// The requested values kconfig did not keep: `n` holds when the symbol is unset or absent;
/// anything else must be there as written. The last request of a symbol counts.
pub fn recheck(requests: &[(String, Fragment)], config: &str) -> Vec<Dropped> {
    let have = values(config);
    let mut last: BTreeMap<&str, (&str, &str)> = BTreeMap::new();
    for (from, frag) in requests {
        for (s, v) in &frag.values {
            last.insert(s.as_str(), (v.as_str(), from.as_str()));
        }
    }
    last.into_iter()
        .filter_map(|(sym, (wanted, from))| {
            let got = have.get(sym).map(String::as_str).unwrap_or("n");
            // An empty string is what an absent string symbol means too.
            let absent = !have.contains_key(sym);
            let same = got == wanted || (wanted == "\"\"" && absent);
            (!same).then(|| Dropped {
                symbol: sym.to_string(),
                wanted: wanted.to_string(),
                got: got.to_string(),
                from: from.to_string(),
                why: String::new(),
            })
        })
        .collect()
}

/// The symbols whose values differ from `a` to `b`: `CONFIG_X: y -> n` (absent shown as
/// `n`), in symbol order.
pub fn diff(a: &str, b: &str) -> Vec<String> {
    let (va, vb) = (values(a), values(b));
    let mut out = Vec::new();
    let syms: std::collections::BTreeSet<&String> = va.keys().chain(vb.keys()).collect();
    for s in syms {
        let x = va.get(s).map(String::as_str).unwrap_or("n");
        let y = vb.get(s).map(String::as_str).unwrap_or("n");
        if x != y {
            out.push(format!("{s}: {x} -> {y}"));
        }
    }
    out
}

/// The running kernel's config text: `/boot/config-RELEASE`, else `/proc/config.gz`.
pub fn running_config() -> anyhow::Result<(String, String)> {
    let release = nix::sys::utsname::uname()
        .map(|u| u.release().to_string_lossy().into_owned())
        .unwrap_or_default();
    let boot = PathBuf::from(format!("/boot/config-{release}"));
    if let Ok(text) = std::fs::read_to_string(&boot) {
        return Ok((text, boot.display().to_string()));
    }
    let gz = Path::new("/proc/config.gz");
    if let Ok(f) = std::fs::File::open(gz) {
        let mut text = String::new();
        flate2::read::GzDecoder::new(f)
            .read_to_string(&mut text)
            .map_err(|e| anyhow::anyhow!("cannot read /proc/config.gz: {e}"))?;
        return Ok((text, gz.display().to_string()));
    }
    Err(Usage(format!(
        "--config running: the running kernel's config is neither in {} nor in \
         /proc/config.gz; give --config tiny or --config FILE",
        boot.display()
    ))
    .into())
}

/// Reads a config or fragment file the user named; bad input when it cannot be read.
pub fn read_user_file(what: &str, path: &Path) -> anyhow::Result<String> {
    let bytes = super::input::read_bounded(what, path, super::input::CONFIG_LIMIT)?;
    String::from_utf8(bytes).map_err(|_| {
        Usage(format!(
            "the {what} {} is not text",
            crate::safe_text::field(&path.display().to_string())
        ))
        .into()
    })
}

/// Where a resolution starts, read when the build is asked for (so a file that changes later
/// does not change what was asked).
#[derive(Debug, Clone)]
pub struct Start {
    pub choice: ConfigChoice,
    /// The config text it starts from (None for `tiny`, which `make tinyconfig` makes).
    pub text: Option<String>,
    /// Where the text came from (`/proc/config.gz`, the file's path).
    pub origin: String,
}

/// One line of a config or fragment, checked as kconfig writes them: `CONFIG_X=y|m|n`, a
/// number (`123`, `-1`, `0x1f`), a `"string"` (with `\"` and `\\` escapes, closed at the
/// line's end), `# CONFIG_X is not set` (as `n`), another comment or a blank line (None).
fn config_line(raw: &str) -> Result<Option<(String, String)>, &'static str> {
    let line = raw.trim();
    if line.is_empty() {
        return Ok(None);
    }
    if let Some(comment) = line.strip_prefix('#') {
        let not_set = comment
            .trim_start()
            .strip_suffix(" is not set")
            .filter(|sym| symbol_ok(sym));
        return Ok(not_set.map(|sym| (sym.to_string(), "n".to_string())));
    }
    let Some((sym, value)) = line.split_once('=') else {
        return Err("not CONFIG_X=VALUE");
    };
    if !symbol_ok(sym) {
        return Err("no CONFIG_ symbol before the =");
    }
    let number = |v: &str| {
        let digits = v.strip_prefix('-').unwrap_or(v);
        (!digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()))
            || v.strip_prefix("0x")
                .or_else(|| v.strip_prefix("0X"))
                .is_some_and(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()))
    };
    if matches!(value, "y" | "m" | "n") || number(value) {
        return Ok(Some((sym.to_string(), value.to_string())));
    }
    if let Some(inner) = value.strip_prefix('"') {
        // Closed by the last character, with every quote inside escaped.
        let mut escaped = false;
        let mut closed_at = None;
        for (i, c) in inner.char_indices() {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => {
                    closed_at = Some(i);
                    break;
                }
                _ => {}
            }
        }
        return match closed_at {
            Some(i) if i + 1 == inner.len() => Ok(Some((sym.to_string(), value.to_string()))),
            Some(_) => Err("text after the closing quote"),
            None => Err("an unterminated string"),
        };
    }
    Err("a value that is not y, m, n, a number or a \"string\"")
}

/// `CONFIG_` and at least one letter, digit or underscore.
fn symbol_ok(sym: &str) -> bool {
    sym.strip_prefix("CONFIG_").is_some_and(|rest| {
        !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The one-line complaint about line `i` (0-based) of config text `name`.
fn bad_line(name: &str, i: usize, raw: &str, why: &str) -> String {
    format!(
        "{name} line {}: {:?} is not a config line ({why}; a line is CONFIG_X=y, CONFIG_X=n, \
         CONFIG_X=\"text\", CONFIG_X=123 or # CONFIG_X is not set)",
        i + 1,
        crate::safe_text::field_cut(raw, 60)
    )
}

impl Start {
    /// Reads what `choice` starts from; bad input when it cannot be read.
    pub fn read(choice: &ConfigChoice) -> anyhow::Result<Start> {
        let (text, origin) = match choice {
            ConfigChoice::Tiny => (None, "make tinyconfig".to_string()),
            ConfigChoice::Running => {
                let (t, o) = running_config()?;
                (Some(t), o)
            }
            ConfigChoice::File(p) | ConfigChoice::Resolved(p) => {
                (Some(read_user_file("config", p)?), p.display().to_string())
            }
        };
        if let Some(t) = &text {
            for (i, raw) in t.lines().enumerate() {
                if let Err(why) = config_line(raw) {
                    return Err(Usage(format!(
                        "{}: give a kernel .config",
                        bad_line(&format!("the config {origin}"), i, raw, why)
                    ))
                    .into());
                }
            }
            if !t.lines().any(|l| l.starts_with("CONFIG_")) {
                return Err(Usage(format!(
                    "the config {origin} has no CONFIG_ line: give a kernel .config"
                ))
                .into());
            }
        }
        Ok(Start {
            choice: choice.clone(),
            text,
            origin,
        })
    }

    /// What identifies this start in the memo of resolved configs.
    pub fn identity(&self) -> String {
        let digest = |t: &str| super::tree::short_hash(t.as_bytes());
        match (&self.choice, &self.text) {
            (ConfigChoice::Tiny, _) => format!("tiny:{}", digest(TINY)),
            (ConfigChoice::Resolved(_), Some(t)) => format!("resolved:{}", digest(t)),
            (_, Some(t)) => format!("from:{}", digest(t)),
            (_, None) => "none".to_string(),
        }
    }

    /// The fragments every build of this start gets before the user's: `tiny`'s own (for
    /// `tiny`), then fairness and reproducibility; none for a resolved config.
    pub fn shipped(&self) -> Vec<(String, Fragment)> {
        let parse = |n: &str, t: &str| (n.to_string(), Fragment::parse(n, t).unwrap_or_default());
        match self.choice {
            ConfigChoice::Resolved(_) => Vec::new(),
            ConfigChoice::Tiny => vec![
                parse("tiny", TINY),
                parse("fairness", FAIRNESS),
                parse("reproducible", REPRODUCIBLE),
            ],
            _ => vec![
                parse("fairness", FAIRNESS),
                parse("reproducible", REPRODUCIBLE),
            ],
        }
    }
}

/// A resolved config.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Resolved {
    pub text: String,
    pub sha256: String,
    /// Requested values kconfig did not keep.
    pub dropped: Vec<Dropped>,
    /// From a resolved config: what `olddefconfig` changed in it at this commit.
    pub diff: Vec<String>,
}

/// Where a resolution works.
#[derive(Debug, Clone, Copy)]
pub struct Places<'a> {
    /// The kernel source (a checkout at the build's commit); only read.
    pub src: &'a Path,
    /// A fresh object directory of the resolution's own (`O=`).
    pub scratch: &'a Path,
    /// make's output is appended here.
    pub log: &'a Path,
    /// The cache (named in a full-disk message).
    pub cache_root: &'a Path,
}

/// Resolves `start` with `user` fragments in `places.scratch`.
pub fn resolve(
    start: &Start,
    user: &[(String, Fragment)],
    places: Places,
    progress: &crate::progress::Progress,
    signals: &crate::proc::signals::Signals,
) -> anyhow::Result<Resolved> {
    use super::disk_full::full_or;
    use super::make::{run, Make};
    let Places {
        src,
        scratch,
        log,
        cache_root,
    } = places;
    std::fs::create_dir_all(scratch)
        .map_err(|e| full_or(cache_root, e, "cannot make the config's directory"))?;
    let make = |target: &str| Make {
        src,
        obj: scratch,
        jobs: 1,
        vars: Vec::new(),
        env: Vec::new(),
        targets: vec![target.to_string()],
    };
    let dot_config = scratch.join(".config");
    match &start.text {
        None => run(
            &make("tinyconfig"),
            log,
            "tinyconfig",
            cache_root,
            progress,
            signals,
        )?
        .map_err(super::make::Failed::into_error)?,
        Some(t) => std::fs::write(&dot_config, t)
            .map_err(|e| full_or(cache_root, e, "cannot write the config"))?,
    }
    let mut requests = start.shipped();
    if !matches!(start.choice, ConfigChoice::Resolved(_)) {
        requests.extend(user.iter().cloned());
    }
    let appended: String = requests.iter().map(|(_, f)| f.text()).collect();
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&dot_config)
            .map_err(|e| anyhow::anyhow!("cannot open {}: {e}", dot_config.display()))?;
        f.write_all(appended.as_bytes())
            .map_err(|e| full_or(cache_root, e, "cannot write the config"))?;
    }
    run(
        &make("olddefconfig"),
        log,
        "olddefconfig",
        cache_root,
        progress,
        signals,
    )?
    .map_err(super::make::Failed::into_error)?;
    let text = std::fs::read_to_string(&dot_config)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", dot_config.display()))?;
    let mut dropped = recheck(&requests, &text);
    explain(&mut dropped, places.src);
    let diff = match (&start.choice, &start.text) {
        (ConfigChoice::Resolved(_), Some(given)) => diff(given, &text),
        _ => Vec::new(),
    };
    use sha2::Digest;
    Ok(Resolved {
        sha256: super::tree::hex(&sha2::Sha256::digest(text.as_bytes())),
        text,
        dropped,
        diff,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_lines_are_checked_as_kconfig_writes_them() {
        for good in [
            "CONFIG_SMP=y",
            "CONFIG_X86=m",
            "CONFIG_NR_CPUS=64",
            "CONFIG_X=-1",
            "CONFIG_PHYSICAL_START=0x1000000",
            "CONFIG_CMDLINE=\"console=ttyS0 a=\\\"b\\\"\"",
            "CONFIG_EMPTY=\"\"",
            "# CONFIG_FOO is not set",
            "# Automatically generated file; DO NOT EDIT.",
            "",
        ] {
            assert!(config_line(good).is_ok(), "{good}");
        }
        for (bad, why) in [
            ("CONFIG_SMP=maybe", "not y, m, n"),
            ("CONFIG_CMDLINE=\"console=ttyS0", "unterminated"),
            ("CONFIG_CMDLINE=\"a\" b", "after the closing quote"),
            ("CONFIG_=y", "no CONFIG_ symbol"),
            ("=y", "no CONFIG_ symbol"),
            ("hello world", "not CONFIG_X=VALUE"),
            ("CONFIG_X=0x", "not y, m, n"),
        ] {
            assert!(config_line(bad).unwrap_err().contains(why), "{bad}");
        }
        let e = Fragment::parse("f.config", "CONFIG_A=y\nCONFIG_SMP=maybe\n").unwrap_err();
        assert!(
            e.starts_with("f.config line 2:") && e.contains("not y, m, n"),
            "{e}"
        );
        // A text that is no config is no starting point.
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("hello");
        std::fs::write(&f, "hello world\nCONFIG_\n=y\n").unwrap();
        let e = Start::read(&ConfigChoice::File(f)).unwrap_err().to_string();
        assert!(
            e.contains("line 1") && e.contains("give a kernel .config"),
            "{e}"
        );
    }

    #[test]
    fn the_shipped_fragments_parse_and_pin_one_preemption_model() {
        for (name, text) in [
            ("tiny", TINY),
            ("fairness", FAIRNESS),
            ("reproducible", REPRODUCIBLE),
        ] {
            let f = Fragment::parse(name, text).unwrap();
            assert!(!f.values.is_empty());
        }
        let f = Fragment::parse("fairness", FAIRNESS).unwrap();
        let v: BTreeMap<_, _> = f.values.into_iter().collect();
        assert_eq!(v["CONFIG_PREEMPT_VOLUNTARY"], "y");
        for other in [
            "CONFIG_PREEMPT_NONE",
            "CONFIG_PREEMPT",
            "CONFIG_PREEMPT_RT",
            "CONFIG_PREEMPT_DYNAMIC",
        ] {
            assert_eq!(v[other], "n");
        }
    }

    #[test]
    fn fragments_are_checked_and_the_last_request_counts() {
        let e = Fragment::parse("my.frag", "CONFIG_A=y\nhello\n").unwrap_err();
        assert!(e.contains("my.frag line 2"), "{e}");
        let a =
            Fragment::parse("a", "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"x\"\n").unwrap();
        let b = Fragment::parse("b", "CONFIG_A=n\nCONFIG_D=y\n").unwrap();
        assert_eq!(
            a.text(),
            "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"x\"\n"
        );
        let config = "CONFIG_C=\"x\"\nCONFIG_D=m\n# CONFIG_A is not set\n";
        let dropped = recheck(&[("a".into(), a), ("b".into(), b)], config);
        assert_eq!(
            dropped,
            vec![Dropped {
                symbol: "CONFIG_D".into(),
                wanted: "y".into(),
                got: "m".into(),
                from: "b".into(),
                why: String::new(),
            }]
        );
        assert_eq!(dropped[0].to_string(), "CONFIG_D=y (from b) became m");
    }

    #[test]
    fn a_dropped_value_says_why_from_the_trees_kconfig() {
        let d = tempfile::tempdir().unwrap();
        let src = d.path();
        std::fs::create_dir_all(src.join("init")).unwrap();
        std::fs::write(src.join("Kconfig"), "source \"init/Kconfig\"\n").unwrap();
        std::fs::write(
            src.join("init/Kconfig"),
            "config MODULE_SIG\n\tbool\nmenuconfig NET\n\tbool \"net\"\n",
        )
        .unwrap();
        super::super::tree::run(super::super::tree::git(src).args(["init", "-q"]), "init").unwrap();
        super::super::tree::run(super::super::tree::git(src).args(["add", "-A"]), "add").unwrap();
        let drop = |sym: &str, wanted: &str, got: &str| Dropped {
            symbol: sym.into(),
            wanted: wanted.into(),
            got: got.into(),
            from: "f".into(),
            why: String::new(),
        };
        let mut all = vec![
            drop("CONFIG_NO_SUCH", "y", "n"),
            drop("CONFIG_MODULE_SIG", "n", "y"),
            drop("CONFIG_NET", "y", "n"),
            drop("CONFIG_NET", "m", "y"),
            drop("CONFIG_NET", "64", "32"),
        ];
        explain(&mut all, src);
        let whys: Vec<&str> = all.iter().map(|d| d.why.as_str()).collect();
        assert_eq!(
            whys,
            vec![
                "this tree's Kconfig has no such symbol",
                "another enabled option selects it, or it cannot be turned off",
                "a dependency is not met (see its `depends on` in Kconfig)",
                "it can only be built in here (modules off, or selected as built-in)",
                "kconfig did not take the value (out of its range, or the symbol has no prompt)",
            ]
        );
        assert_eq!(
            all[0].to_string(),
            "CONFIG_NO_SUCH=y (from f) became n: this tree's Kconfig has no such symbol"
        );
    }

    #[test]
    fn a_diff_names_each_symbol_that_changed() {
        let a = "CONFIG_A=y\nCONFIG_B=y\n# CONFIG_C is not set\n";
        let b = "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=y\nCONFIG_NEW=y\n";
        assert_eq!(
            diff(a, b),
            vec!["CONFIG_B: y -> n", "CONFIG_C: n -> y", "CONFIG_NEW: n -> y"]
        );
        assert!(diff(a, a).is_empty());
    }
}
