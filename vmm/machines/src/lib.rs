//! wio's machines: everything one deterministic machine is made of, from the leaves
//! (trace, memory, the run-loop engine trait, worker pools, the sandbox) through the
//! devices, faults, promises and snapshots every machine shares (`machine/`) to the two
//! architectures (`arch/x86_64` on KVM, `arch/riscv64` on the interpreter; neither
//! imports the other) and the builder that picks one for a run.
//!
//! It knows nothing of worlds (`wio-world`), exploration (`wio-search`) or the command
//! line (the `wio` binary). `error` is the exception that proves the rule: it holds every
//! error type of wio, the upper crates' included, so the exit code of each is decided in
//! one place; those types name no upper crate's code.

pub mod arch;
pub mod builder;
pub mod devices;
pub mod engine;
pub mod error;
pub mod faults;
pub mod gdb;
pub mod hostlink;
pub mod initrd;
pub mod interrupt;
pub mod machine;
pub mod memory;
pub mod pool;
pub mod promises;
pub mod sandbox;
pub mod snapshot;
pub mod summary;
pub mod timeline;
pub mod trace;
