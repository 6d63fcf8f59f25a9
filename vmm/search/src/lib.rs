//! wio's search: exploration of branches from a snapshot or a world (flat, guided,
//! sharded over Slurm, merged), shrinking a failing run's faults to a minimal plan, and
//! verifying a fix against the failing seeds; with the reports each of them writes.
//!
//! It builds on `wio-machines` (machines, snapshots, promises) and `wio-world` (worlds);
//! it knows nothing of the command line, which the `wio` binary parses into the
//! options types here.

#![forbid(unsafe_code)]

pub mod diff;
pub mod explore;
pub mod shrink;
pub mod triage;
pub mod verify;
