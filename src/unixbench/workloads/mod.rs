//! The UnixBench workloads, one file each, and the catalogue that names them.
//! Each workload runs inside a `patchbench-worker` process (see `crate::unixbench::worker`), until the
//! stop flag of `timer` is set.

pub mod companion;
pub mod context_switch;
pub mod dhrystone;
pub mod execl_throughput;
pub mod file_copy;
pub mod pipe_throughput;
pub mod process_creation;
pub mod shell_scripts;
pub mod syscall_overhead;
pub mod timer;
pub mod whetstone;
