//! Why a trace file's hash chain does not verify (`wio verify-trace`).

/// The first line at which a trace's hash chain breaks (lines count from 1).
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// A line is not a JSON object.
    #[error("line {line}: not JSON: {source}")]
    NotJson {
        /// The line.
        line: usize,
        /// What the JSON parser said.
        #[source]
        source: serde_json::Error,
    },
    /// A line has no `prev` hash.
    #[error("line {line}: no prev")]
    NoPrev {
        /// The line.
        line: usize,
    },
    /// The first line of a trace continued from a snapshot carries no SHA-256 as `prev`.
    #[error("line 1: prev is not a SHA-256")]
    StartNotSha,
    /// A line's `prev` is not the hash of the line before it.
    #[error("line {line}: chain broken")]
    ChainBroken {
        /// The line.
        line: usize,
    },
}
