//! Reports of a run: the UnixBench text report and CSV, the test list, compare's formats, the
//! scale plot and the progress line.

pub mod compare;
pub mod list;
pub mod progress;
pub mod scale_svg;
pub mod unixbench_csv;
pub mod unixbench_text;
