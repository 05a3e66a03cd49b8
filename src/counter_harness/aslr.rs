//! Address-space randomisation for a run. will-it-scale's `runtest.py` runs every test binary
//! under `setarch linux64 -R`, which sets the `ADDR_NO_RANDOMIZE` personality and execs the
//! binary, because a random layout changes page-table shapes and so the page-fault tests from
//! one run to the next. The personality takes effect at the next exec (the layout is chosen
//! then; forked tasks inherit their parent's), so [`disable_by_reexec`] does what `setarch -R`
//! does to the whole patchbench process: it sets the personality and execs the same binary with
//! the same arguments once, before any work, so every task forked afterwards has the fixed
//! layout. If the kernel refuses (a seccomp filter), the run goes on randomised and says so,
//! as runtest.py warns and goes on.

use serde::Serialize;

/// The personality flag `setarch -R` sets.
const ADDR_NO_RANDOMIZE: libc::c_ulong = libc::ADDR_NO_RANDOMIZE as libc::c_ulong;
/// In the environment of the re-exec'd image only (removed at once).
const REEXEC_MARK: &str = "PATCHBENCH_ASLR_REEXEC";
/// `personality(0xffffffff)` reads the personality without changing it.
const QUERY: libc::c_ulong = 0xffff_ffff;

/// Whether this run's tasks have a randomised layout, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Aslr {
    pub randomised: bool,
    pub how: String,
}

impl Aslr {
    /// For the run's first lines: `ASLR off (...)`.
    pub fn describe(&self) -> String {
        let state = if self.randomised { "on" } else { "off" };
        format!("ASLR {state} ({})", self.how)
    }
}

fn system_setting() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/randomize_va_space")
        .ok()
        .map(|s| s.trim().to_string())
}

fn personality() -> Option<libc::c_ulong> {
    // SAFETY: the query form of personality changes nothing.
    let p = unsafe { libc::personality(QUERY) };
    (p >= 0).then_some(p as libc::c_ulong)
}

/// The layout this process has now.
pub fn current() -> Aslr {
    if system_setting().as_deref() == Some("0") {
        return Aslr {
            randomised: false,
            how: "kernel.randomize_va_space is 0".into(),
        };
    }
    match personality() {
        Some(p) if p & ADDR_NO_RANDOMIZE != 0 => Aslr {
            randomised: false,
            how: "ADDR_NO_RANDOMIZE personality, as will-it-scale's setarch -R".into(),
        },
        _ => Aslr {
            randomised: true,
            how: format!(
                "kernel.randomize_va_space is {}",
                system_setting().unwrap_or_else(|| "unreadable".into())
            ),
        },
    }
}

/// The layout this process has now, for a run that asked to keep randomisation (`--aslr`).
pub fn kept() -> Aslr {
    let mut a = current();
    if a.randomised {
        a.how = format!("kept by --aslr; {}", a.how);
    }
    a
}

/// Makes sure this process runs with a fixed layout: when it is randomised, sets
/// `ADDR_NO_RANDOMIZE` and execs this binary again with the same arguments (so this returns
/// only in the new image, or when nothing was needed, or when the kernel refused; then the
/// result says why the run stays randomised). Call before any work: nothing done so far
/// survives the exec.
pub fn disable_by_reexec() -> Aslr {
    // Set in the environment of the one re-exec, so a kernel that drops the personality at
    // exec (a set-user-ID binary) cannot make this exec itself for ever.
    let reexecuted = std::env::var_os(REEXEC_MARK).is_some();
    if reexecuted {
        // The image is fixed now; nothing below should inherit the mark.
        std::env::remove_var(REEXEC_MARK);
    }
    let now = current();
    if !now.randomised {
        return now;
    }
    let refused = |why: String| Aslr {
        randomised: true,
        how: format!(
            "could not be turned off: {why}; address-space randomisation may cause variability"
        ),
    };
    if reexecuted {
        return refused("the personality did not survive the exec".into());
    }
    let Some(p) = personality() else {
        return refused(format!("personality: {}", std::io::Error::last_os_error()));
    };
    // SAFETY: setting a personality flag of this process.
    if unsafe { libc::personality(p | ADDR_NO_RANDOMIZE) } < 0
        || personality() != Some(p | ADDR_NO_RANDOMIZE)
    {
        return refused(format!(
            "personality(ADDR_NO_RANDOMIZE): {}",
            std::io::Error::last_os_error()
        ));
    }
    let err = reexec();
    // SAFETY: putting back the personality this process had.
    unsafe { libc::personality(p) };
    refused(format!("cannot exec /proc/self/exe: {err}"))
}

/// Execs this binary with this process's arguments and environment; returns only on failure.
fn reexec() -> std::io::Error {
    use std::os::unix::process::CommandExt;
    let mut args = std::env::args_os();
    let mut cmd = std::process::Command::new("/proc/self/exe");
    cmd.env(REEXEC_MARK, "1");
    if let Some(arg0) = args.next() {
        cmd.arg0(arg0);
    }
    cmd.args(args).exec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_state_has_a_reason() {
        let a = current();
        assert!(!a.how.is_empty());
        assert!(a.describe().starts_with("ASLR "));
    }
}
