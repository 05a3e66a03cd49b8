//! Reports: the UnixBench text report and the test list.

pub mod list;
pub mod unixbench_text;
