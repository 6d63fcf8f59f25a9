//! wio as a library: the machines, worlds, snapshots, traces, reports and the rest the
//! `wio` binary is made of (src/main.rs is its command line). The fuzz targets (fuzz/)
//! reach the file parsers through it.

pub mod arch;
pub mod bench;
pub mod builder;
pub mod cli;
pub mod devices;
pub mod engine;
pub mod error;
pub mod explore;
pub mod faults;
pub mod gdb;
pub mod initrd;
pub mod interrupt;
pub mod machine;
pub mod memory;
pub mod pool;
pub mod promises;
pub mod sandbox;
pub mod shrink;
pub mod snapshot;
pub mod summary;
pub mod trace;
pub mod verify;
pub mod world;
