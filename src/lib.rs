//! patchbench: faithful re-implementations of UnixBench, AIM7 and will-it-scale workloads,
//! a result store, and a statistical base-vs-patched comparison.
//!
//! Layout: `args` (for now: the clap definition, dispatch, value parsers and path checks), `commands` (each command's arguments and
//! implementation), the suites `unixbench` (catalog, workloads, runner, worker), `aim7`,
//! `will_it_scale` and `model`, the shared-memory `counter_harness` that will_it_scale and model
//! run on, `proc` (signals and process limits), `record` (the result model), `report` (every
//! renderer), `store`, `import`, `compare` and `stats`, and shared system bits: `sysinfo`,
//! `fsinfo`, `clock`, `private_dir`, `error`.

pub mod aim7;
pub mod args;
pub mod clock;
pub mod commands;
pub mod compare;
pub mod counter_harness;
pub mod error;
pub mod fsinfo;
pub mod import;
pub mod model;
pub mod private_dir;
pub mod proc;
pub mod record;
pub mod report;
pub mod stats;
pub mod store;
pub mod sysinfo;
pub mod unixbench;
pub mod will_it_scale;
