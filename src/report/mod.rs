//! Reports of a run: the UnixBench text report and CSV, and the test list. (Comparisons have
//! their formats in `crate::compare::format`.)

pub mod check;
pub mod list;
pub mod unixbench_csv;
pub mod unixbench_text;
