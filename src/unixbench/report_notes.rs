//! The headings of the notes patchbench's UnixBench report adds between a block's results and
//! its index (not UnixBench's lines): written by `crate::report::unixbench_text`, skipped by
//! `crate::import`'s UnixBench reader. A note is its heading, indented lines and a blank line.

/// `run --precision`'s section.
pub const PRECISION: &str = "Precision reached (95% two-stage interval of the passes' geometric \
                             mean; within this run only, not between runs):";
/// Warnings about how far a result can be trusted.
pub const WARNINGS: &str = "Warnings (patchbench's, not part of UnixBench's report):";
/// What else used the CPUs during the passes.
pub const NOISE: &str = "Noise during the passes (see `patchbench check`):";

/// What a reader recognises a note heading by: each heading up to its "(", so that the
/// wording inside the parentheses may change (earlier builds wrote "Precision reached (95% CI
/// of the mean pass rate):").
pub fn is_heading(line: &str) -> bool {
    [PRECISION, WARNINGS, NOISE].iter().any(|h| {
        let stem = h.split_inclusive('(').next().unwrap_or(h);
        line.starts_with(stem)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_old_and_new_are_recognised_and_results_are_not() {
        assert!(is_heading(PRECISION) && is_heading(WARNINGS) && is_heading(NOISE));
        assert!(is_heading(
            "Precision reached (95% CI of the mean pass rate):"
        ));
        assert!(!is_heading(
            "Pipe Throughput                        1407124.2 lps   (1.0 s, 6 samples)"
        ));
    }
}
