//! Checks before anything starts: the process limit against the copies requested, and where
//! the worker program is.

use crate::error::usage;
use std::path::PathBuf;

/// Number of processes (threads count too) the current user has now.
fn user_processes(uid: u32) -> u64 {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    dir.filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("status")).ok())
        .filter(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u32>().ok())
                == Some(uid)
        })
        .map(|s| {
            s.lines()
                .find(|l| l.starts_with("Threads:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(1)
        })
        .sum()
}

/// Fails with a clear message when RLIMIT_NPROC cannot accommodate `needed` more processes.
/// Root is exempt from the limit in the kernel, and so here.
pub fn check_process_limit(needed: u64, what: &str) -> anyhow::Result<()> {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    if uid == 0 {
        return Ok(());
    }
    let (soft, _) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NPROC)?;
    if soft == nix::sys::resource::RLIM_INFINITY {
        return Ok(());
    }
    let have = user_processes(uid);
    if have + needed > soft {
        return usage(format!(
            "{what} needs up to {needed} processes, but the process limit (ulimit -u) is {soft} \
             and this user already has {have}; raise it with `ulimit -u {}` or run fewer copies",
            have + needed + 16
        ));
    }
    Ok(())
}

/// The `patchbench-worker` program: $PATCHBENCH_WORKER, else next to this executable.
pub fn worker_program() -> anyhow::Result<PathBuf> {
    if let Some(p) = std::env::var_os("PATCHBENCH_WORKER") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe()?;
    let worker = exe.with_file_name("patchbench-worker");
    if worker.is_file() {
        return Ok(worker);
    }
    usage(format!(
        "the worker program {} is missing; build every binary with `cargo build --release` \
         (or set PATCHBENCH_WORKER to its path)",
        worker.display()
    ))
}
