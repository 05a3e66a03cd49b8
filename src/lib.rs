//! patchbench: faithful re-implementations of UnixBench, AIM7 and will-it-scale workloads,
//! a result store, and a statistical base-vs-patched comparison.
//!
//! Layout, top to bottom (no module imports from a layer above it; the clap definition and
//! dispatch, `cli`, is in the binary, not here):
//! - `commands`: each command's arguments, checks and what it runs; `args`: value parsers and
//!   path checks they share.
//! - `bisect`: the search for the commit that changed a metric, and its step rule.
//! - the suites: `unixbench` (catalog, workloads, runner, worker, protocol), `aim7`,
//!   `will_it_scale`, `model`, `exec` (programs we did not write: stress-ng, any command),
//!   and `counter_harness`, the shared-memory harness that
//!   will-it-scale and the models run on.
//! - `proc`: the process layer (task group, child start-up, start gate, status, signals,
//!   limits).
//! - `record` (the result model, the domain of its numbers, its sinks, the atomic file
//!   writer), `report` (every renderer, stdout, progress), `store`, `import`, `compare`,
//!   `stats`; `calibrate` (how often `compare` flags a row on real A/A data, resampled).
//! - shared bits: `sysinfo`, `fsinfo`, `clock`, `private_dir`, `progress` (the one progress
//!   line), `error`, `safe_text` (how data strings are shown on a terminal and in text
//!   formats: the one sanitising layer); `emergency`, `out_of_memory` and `remove_tree` (the exit path that
//!   cleans up without allocating, the allocator that takes it when memory runs out, and the
//!   tree removal it uses); and `noise` (the noise sources `check` reports and every measuring
//!   command stores in its fingerprint, and the per-pass monitor); `monitor` (the counters every
//!   measuring command records around each measured unit).
#![warn(
    clippy::undocumented_unsafe_blocks,
    clippy::unwrap_used,
    clippy::expect_used
)]
// Everything written to stdout goes through `report::print`, which turns a closed pipe into an
// error instead of a panic.
#![warn(clippy::print_stdout)]
// Everything written to stderr goes through `safe_text::eprint_line` (or the progress line),
// which shows control characters escaped and keeps a message on one line.
#![warn(clippy::print_stderr)]

pub mod aim7;
pub mod args;
pub mod bisect;
pub mod build;
pub mod calibrate;
pub mod campaign;
pub mod clock;
pub mod commands;
pub mod compare;
pub mod counter_harness;
pub mod emergency;
pub mod error;
pub mod exec;
pub mod fsinfo;
pub mod import;
pub mod model;
pub mod monitor;
pub mod noise;
pub mod out_of_memory;
pub mod perf_events;
pub mod perf_scope;
pub mod private_dir;
pub mod proc;
pub mod proc_stat;
pub mod progress;
pub mod record;
pub mod remove_tree;
pub mod report;
pub mod safe_text;
pub mod stats;
pub mod store;
pub mod sysinfo;
pub mod unixbench;
pub mod will_it_scale;
