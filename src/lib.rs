//! patchbench: faithful re-implementations of UnixBench, AIM7 and will-it-scale workloads,
//! a result store, and a statistical base-vs-patched comparison.
//!
//! Layout: `cli` (the clap definition and dispatch), `workloads` (one file per UnixBench
//! workload), `worker` (the per-copy worker process), `runner` (copies, barrier, passes,
//! cleanup, scoring), `result` (the result model), `domain` (what each stored number may
//! be), `report` (text and other formats),
//! `sysinfo` (the system fingerprint), `store` (SQLite store and its commands), `import`,
//! `compare` and `stats` (reading other tools' output, the verdicts), `aim7`, `scale` and
//! `model` (the other commands). Shared by every command that starts processes: `signals`
//! (SIGINT/SIGTERM/SIGHUP without threads), `limits` (process limits checked before
//! starting), `fsinfo` (what filesystem a --dir is on), `clock`.

pub mod aim7;
pub mod cli;
pub mod clock;
pub mod compare;
pub mod domain;
pub mod error;
pub mod fsinfo;
pub mod import;
pub mod limits;
pub mod model;
pub mod private_dir;
pub mod report;
pub mod result;
pub mod runner;
pub mod scale;
pub mod signals;
pub mod stats;
pub mod store;
pub mod sysinfo;
pub mod worker;
pub mod workloads;
