//! Shell Scripts (`shell1`, `shell8`, `shell16`: UnixBench's `looper 60 multi.sh N`,
//! unixbench.md §4.10).
//!
//! The looper (`looper.rs`) forks and execs `multi.sh N` (a `#!/bin/sh` script, so the
//! kernel's script loader and `/bin/sh` start-up are part of the cost), waits for it and counts
//! one loop.
//! `multi.sh` starts N background `tst.sh` instances and waits for them; each instance sorts
//! `sort.src`, dumps it with `od`, sorts that numerically, and greps "the" through `tee` into
//! `wc`, then removes its files (named with its PID). The loop running at the deadline is not
//! counted, but the copy's time includes waiting for it, as UnixBench's `elapsed` does.
//! `sort.src` is our own text (written by scripts/gen_sort_src.py) with the shape of UnixBench's,
//! which is what sort, od and grep see: 362 lines, 1200 words, 8546 bytes, 35 lines containing
//! "the", 273 distinct lines, line lengths by tens 116, 80, 61, 29, 29, 27, 16, 3, 1 (longest
//! 82), and as many lines of 1 to 7 characters. The pipeline's processes start with SIGPIPE at
//! its default action, as under UnixBench (the worker restores it; Rust ignores it).
//! Unit: lpm (loops per minute of wall time). Baselines: shell1 42.4, shell8 6.0; shell16 has
//! none.

/// The programs the pipelines run (besides `/bin/sh`), which the test needs.
pub const TOOLS: &[&str] = &["/bin/sh", "sort", "od", "grep", "tee", "wc", "rm"];

/// The input every pipeline sorts.
pub const SORT_SRC: &str = include_str!("data/sort.src");

/// `multi.sh N`: N concurrent pipelines, then wait; the statements of UnixBench's multi.sh
/// (the `ID=` line, the loop counter by shell arithmetic, `MULTI_SH_WORK_FACTOR` concatenating
/// that many copies of the input first) behind a comment header of about the size of
/// UnixBench's, which the shell reads on every loop.
pub const MULTI_SH: &str = "#! /bin/sh
###############################################################################
#  patchbench: the shell tests' driver script (unixbench.md 4.10).
#
#  Starts $1 background instances of tst.sh on sort.src (or on a file of
#  MULTI_SH_WORK_FACTOR copies of it) and waits for all of them. patchbench's
#  worker runs it once per loop, as UnixBench's looper runs multi.sh.
#
#  Usage: multi.sh N   (in the test directory; $UB_BINDIR holds tst.sh)
#
###############################################################################
#  Modification Log:
#
###############################################################################
ID=\"patchbench multi.sh (UnixBench 6.0 statements)\";
instance=1
sort_src=sort.src
work_factor=${MULTI_SH_WORK_FACTOR:-1}
if [ $work_factor -gt 1 ]; then
\tinputs=
\tfor i in $(seq $work_factor); do inputs=\"$inputs $sort_src\"; done
\tcat $inputs > sort.src-alt.$$
\tsort_src=sort.src-alt.$$
fi

while [ $instance -le $1 ]; do
\t/bin/sh \"$UB_BINDIR/tst.sh\" $sort_src &
\tinstance=$(($instance + 1))
done
wait

if [ $work_factor -gt 1 ]; then
\trm $sort_src
fi
";

/// `tst.sh INPUT`: one pipeline instance, the statements of UnixBench's tst.sh; `$$` keeps
/// concurrent instances apart.
pub const TST_SH: &str = "#! /bin/sh
###############################################################################
#  patchbench: one shell-test pipeline instance (unixbench.md 4.10).
#
#  Sorts the input, dumps the result with od and sorts that numerically, greps
#  \"the\" through tee into wc, then removes its files. $$ (this shell's pid)
#  keeps concurrent instances apart.
#
#  Usage: /bin/sh tst.sh INPUT   (run by multi.sh)
#
###############################################################################
#  Modification Log:
#
###############################################################################
ID=\"patchbench tst.sh (UnixBench 6.0 statements)\";
sort > sort.$$ < $1
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_src_has_unixbench_properties() {
        let lines: Vec<&str> = SORT_SRC.lines().collect();
        assert_eq!(lines.len(), 362);
        assert!(SORT_SRC.ends_with('\n'));
        assert_eq!(SORT_SRC.split_whitespace().count(), 1200);
        assert_eq!(SORT_SRC.len(), 8546);
        assert_eq!(lines.iter().filter(|l| l.contains("the")).count(), 35);
    }

    #[test]
    fn sort_src_has_unixbench_shape() {
        let lines: Vec<&str> = SORT_SRC.lines().collect();
        let distinct: std::collections::BTreeSet<&str> = lines.iter().copied().collect();
        assert_eq!(distinct.len(), 273);
        let mut by_tens = [0usize; 9];
        for l in &lines {
            by_tens[l.len() / 10] += 1;
        }
        assert_eq!(by_tens, [116, 80, 61, 29, 29, 27, 16, 3, 1]);
        assert_eq!(lines.iter().map(|l| l.len()).max(), Some(82));
        let of_len = |n: usize| lines.iter().filter(|l| l.len() == n).count();
        let short: Vec<usize> = (1..=7).map(of_len).collect();
        assert_eq!(short, [1, 51, 3, 31, 3, 9, 10]);
    }

    #[test]
    fn scripts_carry_unixbench_statements() {
        for line in [
            "instance=1",
            "sort_src=sort.src",
            "work_factor=${MULTI_SH_WORK_FACTOR:-1}",
            "\t/bin/sh \"$UB_BINDIR/tst.sh\" $sort_src &",
            "\tinstance=$(($instance + 1))",
            "wait",
        ] {
            assert!(
                MULTI_SH.lines().any(|l| l == line),
                "multi.sh lacks {line:?}"
            );
        }
        assert!(MULTI_SH.lines().any(|l| l.starts_with("ID=")));
        assert!(TST_SH.lines().any(|l| l.starts_with("ID=")));
        assert!(TST_SH.contains("sort > sort.$$ < $1\n"));
    }
}
