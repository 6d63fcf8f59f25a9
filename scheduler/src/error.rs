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
}
