//! UnixBench: the catalogue of tests, one file per workload, the per-copy worker and the
//! runner that starts the copies, times the passes and scores them.

pub mod catalog;
pub mod protocol;
pub mod report_notes;
pub mod runner;
pub mod shared_count;
pub mod worker;
pub mod workloads;
