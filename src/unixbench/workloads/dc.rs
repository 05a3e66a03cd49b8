//! Dc: sqrt(2) to 99 decimal places (`dc`: UnixBench's `looper 30 dc < dc.dat`,
//! unixbench.md §5), category Non-Index Benchmarks, no baseline; the test is skipped when `dc`
//! is not in PATH (Debian and Ubuntu package it apart from `bc`).
//!
//! The looper (`looper.rs`) runs `dc` again and again with `dc.dat` on its standard input. As
//! under UnixBench's shell, the file is opened once, before the loop, and every `dc` inherits
//! that one open file with its offset: the first `dc` reads it to the end and computes the root;
//! every later one finds end of file at once and exits. So after the first loop the test
//! measures fork, exec, dc's start-up and exit (as UnixBench issue #8 noted: "it finishes in
//! < 1 ms"), which is what UnixBench's scores of it are.
//!
//! `dc.dat` has the statements of UnixBench's, one to a line: `99`, `k` (scale 99), `2`, `v`
//! (square root), `p` (print), then two bracketed lines of our own text, which dc pushes as
//! strings before it reaches end of file and exits with status 0. (There is no `q`: GNU dc
//! 1.07 exits with status 1 after `q`, which looper takes for a failed command.)
//!
//! Unit: lpm (dc runs per minute of wall time). No baseline.

/// The command, as UnixBench's `Run` gives it to looper.
pub const ARGV: &[&str] = &["dc"];

/// The file on the command's standard input.
pub const INPUT: &str = "dc.dat";

/// dc's program: sqrt(2) to 99 places, printed; then two strings, and end of file.
pub const DC_DAT: &str = "99
k
2
v
p
[ the square root of two to 99 decimal places: k sets the scale, v takes the root ]
[ patchbench's dc.dat for UnixBench's dc test, pushed as a string like the line above ]
";

/// Writes `dc.dat` into `dir` (the private directory).
pub fn install(dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::write(dir.join(INPUT), DC_DAT)
}

#[cfg(test)]
mod tests {
    #[test]
    fn dc_dat_has_unixbenchs_statements() {
        let lines: Vec<&str> = super::DC_DAT.lines().collect();
        assert_eq!(lines[..5], ["99", "k", "2", "v", "p"]);
        assert_eq!(lines.len(), 7);
        assert!(lines[5..]
            .iter()
            .all(|l| l.starts_with('[') && l.ends_with(']')));
    }
}
