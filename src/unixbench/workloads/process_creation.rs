//! Process Creation (`spawn`, unixbench.md §4.9).
//!
//! Loop: `fork()`; the child leaves at once with `exit(0)`; the parent `wait()`s for it and
//! checks the status. One loop = one fork+exit+wait cycle. Unit: lps over the copy's wall
//! time. Baseline 126 lps.
//!
//! The loop runs in `patchbench-spawn` (src/bin/patchbench-spawn.rs), a `no_std`, libc-only,
//! lazily bound program that the worker execs before the start barrier, because what the test
//! measures depends on the forking program, as it does for UnixBench's 18 KB C program:
//! `fork()` copies the parent's page tables and mappings, and the child's `exit(0)` runs
//! atexit handlers, flushes stdio and runs the loader's destructors for every loaded library,
//! faulting in copy-on-write pages of each (and, lazily bound, resolves `exit` first).
//!
//! Measured on the 2-vCPU VM this was written on (perf software counters, 1-2 s runs, several
//! rounds, the machine busy): page faults per cycle (parent and child together, a count that
//! does not depend on the machine's load) 28.1 here against 28.1 for the C reference of
//! benches/c/spawn.c built as UnixBench builds spawn.c; forking from the 0.6 MB std worker
//! with `_exit(0)`, as before, took 10.1 (19.0 for the C program with `_exit`: the rest is
//! `exit`'s work, the lazy binding adds the GOT write). CPU time per cycle: 136-167 µs here,
//! 140-159 µs C, 101-127 µs for the old std-worker loop, which is why that loop scored 14-19%
//! above UnixBench.

use super::companion;

/// Replaces this process with `patchbench-spawn SECONDS`, which takes over the worker's
/// protocol (READY, the barrier, the result lines); returns only on failure.
pub fn start(seconds: f64) -> std::io::Error {
    match companion::program("patchbench-spawn") {
        Ok(p) => companion::exec(&p, &[format!("{seconds}")]),
        Err(e) => e,
    }
}
