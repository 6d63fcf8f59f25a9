//! `wio-scheduler`: what happens next, and every random choice along the way.
//!
//! The wio hypervisor is deterministic: every guest-visible value is a
//! function of the 64-bit run seed. This crate provides the two building
//! blocks that make that possible:
//!
//! - [`queue`]: an [`EventQueue`] ordered by virtual time and then by
//!   insertion sequence, so simultaneous events always fire in the same order.
//! - [`streams`]: named ChaCha20 random [`Stream`]s derived from the
//!   [`RunSeed`], so that adding or consuming one stream never perturbs another.
//! - [`stream_names`]: the name of every stream wio derives, in one place.
//!
//! It contains no `std::time`, no thread-local RNGs and no hash-map iteration.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod error;
pub mod queue;
pub mod stream_names;
pub mod streams;

pub use error::SchedulerError;
pub use queue::{EventId, EventQueue, ScheduledEvent, MAX_EVENTS};
pub use streams::{RunSeed, SavedStream, Stream, StreamPosition, Streams};
