//! patchbench: faithful re-implementations of UnixBench, AIM7 and will-it-scale workloads,
//! a result store, and a statistical base-vs-patched comparison.
//!
//! Layout: `cli` (the clap definition and dispatch), `workloads` (one file per UnixBench
//! workload), `worker` (the per-copy worker process), `runner` (copies, barrier, passes,
//! cleanup, scoring), `result` (the result model), `report` (text and other formats),
//! `sysinfo` (the system fingerprint), `store` (SQLite store and its commands), `aim7`,
//! `scale` and `model` (the other commands).

pub mod aim7;
pub mod cli;
pub mod compare;
pub mod error;
pub mod import;
pub mod model;
pub mod report;
pub mod result;
pub mod runner;
pub mod scale;
pub mod stats;
pub mod store;
pub mod sysinfo;
pub mod worker;
pub mod workloads;
