//! Shell Scripts (`shell1`, `shell8`, `shell16`: UnixBench's `looper 60 multi.sh N`,
//! unixbench.md §4.10).
//!
//! The looper forks and execs `multi.sh N` (a `#!/bin/sh` script, so the kernel's script
//! loader and `/bin/sh` start-up are part of the cost), waits for it and counts one loop.
//! `multi.sh` starts N background `tst.sh` instances and waits for them; each instance sorts
//! `sort.src`, dumps it with `od`, sorts that numerically, and greps "the" through `tee` into
//! `wc`, then removes its files (named with its PID). The loop running at the deadline is not
//! counted, but the copy's time includes waiting for it, as UnixBench's `elapsed` does.
//! `sort.src` is our own text with UnixBench's properties: 362 lines, 1200 words, 8546 bytes,
//! 35 lines containing "the". Unit: lpm (loops per minute of wall time). Baselines: shell1
//! 42.4, shell8 6.0; shell16 has none.

use super::timer::{os_error, stopped};
use std::ffi::CString;

/// The input every pipeline sorts.
pub const SORT_SRC: &str = include_str!("data/sort.src");

/// `multi.sh N`: N concurrent pipelines, then wait (loop counter by shell arithmetic).
pub const MULTI_SH: &str = "#!/bin/sh
# patchbench: start $1 concurrent instances of tst.sh on sort.src and wait for all of them.
instance=1
while [ $instance -le $1 ]; do
\t/bin/sh \"$UB_BINDIR/tst.sh\" sort.src &
\tinstance=$((instance + 1))
done
wait
";

/// `tst.sh INPUT`: one pipeline instance; `$$` keeps concurrent instances apart.
pub const TST_SH: &str = "# patchbench: one shell pipeline instance (run by multi.sh).
sort < \"$1\" > sort.$$
od sort.$$ | sort -n -k 1 > od.$$
grep the sort.$$ | tee grep.$$ | wc > wc.$$
rm sort.$$ grep.$$ od.$$ wc.$$
";

/// Writes `pgms/multi.sh`, `pgms/tst.sh` and `sort.src` into `dir` (the private directory).
pub fn install(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let pgms = dir.join("pgms");
    std::fs::create_dir_all(&pgms)?;
    std::fs::write(pgms.join("multi.sh"), MULTI_SH)?;
    std::fs::set_permissions(
        pgms.join("multi.sh"),
        std::fs::Permissions::from_mode(0o755),
    )?;
    std::fs::write(pgms.join("tst.sh"), TST_SH)?;
    std::fs::write(dir.join("sort.src"), SORT_SRC)?;
    Ok(())
}

/// The looper: runs `script n` until the stop flag is set; returns the completed loops.
pub fn run(script: &str, n: u32) -> std::io::Result<u64> {
    let path = CString::new(script).map_err(std::io::Error::other)?;
    let arg = CString::new(n.to_string()).map_err(std::io::Error::other)?;
    let argv = [path.as_ptr(), arg.as_ptr(), std::ptr::null()];
    let mut loops = 0;
    while !stopped() {
        // SAFETY: the worker is single-threaded; the child only calls execv and _exit.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(os_error(&format!("fork failed at iteration {loops}")));
        }
        if pid == 0 {
            // SAFETY: argv is NULL-terminated and valid; 99 tells the parent exec failed.
            unsafe {
                libc::execv(path.as_ptr(), argv.as_ptr());
                libc::_exit(99);
            }
        }
        let mut status: libc::c_int = 0;
        // SAFETY: waiting for our own child.
        if unsafe { libc::waitpid(pid, &mut status, 0) } != pid {
            return Err(os_error("waitpid"));
        }
        if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 99 {
            return Err(std::io::Error::other(format!("could not exec {script}")));
        }
        if status != 0 {
            return Err(std::io::Error::other(format!(
                "{script} {n} failed, wait status {status:#x}"
            )));
        }
        if stopped() {
            break; // the loop in progress at the deadline is not counted
        }
        loops += 1;
    }
    Ok(loops)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_src_has_unixbench_properties() {
        assert_eq!(SORT_SRC.lines().count(), 362);
        assert_eq!(SORT_SRC.split_whitespace().count(), 1200);
        assert_eq!(SORT_SRC.len(), 8546);
        assert_eq!(SORT_SRC.lines().filter(|l| l.contains("the")).count(), 35);
    }
}
