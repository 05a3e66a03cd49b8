//! C Compiler Throughput (`C`: UnixBench's `looper 60 gcc cctest.c`, unixbench.md §5),
//! category Non-Index Benchmarks, no baseline; the test is skipped when `gcc` is not in PATH.
//!
//! The looper (`looper.rs`) runs `gcc cctest.c` in the run's private directory (UnixBench's
//! testdir) again and again: each loop preprocesses, compiles without optimisation, assembles
//! and links one 156-line file into `a.out`, so it measures the compiler driver's processes
//! (cc1, as, collect2, ld) starting and working. All copies share the directory and so the one
//! `a.out`, as UnixBench's copies do; it stays until the private directory is removed (UnixBench
//! deletes `cctest.o` and `a.out` after the test).
//!
//! `cctest.c` is our own text with the shape of UnixBench's (156 lines, 3,584 bytes, one
//! `#include`, a `main` that is never run). UnixBench's relies on implicit function
//! declarations, which gcc 12 warns about on stderr and gcc 14 and later refuse; ours declares
//! what it calls, so it compiles with every gcc, and carries three constructs gcc warns about by
//! default (6 lines of warnings on gcc 12.2), so its stderr is like UnixBench's. UnixBench's Run
//! treats any such line as an error and aborts the whole run; patchbench keeps the score and
//! records the compiler's stderr with the test (JSON `stderr`, a note under the report).
//!
//! Unit: lpm (compilations per minute of wall time). No baseline.

/// The command, as UnixBench's `Run` gives it to looper.
pub const ARGV: &[&str] = &["gcc", "cctest.c"];

/// The file compiled.
pub const CCTEST_C: &str = include_str!("data/cctest.c");

/// Writes `cctest.c` into `dir` (the private directory).
pub fn install(dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::write(dir.join("cctest.c"), CCTEST_C)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cctest_has_unixbenchs_shape() {
        assert_eq!(CCTEST_C.lines().count(), 156);
        assert_eq!(CCTEST_C.len(), 3584);
        let includes = CCTEST_C
            .lines()
            .filter(|l| l.starts_with("#include"))
            .count();
        assert_eq!(includes, 1);
    }
}
