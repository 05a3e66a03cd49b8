//! The commands, one file each with its arguments and what it does: `run`, `list`, `check`,
//! `aim7`, `scale`, `model`, `exec`, the store commands (`runs`, `show`, `export`, `rm`), `import`, `push`,
//! `compare`, `calibrate`, `build` and `builds`, `campaign`, `agent`, `completions` and `man`, and the hidden testing aids. What several share (store options, harness options,
//! the sink set, the fingerprint a measuring command starts with, how a run ends) is in
//! `shared`. The commands validate everything before any work and hand their runs to the
//! harnesses; the harnesses never see a clap type.

pub mod agent;
pub mod aim7;
pub mod bisect;
pub mod build;
pub mod calibrate;
pub mod campaign;
pub mod check;
pub mod compare;
pub mod completions;
pub mod debug_writer;
pub mod exec;
pub mod import;
pub mod list;
pub mod model;
pub mod push;
pub mod run;
pub mod scale;
pub mod shared;
pub mod store;
