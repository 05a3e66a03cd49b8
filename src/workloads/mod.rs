//! The UnixBench workloads, one file each, and the catalogue that names them.

pub mod catalog;
