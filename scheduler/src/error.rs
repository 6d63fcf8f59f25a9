//! Errors returned by the scheduler.

use thiserror::Error;

/// Everything that can go wrong when using the scheduler.
///
/// Errors are reserved for limits that depend on guest or configuration
/// behaviour; broken internal invariants panic instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum SchedulerError {
    /// The event queue already holds its maximum number of events. The limit
    /// is explicit so that a runaway guest cannot exhaust host memory.
    #[error("event queue is full ({limit} events)")]
    QueueFull {
        /// The limit that was hit (see [`MAX_EVENTS`](crate::MAX_EVENTS)).
        limit: usize,
    },
    /// A restored queue names an event sequence number twice, or one that is
    /// not below the restored next sequence number: the snapshot is inconsistent.
    #[error("restored event queue is inconsistent: sequence {seq} (next sequence {next_seq})")]
    BadRestore {
        /// The offending sequence number.
        seq: u64,
        /// The next sequence number recorded with the queue.
        next_seq: u64,
    },
}
